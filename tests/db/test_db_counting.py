"""kiln.db.counting: statements counted per engine, executemany once, BEGIN not at all."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import sqlalchemy as sa
from dbhelpers import make_traversal
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.completion import complete_task
from kiln.db.counting import count_statements
from kiln.db.engine import read, write
from kiln.db.tasks import claim_tasks


def test_counts_statements_and_verbs(db: Engine) -> None:
    with count_statements(db) as counter:
        with write(db) as conn:
            conn.execute(
                tables.engine.insert(),
                [
                    {"id": f"e{i}", "host": "h", "pid": i, "started_at": _T, "heartbeat_at": _T}
                    for i in range(5)
                ],
            )
            conn.execute(tables.engine.update().values(pid=0))
        with read(db) as conn:
            conn.execute(sa.select(tables.engine)).all()
    # The executemany may be split into batches by some drivers, never per row.
    assert counter.by_verb()["INSERT"] <= 2
    assert counter.by_verb()["UPDATE"] == 1 and counter.by_verb()["SELECT"] == 1
    assert counter.writes == counter.by_verb()["INSERT"] + 1
    assert counter.count == len(counter.statements)
    assert not any(s.strip().upper().startswith("BEGIN") for s in counter.statements)
    counter.reset()
    assert counter.count == 0


def test_counts_stop_when_the_block_ends_and_include_threads(db: Engine) -> None:
    with count_statements(db) as counter:

        def reader() -> None:
            with read(db) as conn:
                conn.execute(sa.select(1)).all()

        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert counter.count == 3
    with read(db) as conn:
        conn.execute(sa.select(1)).all()
    assert counter.count == 3


def test_statements_per_node_completion_are_bounded(db: Engine, now: datetime) -> None:
    # The benchmark's "statements per resource": claim + complete of a node with
    # two successors, reading the edges (no cached plan).
    make_traversal(db, now, ["a", "b", "c"], [("a", "b"), ("a", "c")])
    with count_statements(db) as counter:
        with write(db) as conn:
            (task,) = claim_tasks(conn, "e1", now=now, lease=timedelta(seconds=15), limit=1)
        with write(db) as conn:
            complete_task(conn, task.lease, now=now)
    # claim: select + update; complete: task, edges, 2 successors, traversal
    # (+ read-backs on MariaDB).
    expected = 2 + 5 + (2 if db.dialect.name == "mysql" else 0)
    assert counter.count == expected


_T = datetime(2025, 1, 1)
