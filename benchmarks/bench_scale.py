"""Benchmark: scale-out throughput, resources completed per second, by engine count.

A flat stack of N OS::Heat::RandomString (the template of ../shared/bench/bench_stack.py)
is created through the API and deleted again, on PostgreSQL with 1, 2 and 3 ``kiln
engine`` processes (``kiln.testing.cluster``: one ``kiln api``, the sandbox, the real
RabbitMQ) and on ``kiln all`` (SQLite, embedded). Each configuration runs once a warm-up
stack first, so process start-up and first imports are not counted. Timed: from the
create (delete) request until the stack's row says CREATE_COMPLETE (DELETE_COMPLETE),
polled from the database every 50 ms. Printed side by side with real Heat's figures
(../shared/bench/anchors.md), with how the tasks were spread over the engines (from
``node_task.lease_owner``); written to results/scale.json.

``--profile DIR`` runs every engine under yappi (CPU clock, all threads) through a
``sitecustomize`` put on the engines' PYTHONPATH, and saves one pstat file per engine.

Run: make bench   (or .venv/bin/python benchmarks/bench_scale.py [--sizes 250,500,1000]
[--engines 1,2,3] [--no-sqlite] [--repeat 2] [--engine-workers 16])
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import pathlib
import pstats
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from kiln.testing.cluster import Cluster, fresh_database
from kiln.testing.kiln_process import start_server

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH_STACK = ROOT.parent / "shared" / "bench" / "bench_stack.py"
RESULTS = ROOT / "benchmarks" / "results" / "scale.json"
POLL_S = 0.05
WARM_UP_N = 60
TARGET_RES_S = 200.0
#: real Heat 27 (MariaDB, RabbitMQ, 4 engine workers), anchors.md: N -> seconds
HEAT_CREATE = {"stock": {500: 505.0, 1000: 1000.0}, "no 1 s sleep": {500: 89.3, 1000: 188.0}}
HEAT_DELETE = {"stock": {500: 502.0}, "no 1 s sleep": {500: 81.5}}

#: yappi in every ``kiln engine`` / ``kiln all`` started while KILN_BENCH_PROFILE is set
SITECUSTOMIZE = """\
import os, sys
_dir = os.environ.get("KILN_BENCH_PROFILE")
if _dir and sys.argv[1:2] in (["engine"], ["all"]):
    import atexit, yappi
    yappi.set_clock_type("cpu")
    yappi.start(builtins=False)
    def _save():
        yappi.stop()
        yappi.get_func_stats().save(os.path.join(_dir, f"{sys.argv[1]}-{os.getpid()}.pstat"),
                                    type="pstat")
    atexit.register(_save)
"""


def _load_bench_stack() -> Any:
    """The shared benchmark client (its HeatAPI and the RandomString template)."""
    spec = importlib.util.spec_from_file_location("bench_stack", BENCH_STACK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_stack = _load_bench_stack()


@dataclass
class Target:
    """One running configuration: where to send requests, where to look for status."""

    label: str
    url: str  # .../v1/<project id>
    token: str
    db: sa.Engine
    engines: int
    workers: int
    runs: list[dict[str, Any]] = field(default_factory=list)


def _token(auth: dict[str, str]) -> tuple[str, str]:
    plugin = v3.Password(
        auth_url=auth["auth_url"],
        username=auth["username"],
        password=auth["password"],
        project_name=auth["project_name"],
        user_domain_id="default",
        project_domain_id="default",
    )
    session = ks_session.Session(auth=plugin)
    return session.get_token(), session.get_project_id()


@contextlib.contextmanager
def postgresql(work: pathlib.Path, engines: int, workers: int, max_n: int) -> Iterator[Target]:
    settings = {"DEFAULT": {"max_resources_per_stack": max(1000, max_n)}}
    with fresh_database("postgresql", work) as url:
        cluster = Cluster(
            work, url, apis=1, engines=engines, engine_workers=workers, settings=settings
        ).start()
        db = sa.create_engine(url, pool_size=1)
        try:
            token, project = _token(cluster.auth())
            label = f"postgresql, {engines} engine{'s' if engines > 1 else ''}"
            yield Target(label, f"{cluster.api_url()}/v1/{project}", token, db, engines, workers)
        finally:
            db.dispose()
            cluster.stop()


@contextlib.contextmanager
def sqlite_embedded(work: pathlib.Path, workers: int, max_n: int) -> Iterator[Target]:
    if max_n > 1000:
        raise SystemExit("kiln all allows 1000 resources per stack: use sizes <= 1000")
    work.mkdir(parents=True, exist_ok=True)
    server = start_server(work, "--workers", str(workers))
    db = sa.create_engine(f"sqlite:///{server.data_dir / 'kiln.db'}", pool_size=1)
    try:
        auth = dict(server.cloud("kiln-demo")["auth"], auth_url=server.auth_url)
        token, project = _token(auth)
        yield Target("sqlite, kiln all", f"{server.api_url}/v1/{project}", token, db, 1, workers)
    finally:
        db.dispose()
        server.stop()


def _row(db: sa.Engine, query: str, **params: Any) -> Any:
    with db.connect() as conn:
        return conn.execute(sa.text(query), params).first()


def _wait(target: Target, stack_id: str, start: float, timeout: float = 900) -> tuple[str, float]:
    query = "SELECT action, status, status_reason FROM stack WHERE id = :id"
    while True:
        row = _row(target.db, query, id=stack_id)
        elapsed = time.monotonic() - start
        if row is not None and row.status != "IN_PROGRESS":
            status = f"{row.action}_{row.status}"
            return (status if row.status == "COMPLETE" else f"{status}: {row.status_reason}"), elapsed
        if elapsed > timeout:
            return "client timeout", elapsed
        time.sleep(POLL_S)


def _spread(target: Target, traversal_id: str) -> dict[str, int]:
    with target.db.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT lease_owner, COUNT(*) AS n FROM node_task WHERE traversal_id = :t "
                "GROUP BY lease_owner ORDER BY lease_owner"
            ),
            {"t": traversal_id},
        ).all()
    return {str(r.lease_owner): int(r.n) for r in rows}


def cpu_by_process_kind() -> dict[str, float]:
    """CPU seconds used so far by every process on the machine, summed by kind."""
    tick = os.sysconf("SC_CLK_TCK")
    totals: dict[str, float] = {}
    for proc in pathlib.Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text()
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        kind = _kind(stat[stat.index("(") + 1 : stat.rindex(")")], argv, int(proc.name))
        totals[kind] = totals.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return totals


def _kind(comm: str, argv: list[bytes], pid: int) -> str:
    if pid == os.getpid():
        return "client"
    if len(argv) > 2 and argv[1].endswith(b"/kiln"):
        return f"kiln {argv[2].decode()}"
    if comm.startswith("postgres"):
        return "postgresql"
    if comm.startswith("beam"):
        return "rabbitmq"
    return "other"


def _cpu_used(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    """CPU milliseconds per resource, by process kind."""
    return {
        k: round((after[k] - before.get(k, 0.0)) / n * 1000, 3)
        for k in sorted(after)
        if after[k] - before.get(k, 0.0) > 0
    }


def run_once(target: Target, api: Any, n: int, name: str) -> dict[str, Any]:
    """Create and delete one N-resource stack; the timings and the work's spread."""
    load = os.getloadavg()[0]
    template = bench_stack.random_template(n)
    cpu = cpu_by_process_kind()
    start = time.monotonic()
    created = api.create(name, template)
    accept = time.monotonic() - start
    stack_id = created.json()["stack"]["id"]
    status, create_s = _wait(target, stack_id, start)
    create_cpu = _cpu_used(cpu, cpu_by_process_kind(), n)
    if status != "CREATE_COMPLETE":
        raise SystemExit(f"{target.label} N={n}: {status}")
    traversal = _row(
        target.db, "SELECT current_traversal_id FROM stack WHERE id = :id", id=stack_id
    ).current_traversal_id
    spread = _spread(target, traversal)
    start = time.monotonic()
    api.delete(name, stack_id)
    deleted, delete_s = _wait(target, stack_id, start)
    if deleted != "DELETE_COMPLETE":
        raise SystemExit(f"{target.label} N={n} delete: {deleted}")
    return {
        "n": n,
        "create_s": round(create_s, 3),
        "accept_s": round(accept, 3),
        "delete_s": round(delete_s, 3),
        "tasks_per_engine": spread,
        "create_cpu_ms_per_resource": create_cpu,
        "loadavg_before": load,
    }


def measure(target: Target, sizes: list[int], repeat: int, log: Callable[[str], None]) -> None:
    api = bench_stack.HeatAPI(target.url, target.token, timeout=600)
    run_once(target, api, WARM_UP_N, "warm-up")
    for n in sizes:
        for i in range(repeat):
            run = run_once(target, api, n, f"scale-{n}-{i}")
            target.runs.append(run)
            log(
                f"  {target.label:<24} N={n:<5} create {run['create_s']:7.2f} s "
                f"({n / run['create_s']:6.1f} res/s, POST {run['accept_s']:.2f} s)  "
                f"delete {run['delete_s']:6.2f} s  load {run['loadavg_before']:.1f}  "
                f"tasks/engine {sorted(run['tasks_per_engine'].values(), reverse=True)}"
            )
            cpu = run["create_cpu_ms_per_resource"]
            log(f"    create CPU ms/resource: {', '.join(f'{k} {v:.2f}' for k, v in cpu.items())}")


def median_of(runs: list[dict[str, Any]], n: int, key: str) -> float | None:
    values = [r[key] for r in runs if r["n"] == n]
    return statistics.median(values) if values else None


def report(targets: list[Target], sizes: list[int], workers: int) -> str:
    lines = [
        f"flat stack of N OS::Heat::RandomString, via the API; median; engine workers "
        f"{workers}; cell = resources/s (ms per resource)",
    ]
    for what, key, heat in (("create", "create_s", HEAT_CREATE), ("delete", "delete_s", HEAT_DELETE)):
        lines.append("")
        lines.append(f"{what:<30}" + "".join(f"{'N=' + str(n):>20}" for n in sizes))
        for target in targets:
            cells = []
            for n in sizes:
                seconds = median_of(target.runs, n, key)
                cells.append("-" if seconds is None else f"{n / seconds:.1f} ({seconds / n * 1000:.2f})")
            lines.append(f"{target.label:<30}" + "".join(f"{c:>20}" for c in cells))
        for variant, figures in heat.items():
            cells = [
                f"{n / figures[n]:.1f} ({figures[n] / n * 1000:.0f})" if n in figures else "-"
                for n in sizes
            ]
            lines.append(f"{'real Heat, ' + variant:<30}" + "".join(f"{c:>20}" for c in cells))
    lines.append("")
    lines.append("tasks per engine (create, last run of each N):")
    for target in targets:
        if target.engines < 2:
            continue
        for n in sizes:
            last = [r for r in target.runs if r["n"] == n][-1]
            counts = sorted(last["tasks_per_engine"].values(), reverse=True)
            lines.append(f"  {target.label:<24} N={n:<5} {counts}")
    best = next((t for t in targets if t.label == "postgresql, 3 engines"), None)
    if best is not None and 1000 in sizes:
        seconds = median_of(best.runs, 1000, "create_s")
        assert seconds is not None
        verdict = "met" if 1000 / seconds >= TARGET_RES_S else "NOT met"
        lines.append(
            f"target >= {TARGET_RES_S:.0f} res/s at N=1000 with 3 engines on PostgreSQL: "
            f"{1000 / seconds:.1f} res/s, {verdict}"
        )
    return "\n".join(lines)


def print_profiles(directory: pathlib.Path, top: int = 25) -> None:
    files = sorted(directory.glob("*.pstat"))
    if not files:
        print(f"no profiles in {directory}")
        return
    stats = pstats.Stats(str(files[0]))
    for extra in files[1:]:
        stats.add(str(extra))
    print(f"\nyappi CPU profile of {len(files)} engine process(es), by own time:")
    stats.sort_stats("tottime").print_stats(top)
    print("by cumulative time:")
    stats.sort_stats("cumulative").print_stats(top)


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    # openstacksdk and friends warn about their own internals
    warnings.simplefilter("ignore", DeprecationWarning)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=_sizes("250,500,1000"))
    parser.add_argument("--engines", type=_sizes, default=_sizes("1,2,3"))
    parser.add_argument("--no-sqlite", action="store_true", help="skip kiln all on SQLite")
    parser.add_argument("--repeat", type=int, default=2, help="runs per size (median)")
    parser.add_argument(
        "--engine-workers", type=int, default=16, help="worker threads per engine process"
    )
    parser.add_argument("--profile", type=pathlib.Path, help="yappi pstat files go here")
    parser.add_argument("--no-save", action="store_true", help=f"do not write {RESULTS.name}")
    args = parser.parse_args()
    began = time.monotonic()
    max_n = max(args.sizes)
    targets: list[Target] = []

    def log(text: str) -> None:
        print(text, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
            (work / "sitecustomize.py").write_text(SITECUSTOMIZE)
            os.environ["KILN_BENCH_PROFILE"] = str(args.profile.resolve())
            os.environ["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(work), os.environ.get("PYTHONPATH")) if p
            )
        configs: list[Callable[[], contextlib.AbstractContextManager[Target]]] = [
            (lambda k=k: postgresql(work / f"pg-{k}", k, args.engine_workers, max_n))
            for k in args.engines
        ]
        if not args.no_sqlite:
            configs.append(lambda: sqlite_embedded(work / "sqlite", args.engine_workers, max_n))
        for config in configs:
            with config() as target:
                log(f"{target.label}: {target.workers} workers per engine")
                measure(target, args.sizes, args.repeat, log)
                targets.append(target)
    elapsed = time.monotonic() - began
    text = report(targets, args.sizes, args.engine_workers)
    print()
    print(text)
    print(f"whole benchmark: {elapsed:.0f} s")
    if not args.no_save:
        RESULTS.parent.mkdir(exist_ok=True)
        results = {
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - elapsed)),
            "engine_workers": args.engine_workers,
            "sizes": args.sizes,
            "repeat": args.repeat,
            "cpus": os.cpu_count(),
            "seconds": round(elapsed, 1),
            "configurations": [
                {"label": t.label, "engines": t.engines, "workers": t.workers, "runs": t.runs}
                for t in targets
            ],
        }
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    if args.profile:
        print_profiles(args.profile)


if __name__ == "__main__":
    sys.exit(main())
