"""Engine processes: registration, heartbeats (which renew task leases), listing, reaping.

An engine's heartbeat also pushes out the lease of every task it has CLAIMED,
so a slow cloud call does not lose its lease while the process is alive. A
heartbeat from an engine whose row was reaped raises ``NotFound`` and renews
nothing: that engine must stop starting cloud actions and register again.
Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables
from kiln.db.errors import NotFound
from kiln.db.types import as_utc

EN = tables.engine
N = tables.node_task


@dataclass(frozen=True, slots=True)
class EngineInfo:
    id: str
    host: str
    pid: int
    started_at: datetime
    heartbeat_at: datetime
    heartbeat_age: timedelta


def register_engine(
    conn: Connection, engine_id: str, *, host: str, pid: int, now: datetime
) -> None:
    """Insert the engine's row (started and last seen now). Writes."""
    conn.execute(
        sa.insert(EN).values(id=engine_id, host=host, pid=pid, started_at=now, heartbeat_at=now)
    )


def heartbeat(
    conn: Connection,
    engine_id: str,
    *,
    now: datetime,
    lease: timedelta,
    held: Collection[tuple[str, str]] | None = None,
) -> int:
    """Record that the engine is alive and renew its CLAIMED tasks' leases to ``now + lease``.

    ``held`` (traversal id, node key) limits the renewal to the tasks the engine is
    working on: a claim whose commit was lost with its connection did reach the
    database, but the engine never got those tasks, and renewing them would keep
    them from every engine for ever; unrenewed, they expire and are swept back.
    None renews every task the engine has claimed.

    Returns how many leases were renewed; NotFound if the engine was reaped. Writes.
    """
    seen = conn.execute(sa.update(EN).where(EN.c.id == engine_id).values(heartbeat_at=now))
    if seen.rowcount != 1:
        raise NotFound("Engine", engine_id)
    mine = sa.and_(N.c.lease_owner == engine_id, N.c.state == "CLAIMED")
    if held is not None:
        if not held:
            return 0
        mine = sa.and_(mine, sa.tuple_(N.c.traversal_id, N.c.node_key).in_(sorted(held)))
    renewed = conn.execute(sa.update(N).where(mine).values(lease_expires_at=now + lease))
    return int(renewed.rowcount)


def list_engines(conn: Connection, *, now: datetime) -> list[EngineInfo]:
    """Every registered engine with the age of its last heartbeat, oldest first."""
    rows = conn.execute(sa.select(EN).order_by(EN.c.started_at, EN.c.id))
    return [
        EngineInfo(
            id=row.id,
            host=row.host,
            pid=row.pid,
            started_at=row.started_at,
            heartbeat_at=row.heartbeat_at,
            heartbeat_age=as_utc(now) - row.heartbeat_at,
        )
        for row in rows
    ]


def reap_engines(conn: Connection, *, now: datetime, max_age: timedelta) -> list[str]:
    """Remove engines silent for longer than ``max_age``; returns their ids. Writes.

    Their claimed tasks are left to lease expiry (``tasks.reclaim_expired``).
    """
    cutoff = now - max_age
    dead = sorted(conn.execute(sa.select(EN.c.id).where(EN.c.heartbeat_at < cutoff)).scalars())
    if dead:
        conn.execute(sa.delete(EN).where(EN.c.id.in_(dead), EN.c.heartbeat_at < cutoff))
    return dead
