"""kiln.db.engines: registration, heartbeats renewing leases, listing, reaping."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dbhelpers import make_traversal
from sqlalchemy.engine import Engine

from kiln.db.engine import read, write
from kiln.db.engines import heartbeat, list_engines, reap_engines, register_engine
from kiln.db.errors import NotFound
from kiln.db.tasks import claim_tasks, get_task, requeue_task

LEASE = timedelta(seconds=15)


def test_register_list_with_heartbeat_age(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        register_engine(conn, "e1", host="h1", pid=11, now=now)
        register_engine(conn, "e2", host="h2", pid=22, now=now + timedelta(seconds=1))
        heartbeat(conn, "e1", now=now + timedelta(seconds=5), lease=LEASE)
    with read(db) as conn:
        engines = list_engines(conn, now=now + timedelta(seconds=6))
    assert [(e.id, e.host, e.pid, e.heartbeat_age) for e in engines] == [
        ("e1", "h1", 11, timedelta(seconds=1)),
        ("e2", "h2", 22, timedelta(seconds=5)),
    ]
    assert engines[0].started_at == now


def test_heartbeat_renews_only_its_claimed_leases(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a", "b", "c"])
    with write(db) as conn:
        register_engine(conn, "e1", host="h", pid=1, now=now)
        register_engine(conn, "e2", host="h", pid=2, now=now)
        (a,) = claim_tasks(conn, "e1", now=now, lease=LEASE, limit=1)
        (b,) = claim_tasks(conn, "e2", now=now, lease=LEASE, limit=1)
        (c,) = claim_tasks(conn, "e1", now=now, lease=LEASE, limit=1)
        requeue_task(conn, c.lease, now=now, not_before=now)  # no longer claimed
    later = now + timedelta(seconds=10)
    with write(db) as conn:
        assert heartbeat(conn, "e1", now=later, lease=LEASE) == 1
        assert get_task(conn, traversal_id, a.node_key).lease_expires_at == later + LEASE
        assert get_task(conn, traversal_id, b.node_key).lease_expires_at == now + LEASE
        assert get_task(conn, traversal_id, c.node_key).lease_expires_at is None


def test_heartbeat_renews_only_the_tasks_it_holds(db: Engine, now: datetime) -> None:
    """A claim whose commit the engine never saw leaves tasks it does not run: those
    must expire (and be swept back), not be renewed for ever."""
    _, traversal_id = make_traversal(db, now, ["a", "b"])
    with write(db) as conn:
        register_engine(conn, "e1", host="h", pid=1, now=now)
        a, b = claim_tasks(conn, "e1", now=now, lease=LEASE, limit=2)
    later = now + timedelta(seconds=10)
    with write(db) as conn:
        held = {(traversal_id, a.node_key)}
        assert heartbeat(conn, "e1", now=later, lease=LEASE, held=held) == 1
        assert get_task(conn, traversal_id, a.node_key).lease_expires_at == later + LEASE
        assert get_task(conn, traversal_id, b.node_key).lease_expires_at == now + LEASE
        assert heartbeat(conn, "e1", now=later, lease=LEASE, held=set()) == 0


def test_reap_silent_engines(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        register_engine(conn, "old", host="h", pid=1, now=now)
        register_engine(conn, "fresh", host="h", pid=2, now=now + timedelta(seconds=50))
        assert reap_engines(
            conn, now=now + timedelta(seconds=60), max_age=timedelta(seconds=30)
        ) == ["old"]
        assert [e.id for e in list_engines(conn, now=now)] == ["fresh"]
    with pytest.raises(NotFound, match=r"The Engine \(old\)"), write(db) as conn:
        heartbeat(conn, "old", now=now, lease=LEASE)
