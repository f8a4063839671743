"""Resource rows (versioned: a replacement is a new row) and the plugin's resource_data.

Writes are guarded two ways. ``update_resource`` is a compare-and-swap on
``version``. A task that owns a row (``claim_resource`` set ``owner_traversal_id``
and ``owner_epoch`` to its lease) writes with ``write_owned_resource``, fenced on
that pair, so a zombie owner's write raises ``FencedOut``. Every write bumps
``version``. Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables
from kiln.db.common import (
    KEEP,
    Keep,
    changes,
    execute_fenced,
    from_row,
    param,
    set_params,
    set_values,
    upsert,
)
from kiln.db.errors import ConcurrentUpdate, FencedOut, NotFound

R = tables.resource
D = tables.resource_data


@dataclass(frozen=True, slots=True)
class Resource:
    id: str
    stack_id: str
    root_stack_id: str
    name: str
    type: str
    physical_id: str | None
    action: str
    status: str
    status_reason: str
    raw_template_id: str
    requires: list[str]
    replaces: str | None
    replaced_by: str | None
    version: int
    owner_traversal_id: str | None
    owner_epoch: int
    properties: dict[str, Any]
    metadata: dict[str, Any]
    reference_id: Any
    attributes: dict[str, Any]
    nested_stack_id: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class NewResource:
    """A resource row to insert (version 1, unowned)."""

    id: str
    stack_id: str
    root_stack_id: str
    name: str
    type: str
    raw_template_id: str
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    requires: Sequence[str] = ()
    replaces: str | None = None
    physical_id: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def row(self, now: datetime) -> dict[str, Any]:
        return {
            "id": self.id,
            "stack_id": self.stack_id,
            "root_stack_id": self.root_stack_id,
            "name": self.name,
            "type": self.type,
            "physical_id": self.physical_id,
            "action": self.action,
            "status": self.status,
            "status_reason": self.status_reason,
            "raw_template_id": self.raw_template_id,
            "requires": list(self.requires),
            "replaces": self.replaces,
            "replaced_by": None,
            "version": 1,
            "owner_traversal_id": None,
            "owner_epoch": 0,
            "properties": dict(self.properties),
            "metadata": dict(self.metadata),
            "reference_id": None,
            "attributes": {},
            "nested_stack_id": None,
            "created_at": now,
            "updated_at": now,
        }


@dataclass(frozen=True, slots=True)
class ResourceChange:
    """Columns to change on a resource row; KEEP leaves a column as it is."""

    action: str | Keep = KEEP
    status: str | Keep = KEEP
    status_reason: str | Keep = KEEP
    physical_id: str | Keep | None = KEEP
    raw_template_id: str | Keep = KEEP
    requires: Sequence[str] | Keep = KEEP
    replaced_by: str | Keep | None = KEEP
    properties: dict[str, Any] | Keep = KEEP
    metadata: dict[str, Any] | Keep = KEEP
    reference_id: Any = KEEP
    attributes: dict[str, Any] | Keep = KEEP
    nested_stack_id: str | Keep | None = KEEP

    def values(self) -> dict[str, Any]:
        found = changes(**{f.name: getattr(self, f.name) for f in fields(self)})
        if "requires" in found:
            found["requires"] = list(found["requires"])
        return found


@dataclass(frozen=True, slots=True)
class ResourceDatum:
    key: str
    value: str
    redact: bool


def create_resource(conn: Connection, new: NewResource, *, now: datetime) -> Resource:
    """Insert one resource row. Writes."""
    row = new.row(now)
    conn.execute(sa.insert(R).values(**row))
    return Resource(**row)


def create_resources(conn: Connection, new: Sequence[NewResource], *, now: datetime) -> None:
    """Insert many resource rows in one executemany. Writes."""
    if new:
        conn.execute(sa.insert(R), [n.row(now) for n in new])


_GET_RESOURCE = sa.select(R).where(R.c.id == param(R.c.id))
_GET_RESOURCES = sa.select(R).where(
    R.c.id.in_(sa.bindparam("w_ids", expanding=True, type_=R.c.id.type))
)


def get_resource(conn: Connection, resource_id: str) -> Resource:
    """The resource row with that id; NotFound otherwise."""
    row = conn.execute(_GET_RESOURCE, {"w_id": resource_id}).first()
    if row is None:
        raise NotFound("Resource", resource_id)
    return from_row(Resource, row)


def get_resources(conn: Connection, resource_ids: Sequence[str]) -> dict[str, Resource]:
    """The rows among ``resource_ids`` that exist, by id, in one query."""
    if not resource_ids:
        return {}
    rows = conn.execute(_GET_RESOURCES, {"w_ids": list(resource_ids)})
    return {row.id: from_row(Resource, row) for row in rows}


def list_resources(conn: Connection, stack_id: str, *, name: str | None = None) -> list[Resource]:
    """Every row of the stack (all versions), by name then creation."""
    query = sa.select(R).where(R.c.stack_id == stack_id)
    if name is not None:
        query = query.where(R.c.name == name)
    query = query.order_by(R.c.name, R.c.created_at, R.c.id)
    return [from_row(Resource, row) for row in conn.execute(query)]


@functools.cache
def _update_stmt(names: tuple[str, ...], fence: str) -> sa.Update:
    """An UPDATE of those columns (and ``version + 1``) by id, CAS on ``version`` or owner."""
    where = [R.c.id == param(R.c.id)]
    if fence == "version":
        where.append(R.c.version == param(R.c.version))
    else:
        where += [
            R.c.owner_traversal_id == param(R.c.owner_traversal_id),
            R.c.owner_epoch == param(R.c.owner_epoch),
        ]
    return sa.update(R).where(*where).values(**set_params(R, names), version=R.c.version + 1)


def _cas_update(
    conn: Connection,
    resource_id: str,
    change: ResourceChange,
    *,
    now: datetime,
    expected_version: int,
) -> int:
    values = change.values()
    values["updated_at"] = now
    params = set_values(values)
    params.update(w_id=resource_id, w_version=expected_version)
    return int(conn.execute(_update_stmt(tuple(values), "version"), params).rowcount)


def update_resource_cas(
    conn: Connection,
    resource_id: str,
    change: ResourceChange,
    *,
    now: datetime,
    expected_version: int,
    what: str,
) -> None:
    """Apply ``change`` under a CAS on ``version``; ``FencedOut(what)`` if it moved. Writes."""
    if _cas_update(conn, resource_id, change, now=now, expected_version=expected_version) != 1:
        raise FencedOut(what)


def update_resource(
    conn: Connection,
    resource_id: str,
    change: ResourceChange,
    *,
    now: datetime,
    expected_version: int,
) -> int:
    """Apply ``change`` under a CAS on ``version``; returns the new version. Writes.

    ``ConcurrentUpdate`` when the version moved on, ``NotFound`` without a row.
    """
    if _cas_update(conn, resource_id, change, now=now, expected_version=expected_version) != 1:
        get_resource(conn, resource_id)
        raise ConcurrentUpdate("Resource", resource_id)
    return expected_version + 1


_CLAIM_COLUMNS = ("owner_traversal_id", "owner_epoch", "updated_at")


def claim_resource(
    conn: Connection,
    resource_id: str,
    *,
    traversal_id: str,
    epoch: int,
    expected_version: int,
    now: datetime,
) -> bool:
    """Make a task (traversal and lease epoch) the owner, CAS on ``version``. Writes.

    Returns False when the row changed since it was read at ``expected_version``.
    """
    params = set_values(
        {"owner_traversal_id": traversal_id, "owner_epoch": epoch, "updated_at": now}
    )
    params.update(w_id=resource_id, w_version=expected_version)
    result = conn.execute(_update_stmt(_CLAIM_COLUMNS, "version"), params)
    return result.rowcount == 1


def write_owned_resource(
    conn: Connection,
    resource_id: str,
    change: ResourceChange,
    *,
    traversal_id: str,
    epoch: int,
    now: datetime,
    release: bool = False,
) -> None:
    """Apply ``change`` as the owning task; ``release`` also gives up ownership. Writes.

    ``FencedOut`` when the row is not owned by that traversal and epoch.
    """
    values = change.values()
    if release:
        values["owner_traversal_id"] = None
    values["updated_at"] = now
    params = set_values(values)
    params.update(w_id=resource_id, w_owner_traversal_id=traversal_id, w_owner_epoch=epoch)
    execute_fenced(
        conn,
        _update_stmt(tuple(values), "owner"),
        f"resource {resource_id} is not owned by traversal {traversal_id} epoch {epoch}",
        params,
    )


def delete_resource(conn: Connection, resource_id: str) -> bool:
    """Delete a row (and its resource_data); False if it did not exist. Writes."""
    return conn.execute(sa.delete(R).where(R.c.id == resource_id)).rowcount == 1


_GET_DATA = sa.select(D).where(D.c.resource_id == param(D.c.resource_id))


def get_resource_data(conn: Connection, resource_id: str) -> dict[str, ResourceDatum]:
    """The plugin's private key/value store of a resource row."""
    rows = conn.execute(_GET_DATA, {"w_resource_id": resource_id})
    return {row.key: ResourceDatum(row.key, row.value, row.redact) for row in rows}


def set_resource_data(
    conn: Connection, resource_id: str, key: str, value: str, *, redact: bool = False
) -> None:
    """Insert or replace one key of a resource's data. Writes."""
    upsert(
        conn,
        D,
        {"resource_id": resource_id, "key": key, "value": value, "redact": redact},
        update=("value", "redact"),
    )


def delete_resource_data(conn: Connection, resource_id: str, key: str) -> bool:
    """Remove one key; False if it was not there. Writes."""
    result = conn.execute(sa.delete(D).where(D.c.resource_id == resource_id, D.c.key == key))
    return result.rowcount == 1


def resources_of_tasks(
    conn: Connection, traversal_id: str, node_keys: Sequence[str]
) -> dict[str, Resource]:
    """The resource row that satisfied each named task (its result row, else its row).

    One query: what a successor reads of its predecessors (reference ids and
    attributes), whether or not they were replaced during the traversal.
    """
    if not node_keys:
        return {}
    N = tables.node_task
    row_id = sa.func.coalesce(N.c.result_resource_id, N.c.resource_id)
    query = (
        sa.select(N.c.node_key, R)
        .join(R, R.c.id == row_id)
        .where(N.c.traversal_id == traversal_id, N.c.node_key.in_(list(node_keys)))
    )
    out: dict[str, Resource] = {}
    for row in conn.execute(query):
        mapping = dict(row._mapping)
        key = mapping.pop("node_key")
        out[key] = Resource(**mapping)
    return out


def mark_replaced(conn: Connection, resource_id: str, replaced_by: str, *, now: datetime) -> None:
    """Record that ``resource_id`` was replaced by another row. Writes.

    Only the converge task of that resource name does this, after its
    replacement is complete, so no version check is needed.
    """
    conn.execute(
        sa.update(R)
        .where(R.c.id == resource_id)
        .values(replaced_by=replaced_by, updated_at=now, version=R.c.version + 1)
    )


def release_resource(
    conn: Connection, resource_id: str, *, traversal_id: str, now: datetime
) -> bool:
    """Let go of a row the traversal owns, whatever the epoch; False if it did not. Writes."""
    result = conn.execute(
        sa.update(R)
        .where(R.c.id == resource_id, R.c.owner_traversal_id == traversal_id)
        .values(owner_traversal_id=None, updated_at=now, version=R.c.version + 1)
    )
    return result.rowcount == 1
