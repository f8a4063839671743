"""Events: the per-stack history of resource and stack state changes.

Events are ordered by their autoincrement ``id`` (insertion order), which the
(stack_id, id) index serves. Listing is keyset-paged in either direction: the
marker is the uuid of the last event of the previous page (a page sorted by
resource type first is keyset-paged on (resource_type, id)). Pruning keeps the
newest ``keep`` events of a stack (``max_events_per_stack``, run by the sweeper,
not on the insert path). Imports: stdlib, SQLAlchemy, ``kiln.core`` and ``kiln.db``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.core.errors import NotSupported
from kiln.db import tables
from kiln.db.common import from_row
from kiln.db.errors import NotFound

E = tables.event

FILTER_KEYS = frozenset(
    {"uuid", "resource_name", "physical_resource_id", "resource_type", "action", "status"}
)
#: Columns a page may be sorted by before the id (which orders by insertion, i.e. time).
SORT_KEYS = frozenset({"resource_type"})


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    uuid: str
    stack_id: str
    resource_name: str
    physical_resource_id: str | None
    resource_type: str
    action: str
    status: str
    status_reason: str
    resource_properties: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to insert (its id and time are assigned on insert)."""

    uuid: str
    stack_id: str
    resource_name: str
    resource_type: str
    action: str
    status: str
    status_reason: str = ""
    physical_resource_id: str | None = None
    resource_properties: dict[str, Any] = field(default_factory=dict)

    def row(self, now: datetime) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "stack_id": self.stack_id,
            "resource_name": self.resource_name,
            "physical_resource_id": self.physical_resource_id,
            "resource_type": self.resource_type,
            "action": self.action,
            "status": self.status,
            "status_reason": self.status_reason,
            "resource_properties": dict(self.resource_properties),
            "created_at": now,
        }


def add_event(conn: Connection, new: NewEvent, *, now: datetime) -> int:
    """Insert one event; returns its id. Writes."""
    result = conn.execute(sa.insert(E).values(**new.row(now)))
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


_INSERT = sa.insert(E)


def add_events(conn: Connection, new: Sequence[NewEvent], *, now: datetime) -> None:
    """Insert several events in one executemany, in order. Writes."""
    if new:
        conn.execute(_INSERT, [n.row(now) for n in new])


def get_event(conn: Connection, event_uuid: str) -> Event:
    """The event with that uuid; NotFound otherwise."""
    row = conn.execute(sa.select(E).where(E.c.uuid == event_uuid)).first()
    if row is None:
        raise NotFound("Event", event_uuid)
    return from_row(Event, row)


def list_events(
    conn: Connection,
    stack_ids: str | Sequence[str],
    *,
    filters: Mapping[str, Any] | None = None,
    limit: int | None = None,
    marker: str | None = None,
    sort_dir: str = "asc",
    sort_keys: Sequence[str] = (),
) -> list[Event]:
    """One page of the events of one stack (or several: a stack and its nested ones).

    ``sort_dir`` "asc" is oldest first; "desc" newest first. A filter value that
    is a list or tuple matches any of its items. ``sort_keys`` (from SORT_KEYS)
    order before the id; the page is keyset-paged on all of them.
    """
    if sort_dir not in ("asc", "desc"):
        raise NotSupported(f"Sort direction '{sort_dir}' is not supported")
    for key in sort_keys:
        if key not in SORT_KEYS:
            raise NotSupported(f"Sort key '{key}' is not supported")
    ids = [stack_ids] if isinstance(stack_ids, str) else list(stack_ids)
    query = sa.select(E).where(E.c.stack_id.in_(ids) if len(ids) != 1 else E.c.stack_id == ids[0])
    for key, value in (filters or {}).items():
        if key not in FILTER_KEYS:
            raise NotSupported(f"Filter key '{key}' is not supported")
        if isinstance(value, list | tuple | set | frozenset):
            query = query.where(E.c[key].in_(list(value)))
        else:
            query = query.where(E.c[key] == value)
    descending = sort_dir == "desc"
    columns = [E.c[key] for key in dict.fromkeys(sort_keys)] + [E.c.id]
    if marker is not None:
        mark = get_event(conn, marker)
        query = query.where(_after(columns, [getattr(mark, c.name) for c in columns], descending))
    query = query.order_by(*(c.desc() if descending else c.asc() for c in columns))
    if limit is not None:
        query = query.limit(limit)
    return [from_row(Event, row) for row in conn.execute(query)]


def _after(columns: list[sa.Column[Any]], values: list[Any], descending: bool) -> Any:
    """Rows strictly after ``values`` in the lexicographic order of ``columns``."""
    clauses = []
    for i, column in enumerate(columns):
        equal = [columns[j] == values[j] for j in range(i)]
        beyond = column < values[i] if descending else column > values[i]
        clauses.append(sa.and_(*equal, beyond))
    return sa.or_(*clauses)


def find_event(conn: Connection, event_uuid: str, stack_ids: Sequence[str]) -> Event | None:
    """The event with that uuid if it belongs to one of ``stack_ids``; None otherwise."""
    if not stack_ids:
        return None
    row = conn.execute(
        sa.select(E).where(E.c.uuid == event_uuid, E.c.stack_id.in_(list(stack_ids)))
    ).first()
    return None if row is None else from_row(Event, row)


def count_events(conn: Connection, stack_id: str) -> int:
    """How many events the stack has (the sweeper prunes past the limit)."""
    count = conn.execute(
        sa.select(sa.func.count()).select_from(E).where(E.c.stack_id == stack_id)
    ).scalar_one()
    return int(count)


def prune_events(conn: Connection, stack_id: str, *, keep: int) -> int:
    """Delete all but the newest ``keep`` events of the stack; returns how many went. Writes."""
    # Two statements: MariaDB cannot DELETE with a subquery on the same table.
    oldest_kept = conn.execute(
        sa.select(E.c.id)
        .where(E.c.stack_id == stack_id)
        .order_by(E.c.id.desc())
        .offset(max(keep - 1, 0))
        .limit(1)
    ).scalar_one_or_none()
    if oldest_kept is None:
        return 0
    bound = E.c.id < oldest_kept if keep > 0 else E.c.id <= oldest_kept
    result = conn.execute(sa.delete(E).where(E.c.stack_id == stack_id, bound))
    return int(result.rowcount)
