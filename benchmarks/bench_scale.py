"""Benchmark: scale-out throughput, resources completed per second, by engine count.

A flat stack of N OS::Heat::RandomString (the template of ../shared/bench/bench_stack.py,
whose HeatAPI sends the requests) is created through the API and deleted again, on
PostgreSQL with 1, 2 and 3 ``kiln engine`` processes (``kiln.testing.cluster``: one
``kiln api``, the sandbox, the real RabbitMQ) and on ``kiln all`` (SQLite, embedded).
Each configuration first creates and deletes a warm-up stack, so process start-up and
first imports are not counted. Timed: from the create (delete) request until the stack's
row says CREATE_COMPLETE (DELETE_COMPLETE), polled from the database every 50 ms. Also
measured: the CPU time every process on the machine used during each create, by kind
(engines, PostgreSQL, ...), and how the tasks were spread over the engines (from
``node_task.lease_owner``). Printed side by side with real Heat's figures
(../shared/bench/anchors.md); written to results/scale.json.

Engine workers: 4 per engine by default, the best measured on the 2-core machine the
project runs on (2 to 8 are about equal; 16, 32 and 64 are slower and slower, because
every completion of a traversal waits for the same row, and the threads of one process
for the GIL). A cloud with latency needs many more (``[engine] workers`` is 64).

``--sql-stats DIR`` counts every engine's SQL statements and commits by thread, with
their wall time; ``--profile DIR`` also runs the engines under yappi (CPU clock, all
threads). Both through a ``sitecustomize`` put on the engines' PYTHONPATH (one JSON and
one pstat file per engine), summed up when the runs are done.

Run: make bench   (or .venv/bin/python benchmarks/bench_scale.py [--sizes 250,500,1000]
[--engines 1,2,3] [--no-sqlite] [--repeat 3] [--engine-workers 4] [--sql-stats DIR])
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import pathlib
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import scale_probes
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
TARGET_RES_S = 200.0  # at N=1000 with 3 engines on PostgreSQL (the target)
#: real Heat 27 (MariaDB, RabbitMQ, 4 engine workers), anchors.md: N -> seconds (stock at
#: N=1000: about 1000 s, not run; the delete of 1000 without the sleep never finished)
HEAT_CREATE = {
    "stock": {10: 9.3, 100: 100.7, 500: 505.0, 1000: 1000.0},
    "no 1 s sleep": {10: 0.52, 100: 10.3, 500: 89.3, 1000: 188.0},
}
HEAT_DELETE = {
    "stock": {10: 9.2, 100: 99.7, 500: 502.0},
    "no 1 s sleep": {10: 0.46, 100: 8.9, 500: 81.5},
}


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
            if row.status != "COMPLETE":
                status += f": {row.status_reason}"
            return status, elapsed
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


def run_once(target: Target, api: Any, n: int, name: str) -> dict[str, Any]:
    """Create and delete one N-resource stack; the timings and the work's spread."""
    load = os.getloadavg()[0]
    template = bench_stack.random_template(n)
    cpu = scale_probes.cpu_by_process_kind()
    start = time.monotonic()
    created = api.create(name, template)
    accept = time.monotonic() - start
    stack_id = created.json()["stack"]["id"]
    status, create_s = _wait(target, stack_id, start)
    create_cpu = scale_probes.cpu_used(cpu, scale_probes.cpu_by_process_kind(), n)
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


def cpu_split(runs: list[dict[str, Any]], n: int) -> dict[str, float]:
    """Median create CPU ms per resource: the engines (or ``kiln all``), PostgreSQL, the
    rest (API, sandbox, RabbitMQ, this client, anything else running)."""
    split: dict[str, list[float]] = {"engines": [], "postgresql": [], "rest": []}
    for run in (r for r in runs if r["n"] == n):
        used = run["create_cpu_ms_per_resource"]
        engines = used.get("kiln engine", 0.0) + used.get("kiln all", 0.0)
        split["engines"].append(engines)
        split["postgresql"].append(used.get("postgresql", 0.0))
        split["rest"].append(sum(used.values()) - engines - used.get("postgresql", 0.0))
    return {k: statistics.median(v) for k, v in split.items() if v}


def summary(targets: list[Target], sizes: list[int]) -> dict[str, Any]:
    """Medians by configuration and N, for the results file and the tables."""
    found: dict[str, Any] = {}
    for target in targets:
        rows = {}
        for n in sizes:
            create, delete = (
                median_of(target.runs, n, "create_s"),
                median_of(target.runs, n, "delete_s"),
            )
            if create is None or delete is None:
                continue
            rows[str(n)] = {
                "create_s": round(create, 3),
                "create_res_per_s": round(n / create, 1),
                "create_ms_per_res": round(create / n * 1000, 2),
                "delete_s": round(delete, 3),
                "delete_res_per_s": round(n / delete, 1),
                "create_cpu_ms_per_res": {
                    k: round(v, 2) for k, v in cpu_split(target.runs, n).items()
                },
            }
        found[target.label] = rows
    return found


def report(targets: list[Target], sizes: list[int], workers: int) -> str:
    medians = summary(targets, sizes)
    lines = [
        "flat stack of N OS::Heat::RandomString through the API, median; "
        f"{workers} worker threads per engine; cell: resources/s (ms per resource)",
    ]
    for what, heat in (("create", HEAT_CREATE), ("delete", HEAT_DELETE)):
        lines += ["", f"{what:<30}" + "".join(f"{'N=' + str(n):>18}" for n in sizes)]
        for label, rows in medians.items():
            cells = [
                f"{rows[str(n)][what + '_res_per_s']:.1f} "
                f"({rows[str(n)][what + '_s'] / n * 1000:.2f})"
                if str(n) in rows
                else "-"
                for n in sizes
            ]
            lines.append(f"{label:<30}" + "".join(f"{c:>18}" for c in cells))
        for variant, figures in heat.items():
            cells = [
                f"{n / figures[n]:.1f} ({figures[n] / n * 1000:.0f})" if n in figures else "-"
                for n in sizes
            ]
            lines.append(f"{'real Heat, ' + variant:<30}" + "".join(f"{c:>18}" for c in cells))
    largest = max(sizes)
    cores = os.cpu_count() or 1
    lines += [
        "",
        f"CPU ms per created resource at N={largest}, every process on the machine; the rates "
        f"that allows with all {cores} cores busy, and with every engine's GIL busy:",
    ]
    for target in targets:
        cpu = medians[target.label].get(str(largest), {}).get("create_cpu_ms_per_res")
        if not cpu or not cpu["engines"]:
            continue
        total = sum(cpu.values())
        all_cores, gils = cores * 1000 / total, target.engines * 1000 / cpu["engines"]
        lines.append(
            f"  {target.label:<26} engines {cpu['engines']:5.2f}  postgresql "
            f"{cpu['postgresql']:5.2f}  rest {cpu['rest']:4.2f}  = {total:5.2f} ms:  "
            f"{all_cores:4.0f} res/s, {gils:4.0f} res/s"
        )
    lines += ["", "tasks per engine (create, each run):"]
    for target in targets:
        if target.engines > 1:
            for n in sizes:
                spread = [
                    sorted(r["tasks_per_engine"].values(), reverse=True)
                    for r in target.runs
                    if r["n"] == n
                ]
                lines.append(f"  {target.label:<28} N={n:<5} {spread}")
    three = medians.get("postgresql, 3 engines", {}).get("1000")
    if three is not None:
        verdict = "met" if three["create_res_per_s"] >= TARGET_RES_S else "NOT met"
        lines.append(
            f"target: >= {TARGET_RES_S:.0f} res/s at N=1000 with 3 engines on PostgreSQL: "
            f"{three['create_res_per_s']:.1f} res/s, {verdict}"
        )
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    # openstacksdk and friends warn about their own internals
    warnings.simplefilter("ignore", DeprecationWarning)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=_sizes, default=_sizes("250,500,1000"))
    parser.add_argument("--engines", type=_sizes, default=_sizes("1,2,3"))
    parser.add_argument("--no-sqlite", action="store_true", help="skip kiln all on SQLite")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (median)")
    parser.add_argument(
        "--engine-workers", type=int, default=4, help="worker threads per engine process"
    )
    parser.add_argument(
        "--sql-stats", type=pathlib.Path, help="count the engines' SQL; files go here"
    )
    parser.add_argument(
        "--profile", type=pathlib.Path, help="as --sql-stats, and profile them with yappi"
    )
    parser.add_argument("--no-save", action="store_true", help=f"do not write {RESULTS.name}")
    args = parser.parse_args()
    began = time.monotonic()
    max_n = max(args.sizes)
    targets: list[Target] = []

    def log(text: str) -> None:
        print(text, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        stats_dir = args.profile or args.sql_stats
        if stats_dir:
            scale_probes.install(work, stats_dir, cpu_profile=bool(args.profile))
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
            "heat": {"create_s": HEAT_CREATE, "delete_s": HEAT_DELETE},
            "medians": summary(targets, args.sizes),
            "configurations": [
                {"label": t.label, "engines": t.engines, "workers": t.workers, "runs": t.runs}
                for t in targets
            ],
        }
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    if stats_dir:
        warm_ups = len(targets) * WARM_UP_N
        scale_probes.print_profiles(
            stats_dir, warm_ups + sum(args.sizes) * args.repeat * len(targets)
        )


if __name__ == "__main__":
    main()
