"""Benchmark: the engine in-process on SQLite, with database statements per resource.

Cases (issue: the convergence engine, section 7), each on a fresh database:
create and delete of N independent OS::Heat::RandomString, a chain of N (each
depends on the previous), N OS::Heat::TestResource waiting 1 s on create, and
an update that changes half of a 1000-resource stack. Real clock; one engine
process with a pool of worker threads. Real Heat's figures from
../shared/bench/anchors.md are printed beside ours.

Run: make bench   (or .venv/bin/python benchmarks/bench_engine.py [--quick])
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kiln.cli.runtime import configure_process
from kiln.core.clock import SystemClock
from kiln.db.counting import count_statements
from kiln.db.engine import create_engine
from kiln.db.migrate import upgrade
from kiln.engine.service import Caller, StackRequest, StackService
from kiln.engine.steps import EngineDeps
from kiln.engine.worker import EngineRuntime, Notifier
from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.template.loader import load_template

CALLER = Caller("bench")
# Real Heat (stock / without its 1 s leaf sleep), seconds: anchors.md.
HEAT = {
    ("create", 100): "100.7 / 10.3",
    ("create", 1000): "~1000 / 188",
    ("delete", 100): "99.7 / 8.9",
    ("chain", 100): "7.9 / 5.5",
    ("wait", 100): "102.7 / 6.9",
    ("wait", 1000): "- / -",
}


def random_strings(n: int, chain: bool = False, salt: str = "") -> str:
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    for i in range(n):
        lines.append(f"  r{i}:")
        lines.append("    type: OS::Heat::RandomString")
        lines.append(f"    properties: {{length: 16, salt: '{salt if i % 2 else ''}'}}")
        if chain and i:
            lines.append(f"    depends_on: r{i - 1}")
    return "\n".join(lines) + "\n"


def waiting(n: int) -> str:
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    for i in range(n):
        lines.append(f"  t{i}:")
        lines.append("    type: OS::Heat::TestResource")
        lines.append("    properties: {action_wait_secs: {create: 1}}")
    return "\n".join(lines) + "\n"


@dataclass
class Bench:
    service: StackService
    runtime: EngineRuntime
    deps: EngineDeps

    def wait_for(self, stack_id: str, timeout: float = 600) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stack = self.service.get_stack(stack_id)
            if stack.status != "IN_PROGRESS":
                return f"{stack.action}_{stack.status}"
            time.sleep(0.01)
        raise SystemExit(f"stack {stack_id} did not finish in {timeout} s")


def make_bench(directory: pathlib.Path, threads: int) -> Bench:
    db = create_engine(f"sqlite:///{directory / 'kiln.db'}")
    upgrade(db)
    registry = PluginRegistry.discover()
    deps = EngineDeps(
        db=db,
        registry=registry,
        custom=registry.custom_constraints(CustomConstraints.offline()),
        clock=SystemClock(),
        engine_id=f"bench-{uuid.uuid4()}",
    )
    notifier = Notifier()
    runtime = EngineRuntime(deps, threads=threads, notifier=notifier)
    service = StackService(deps, wake=notifier.notify)
    runtime.start()
    return Bench(service, runtime, deps)


def measure(bench: Bench, action: Callable[[], str]) -> tuple[float, int, str]:
    with count_statements(bench.deps.db) as counter:
        start = time.perf_counter()
        outcome = action()
        seconds = time.perf_counter() - start
    return seconds, counter.count, outcome


def run_case(
    name: str, n: int, threads: int, quick: bool
) -> list[tuple[str, int, float, int, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bench = make_bench(pathlib.Path(tmp), threads)
        try:
            if name in ("create", "chain"):
                text = random_strings(n, chain=name == "chain")
                template = load_template(text, max_size=10**8).data
                box: dict[str, str] = {}

                def create() -> str:
                    box["id"] = bench.service.create_stack(
                        CALLER, StackRequest(name="bench", template=template)
                    )
                    return bench.wait_for(box["id"])

                rows.append((name, n, *measure(bench, create)))
                if name == "create":

                    def delete() -> str:
                        bench.service.delete_stack(CALLER, box["id"])
                        return bench.wait_for(box["id"])

                    rows.append(("delete", n, *measure(bench, delete)))
                    if n == 1000 and not quick:
                        rows.append(update_half(bench, n))
            elif name == "wait":
                template = load_template(waiting(n), max_size=10**8).data

                def create_wait() -> str:
                    sid = bench.service.create_stack(
                        CALLER, StackRequest(name="wait", template=template)
                    )
                    return bench.wait_for(sid)

                rows.append((name, n, *measure(bench, create_wait)))
        finally:
            bench.runtime.stop()
    return rows


def update_half(bench: Bench, n: int) -> tuple[str, int, float, int, str]:
    template = load_template(random_strings(n), max_size=10**8).data
    sid = bench.service.create_stack(CALLER, StackRequest(name="upd", template=template))
    bench.wait_for(sid)
    changed = load_template(random_strings(n, salt="x"), max_size=10**8).data

    def update() -> str:
        bench.service.update_stack(CALLER, sid, StackRequest(name="upd", template=changed))
        return bench.wait_for(sid)

    return ("update-half", n, *measure(bench, update))


def main() -> None:
    configure_process()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N=100 only")
    parser.add_argument("--threads", type=int, default=4, help="worker threads")
    args = parser.parse_args()
    sizes = (100,) if args.quick else (100, 1000)
    results = []
    for n in sizes:
        results += run_case("create", n, args.threads, args.quick)
        results += run_case("wait", n, args.threads, args.quick)
    results += run_case("chain", 100, args.threads, args.quick)
    print(
        "engine in-process, SQLite, real clock "
        f"({args.threads} worker threads); heat = stock / without its 1 s sleep"
    )
    print(
        f"{'case':<12} {'N':>5} {'seconds':>9} {'res/s':>8} {'stmts/res':>9} {'outcome':<18} heat"
    )
    per_resource = {}
    for case, n, seconds, statements, outcome in results:
        heat = HEAT.get((case, n), "-")
        print(
            f"{case:<12} {n:>5} {seconds:>9.3f} {n / seconds:>8.1f} "
            f"{statements / n:>9.1f} {outcome:<18} {heat}"
        )
        per_resource[(case, n)] = seconds / n
    if ("create", 100) in per_resource and ("create", 1000) in per_resource:
        ratio = per_resource[("create", 1000)] / per_resource[("create", 100)]
        print(f"per-resource time create N=1000 / N=100: {ratio:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
