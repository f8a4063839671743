"""Stack snapshots: the saved resource data a later restore reads.

Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables
from kiln.db.common import KEEP, Keep, changes, from_row
from kiln.db.errors import NotFound

SN = tables.snapshot


@dataclass(frozen=True, slots=True)
class Snapshot:
    id: str
    stack_id: str
    name: str | None
    action: str
    status: str
    status_reason: str
    data: Any
    created_at: datetime
    updated_at: datetime


def create_snapshot(
    conn: Connection,
    *,
    snapshot_id: str,
    stack_id: str,
    name: str | None,
    now: datetime,
    action: str = "CREATE",
    status: str = "IN_PROGRESS",
    status_reason: str = "",
    data: Any = None,
) -> Snapshot:
    """Insert a snapshot row. Writes."""
    row = {
        "id": snapshot_id,
        "stack_id": stack_id,
        "name": name,
        "action": action,
        "status": status,
        "status_reason": status_reason,
        "data": data,
        "created_at": now,
        "updated_at": now,
    }
    conn.execute(sa.insert(SN).values(**row))
    return Snapshot(**row)


def get_snapshot(conn: Connection, snapshot_id: str) -> Snapshot:
    """The snapshot with that id; NotFound otherwise."""
    row = conn.execute(sa.select(SN).where(SN.c.id == snapshot_id)).first()
    if row is None:
        raise NotFound("Snapshot", snapshot_id)
    return from_row(Snapshot, row)


def list_snapshots(conn: Connection, stack_id: str) -> list[Snapshot]:
    """The stack's snapshots, oldest first."""
    query = sa.select(SN).where(SN.c.stack_id == stack_id).order_by(SN.c.created_at, SN.c.id)
    return [from_row(Snapshot, row) for row in conn.execute(query)]


def update_snapshot(
    conn: Connection,
    snapshot_id: str,
    *,
    now: datetime,
    action: str | Keep = KEEP,
    status: str | Keep = KEEP,
    status_reason: str | Keep = KEEP,
    data: Any = KEEP,
) -> None:
    """Change a snapshot's state and/or data; NotFound if there is none. Writes."""
    values = changes(action=action, status=status, status_reason=status_reason, data=data)
    result = conn.execute(
        sa.update(SN).where(SN.c.id == snapshot_id).values(**values, updated_at=now)
    )
    if result.rowcount != 1:
        raise NotFound("Snapshot", snapshot_id)


def delete_snapshot(conn: Connection, snapshot_id: str) -> None:
    """Remove a snapshot; NotFound if there is none. Writes."""
    if conn.execute(sa.delete(SN).where(SN.c.id == snapshot_id)).rowcount != 1:
        raise NotFound("Snapshot", snapshot_id)
