"""Probes for bench_scale.py: CPU time by process kind, and SQL counts and a CPU profile
from inside the engine processes (a ``sitecustomize`` on their PYTHONPATH).

Benchmark support only; nothing here is imported by Kiln.
"""

from __future__ import annotations

import json
import os
import pathlib
import pstats

#: In every ``kiln engine`` / ``kiln all`` started with KILN_BENCH_PROFILE set: a count of
#: SQL statements and commits by thread and text, with their wall time, and with
#: KILN_BENCH_YAPPI=1 yappi (CPU clock, all threads); saved at exit into that directory.
SITECUSTOMIZE = """\
import os, sys
_dir = os.environ.get("KILN_BENCH_PROFILE")
if _dir and sys.argv[1:2] in (["engine"], ["all"]):
    import atexit, json, threading, time, yappi
    from sqlalchemy import event
    from sqlalchemy.engine import Engine
    _cpu = os.environ.get("KILN_BENCH_YAPPI") == "1"
    if _cpu:
        yappi.set_clock_type("cpu")
        yappi.start(builtins=False)
    _counts, _lock, _local = {}, threading.Lock(), threading.local()

    def _add(text, seconds):
        role = threading.current_thread().name.rstrip("0123456789")
        key = role + " | " + " ".join(text.split())[:110]
        with _lock:
            n, total = _counts.get(key, (0, 0.0))
            _counts[key] = (n + 1, total + seconds)

    @event.listens_for(Engine, "before_cursor_execute")
    def _before(conn, cursor, statement, parameters, context, executemany):
        _local.start = time.perf_counter()

    @event.listens_for(Engine, "after_cursor_execute")
    def _after(conn, cursor, statement, parameters, context, executemany):
        _add(statement, time.perf_counter() - _local.start)

    @event.listens_for(Engine, "commit")
    def _commit(conn):
        _add("COMMIT", 0.0)

    def _save():
        base = os.path.join(_dir, f"{sys.argv[1]}-{os.getpid()}")
        if _cpu:
            yappi.stop()
            yappi.get_func_stats().save(base + ".pstat", type="pstat")
        with open(base + ".sql.json", "w") as out:
            json.dump(_counts, out)
    atexit.register(_save)
"""


def install(work: pathlib.Path, directory: pathlib.Path, *, cpu_profile: bool) -> None:
    """Make every ``kiln engine`` / ``kiln all`` started from now on count its SQL (and with
    ``cpu_profile`` run under yappi), saving into ``directory`` when it exits."""
    directory.mkdir(parents=True, exist_ok=True)
    (work / "sitecustomize.py").write_text(SITECUSTOMIZE)
    os.environ["KILN_BENCH_PROFILE"] = str(directory.resolve())
    os.environ["KILN_BENCH_YAPPI"] = "1" if cpu_profile else "0"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(work), os.environ.get("PYTHONPATH")) if p
    )


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
        # utime, stime, and those of exited children waited for: the postmaster's are the
        # backends that closed during the run
        used = sum(int(v) for v in fields[11:15])
        totals[kind] = totals.get(kind, 0.0) + used / tick
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


def cpu_used(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    """CPU milliseconds per resource, by process kind."""
    return {
        k: round((after[k] - before.get(k, 0.0)) / n * 1000, 3)
        for k in sorted(after)
        if after[k] - before.get(k, 0.0) > 0
    }


def print_profiles(directory: pathlib.Path, resources: int, top: int = 25) -> None:
    """The engines' SQL per resource (create and delete) and their merged CPU profile."""
    statements: dict[str, list[float]] = {}
    for path in directory.glob("*.sql.json"):
        for key, (count, seconds) in json.loads(path.read_text()).items():
            entry = statements.setdefault(key, [0, 0.0])
            entry[0] += count
            entry[1] += seconds
    print(f"\nSQL of the engines per resource ({resources} created and deleted), by thread:")
    print(f"{'per res':>8} {'ms/stmt':>8}  thread | statement")
    for key, (count, seconds) in sorted(statements.items(), key=lambda kv: -kv[1][0])[:40]:
        print(f"{count / resources:>8.2f} {seconds / count * 1000:>8.2f}  {key}")
    total = sum(c for k, (c, _) in statements.items() if not k.endswith("| COMMIT"))
    commits = sum(c for k, (c, _) in statements.items() if k.endswith("| COMMIT"))
    print(f"total: {total / resources:.1f} statements, {commits / resources:.1f} commits")
    files = sorted(directory.glob("*.pstat"))
    if not files:
        return
    stats = pstats.Stats(str(files[0]))
    for extra in files[1:]:
        stats.add(str(extra))
    print(f"\nyappi CPU profile of {len(files)} engine process(es), by own time:")
    stats.sort_stats("tottime").print_stats(top)
    print("by cumulative time:")
    stats.sort_stats("cumulative").print_stats(top)
