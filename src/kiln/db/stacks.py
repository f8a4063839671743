"""Stacks: creation with per-project unique names, lookup, listing, and CAS updates.

Stack state is written only under a compare-and-swap: the status on
``current_traversal_id`` (so a superseded traversal never changes it), the
template on ``version``. A name is unique in its project among live (not
soft-deleted) stacks; MariaDB has no partial unique index, so ``create_stack``
enforces it inside the creating transaction: PostgreSQL serialises creators of
one name with a transaction-scoped advisory lock, SQLite through its single
writer, and MariaDB inserts first and then reads the name with a locking read,
which waits for (or deadlocks with) a concurrent creator's uncommitted row;
the deadlock victim reports ``StackExists``. Imports: stdlib, SQLAlchemy, ``kiln.core``
and ``kiln.db``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

from kiln.core.errors import NotSupported
from kiln.db import tables
from kiln.db.common import KEEP, Keep, changes, from_row, is_mysql, param, set_params
from kiln.db.errors import ConcurrentUpdate, NotFound, StackExists

S = tables.stack

FILTER_KEYS = frozenset(
    {
        "id",
        "name",
        "action",
        "status",
        "owner_id",
        "root_id",
        "user_id",
        "project_id",
        "status_reason",
        "disable_rollback",
        "timeout_mins",
    }
)
SORT_KEYS = frozenset({"name", "action", "status", "created_at", "updated_at"})

_MYSQL_DEADLOCK = 1213


@dataclass(frozen=True, slots=True)
class Stack:
    id: str
    name: str
    project_id: str
    owner_id: str | None
    root_id: str
    parent_resource: str | None
    nested_depth: int
    action: str
    status: str
    status_reason: str
    raw_template_id: str
    prev_raw_template_id: str | None
    current_traversal_id: str | None
    timeout_mins: int | None
    disable_rollback: bool
    tags: list[str]
    parameters: dict[str, Any]
    user_id: str
    user_roles: list[str] | None
    trust_id: str | None
    #: the stack-domain project of the stack's in-instance users (root stacks; made lazily)
    stack_user_project_id: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    version: int


@dataclass(frozen=True, slots=True)
class StackStatus:
    """An outcome to write to a stack: action, status and reason."""

    action: str
    status: str
    reason: str = ""


def _name_lock_key(project_id: str, name: str) -> int:
    digest = hashlib.sha256(f"stack-name\0{project_id}\0{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _live_with_name(conn: Connection, project_id: str, name: str, *, lock: bool) -> list[str]:
    query = sa.select(S.c.id).where(
        S.c.project_id == project_id, S.c.name == name, S.c.deleted_at.is_(None)
    )
    if lock:
        query = query.with_for_update()
    return list(conn.execute(query).scalars())


def create_stack(
    conn: Connection,
    *,
    stack_id: str,
    name: str,
    project_id: str,
    user_id: str,
    raw_template_id: str,
    now: datetime,
    owner_id: str | None = None,
    root_id: str | None = None,
    parent_resource: str | None = None,
    nested_depth: int = 0,
    action: str = "INIT",
    status: str = "COMPLETE",
    status_reason: str = "",
    timeout_mins: int | None = None,
    disable_rollback: bool = True,
    tags: Sequence[str] = (),
    parameters: Mapping[str, Any] | None = None,
    user_roles: Sequence[str] = (),
    trust_id: str | None = None,
) -> Stack:
    """Insert a stack; ``StackExists`` if a live stack of the project has the name. Writes.

    ``root_id`` defaults to the stack's own id for a top-level stack. The
    caller's transaction must be rolled back after ``StackExists``.
    """
    row: dict[str, Any] = {
        "id": stack_id,
        "name": name,
        "project_id": project_id,
        "owner_id": owner_id,
        "root_id": root_id or stack_id,
        "parent_resource": parent_resource,
        "nested_depth": nested_depth,
        "action": action,
        "status": status,
        "status_reason": status_reason,
        "raw_template_id": raw_template_id,
        "prev_raw_template_id": None,
        "current_traversal_id": None,
        "timeout_mins": timeout_mins,
        "disable_rollback": disable_rollback,
        "tags": list(tags),
        "parameters": dict(parameters or {}),
        "user_id": user_id,
        "user_roles": list(user_roles),
        "trust_id": trust_id,
        "stack_user_project_id": None,
        "created_at": now,
        "updated_at": now,
        "deleted_at": None,
        "version": 1,
    }
    if is_mysql(conn):
        conn.execute(sa.insert(S).values(**row))
        try:
            others = [
                i for i in _live_with_name(conn, project_id, name, lock=True) if i != stack_id
            ]
        except OperationalError as exc:
            if exc.orig is not None and exc.orig.args[:1] == (_MYSQL_DEADLOCK,):
                raise StackExists(name) from exc
            raise
        if others:
            raise StackExists(name)
    else:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_name_lock_key(project_id, name))))
        if _live_with_name(conn, project_id, name, lock=False):
            raise StackExists(name)
        conn.execute(sa.insert(S).values(**row))
    return Stack(**row)


_GET_STACK = sa.select(S).where(S.c.id == param(S.c.id))
_GET_LIVE_STACK = _GET_STACK.where(S.c.deleted_at.is_(None))


def get_stack(conn: Connection, stack_id: str, *, show_deleted: bool = True) -> Stack:
    """The stack with that id (soft-deleted ones too unless told); NotFound otherwise."""
    query = _GET_STACK if show_deleted else _GET_LIVE_STACK
    row = conn.execute(query, {"w_id": stack_id}).first()
    if row is None:
        raise NotFound("Stack", stack_id)
    return from_row(Stack, row)


def lock_stack(conn: Connection, stack_id: str) -> Stack:
    """The live stack, its row locked until the transaction ends. Writes.

    Taken first by whoever plans a traversal of the stack (update, delete,
    rollback): under READ COMMITTED the resource rows it then reads include every
    row a step added before (steps take ``current_traversal_for_rows``), and no
    step adds one until the plan is committed. SQLite serialises writers anyway.
    """
    query = sa.select(S).where(S.c.id == stack_id, S.c.deleted_at.is_(None))
    if conn.dialect.name != "sqlite":
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise NotFound("Stack", stack_id)
    return from_row(Stack, row)


def current_traversal_for_rows(conn: Connection, stack_id: str) -> str | None:
    """The stack's current traversal, read under a shared lock on its row. Writes.

    A step that adds a resource row takes it and adds the row only for the
    current traversal: a traversal being planned (``lock_stack``) then either
    sees the row or supersedes the step before it is added.
    """
    query = sa.select(S.c.current_traversal_id).where(S.c.id == stack_id)
    if conn.dialect.name != "sqlite":
        query = query.with_for_update(read=True)
    found: str | None = conn.execute(query).scalar()
    return found


def get_stack_by_name(conn: Connection, project_id: str, name: str) -> Stack:
    """The live stack of the project with that name; NotFound otherwise."""
    row = conn.execute(
        sa.select(S).where(S.c.project_id == project_id, S.c.name == name, S.c.deleted_at.is_(None))
    ).first()
    if row is None:
        raise NotFound("Stack", name)
    return from_row(Stack, row)


def get_stack_of_stack_users(conn: Connection, stack_user_project_id: str, name: str) -> Stack:
    """The live stack named ``name`` in the tree whose in-instance users live in that
    stack-domain project (their tokens are scoped to it, not to the stack's project)."""
    roots = sa.select(S.c.id).where(S.c.stack_user_project_id == stack_user_project_id)
    row = conn.execute(
        sa.select(S).where(S.c.root_id.in_(roots), S.c.name == name, S.c.deleted_at.is_(None))
    ).first()
    if row is None:
        raise NotFound("Stack", name)
    return from_row(Stack, row)


def stack_user_project_of(conn: Connection, stack: Stack) -> str | None:
    """The stack-domain project of the stack's tree (kept on its root stack)."""
    if stack.id == stack.root_id:
        return stack.stack_user_project_id
    found = conn.execute(
        sa.select(S.c.stack_user_project_id).where(S.c.id == stack.root_id)
    ).scalar()
    return None if found is None else str(found)


def set_stack_user_project(conn: Connection, root_id: str, project_id: str) -> str:
    """Record the root stack's stack-domain project unless one is recorded already;
    the one recorded (first writer wins). Writes."""
    conn.execute(
        sa.update(S)
        .where(S.c.id == root_id, S.c.stack_user_project_id.is_(None))
        .values(stack_user_project_id=project_id)
    )
    found = conn.execute(sa.select(S.c.stack_user_project_id).where(S.c.id == root_id)).scalar()
    return str(found or project_id)


def list_stacks(
    conn: Connection,
    project_id: str | None,
    *,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: str = "desc",
    limit: int | None = None,
    marker: str | None = None,
    show_deleted: bool = False,
    show_nested: bool = False,
) -> list[Stack]:
    """One page of stacks (all projects when ``project_id`` is None).

    A filter value that is a list or tuple matches any of its items. Pages are
    keyset-paged on the sort keys plus the id: ``marker`` is the id of the last
    stack of the previous page (NotFound if it does not exist).
    """
    query, columns, descending = _listing(
        project_id, filters, sort_keys, sort_dir, show_deleted, show_nested
    )
    if marker is not None:
        mark = get_stack(conn, marker)
        query = query.where(_after(columns, [getattr(mark, c.name) for c in columns], descending))
    query = query.order_by(*(c.desc() if descending else c.asc() for c in columns))
    if limit is not None:
        query = query.limit(limit)
    return [from_row(Stack, row) for row in conn.execute(query)]


@dataclass(frozen=True, slots=True)
class TagFilter:
    """Tags a listed stack must have or lack: ``all`` of them, ``any`` of them, not
    ``not_all`` of them together, none of ``not_any``, and none of ``hidden``."""

    all: Sequence[str] = ()
    any: Sequence[str] = ()
    not_all: Sequence[str] = ()
    not_any: Sequence[str] = ()
    hidden: Sequence[str] = ()

    def active(self) -> bool:
        return bool(self.all or self.any or self.not_all or self.not_any or self.hidden)

    def matches(self, tags: Sequence[str]) -> bool:
        have = set(tags)
        if self.all and not set(self.all) <= have:
            return False
        if self.any and not set(self.any) & have:
            return False
        if self.not_all and set(self.not_all) <= have:
            return False
        return not (set(self.not_any) | set(self.hidden)) & have


def find_stacks(
    conn: Connection,
    project_id: str | None,
    *,
    filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",),
    sort_dir: str = "desc",
    limit: int | None = None,
    marker: str | None = None,
    show_deleted: bool = False,
    show_nested: bool = False,
    tags: TagFilter | None = None,
    with_count: bool = False,
) -> tuple[list[Stack], int | None]:
    """A page of stacks as the API lists them, and (``with_count``) how many match.

    As ``list_stacks``, plus tag filters, and an unknown ``marker`` is ignored
    (the first page), as Heat does. Tags live in a JSON column, which the three
    databases query differently: with a tag filter the matching is done here,
    over the rows the other filters leave.
    """
    query, columns, descending = _listing(
        project_id, filters, sort_keys, sort_dir, show_deleted, show_nested
    )
    ordered = query.order_by(*(c.desc() if descending else c.asc() for c in columns))
    if tags is not None and tags.active():
        found = [from_row(Stack, row) for row in conn.execute(ordered)]
        found = [s for s in found if tags.matches(s.tags)]
        ids = [s.id for s in found]
        page = found[ids.index(marker) + 1 :] if marker in ids else found
        return (page if limit is None else page[:limit]), (len(found) if with_count else None)
    count = None
    if with_count:
        count = conn.execute(sa.select(sa.func.count()).select_from(query.subquery())).scalar_one()
    if marker is not None:
        try:
            mark = get_stack(conn, marker)
        except NotFound:
            mark = None
        if mark is not None:
            after = _after(columns, [getattr(mark, c.name) for c in columns], descending)
            ordered = ordered.where(after)
    if limit is not None:
        ordered = ordered.limit(limit)
    return [from_row(Stack, row) for row in conn.execute(ordered)], count


def count_live_stacks(conn: Connection, project_id: str) -> int:
    """The project's live top-level stacks (what max_stacks_per_tenant limits)."""
    query = sa.select(sa.func.count()).where(
        S.c.project_id == project_id, S.c.deleted_at.is_(None), S.c.owner_id.is_(None)
    )
    return int(conn.execute(query).scalar_one())


def _listing(
    project_id: str | None,
    filters: Mapping[str, Any] | None,
    sort_keys: Sequence[str],
    sort_dir: str,
    show_deleted: bool,
    show_nested: bool,
) -> tuple[sa.Select[Any], list[sa.Column[Any]], bool]:
    """The filtered query, the order columns (id last) and whether descending."""
    if sort_dir not in ("asc", "desc"):
        raise NotSupported(f"Sort direction '{sort_dir}' is not supported")
    for key in sort_keys:
        if key not in SORT_KEYS:
            raise NotSupported(f"Sort key '{key}' is not supported")
    query = sa.select(S)
    if project_id is not None:
        query = query.where(S.c.project_id == project_id)
    if not show_deleted:
        query = query.where(S.c.deleted_at.is_(None))
    if not show_nested:
        query = query.where(S.c.owner_id.is_(None))
    for key, value in (filters or {}).items():
        if key not in FILTER_KEYS:
            raise NotSupported(f"Filter key '{key}' is not supported")
        if isinstance(value, list | tuple | set | frozenset):
            query = query.where(S.c[key].in_(list(value)))
        else:
            query = query.where(S.c[key] == value)
    columns = [S.c[key] for key in sort_keys if key != "id"] + [S.c.id]
    return query, columns, sort_dir == "desc"


def _after(columns: list[sa.Column[Any]], values: list[Any], descending: bool) -> Any:
    """Rows strictly after ``values`` in the lexicographic order of ``columns``."""
    clauses = []
    for i, column in enumerate(columns):
        equal = [columns[j] == values[j] for j in range(i)]
        beyond = column < values[i] if descending else column > values[i]
        clauses.append(sa.and_(*equal, beyond))
    return sa.or_(*clauses)


def list_children(conn: Connection, stack_id: str, *, show_deleted: bool = False) -> list[Stack]:
    """The nested stacks whose owner is ``stack_id``, by creation time."""
    query = sa.select(S).where(S.c.owner_id == stack_id)
    if not show_deleted:
        query = query.where(S.c.deleted_at.is_(None))
    query = query.order_by(S.c.created_at, S.c.id)
    return [from_row(Stack, row) for row in conn.execute(query)]


_UPDATE_STATUS = (
    sa.update(S)
    .where(S.c.id == param(S.c.id), S.c.current_traversal_id == param(S.c.current_traversal_id))
    .values(
        **set_params(S, ("action", "status", "status_reason", "updated_at")),
        version=S.c.version + 1,
    )
)


def update_stack_status(
    conn: Connection,
    stack_id: str,
    *,
    traversal_id: str,
    outcome: StackStatus,
    now: datetime,
) -> bool:
    """Write the stack's action and status if ``traversal_id`` is still current. Writes.

    Returns False (nothing written) when another traversal is current.
    """
    params = {
        "w_id": stack_id,
        "w_current_traversal_id": traversal_id,
        "v_action": outcome.action,
        "v_status": outcome.status,
        "v_status_reason": outcome.reason,
        "v_updated_at": now,
    }
    result = conn.execute(_UPDATE_STATUS, params)
    return result.rowcount == 1


def set_template(
    conn: Connection,
    stack_id: str,
    *,
    raw_template_id: str,
    prev_raw_template_id: str | None,
    now: datetime,
    expected_version: int,
    parameters: Mapping[str, Any] | Keep = KEEP,
    tags: Sequence[str] | Keep = KEEP,
    timeout_mins: int | Keep | None = KEEP,
    disable_rollback: bool | Keep = KEEP,
) -> int:
    """Point the stack at a new template (and settings) under a CAS on ``version``. Writes.

    Returns the new version; ``ConcurrentUpdate`` if the version moved on,
    ``NotFound`` if there is no such live stack.
    """
    values = changes(
        raw_template_id=raw_template_id,
        prev_raw_template_id=prev_raw_template_id,
        parameters=parameters if isinstance(parameters, Keep) else dict(parameters),
        tags=tags if isinstance(tags, Keep) else list(tags),
        timeout_mins=timeout_mins,
        disable_rollback=disable_rollback,
    )
    result = conn.execute(
        sa.update(S)
        .where(S.c.id == stack_id, S.c.version == expected_version, S.c.deleted_at.is_(None))
        .values(**values, updated_at=now, version=S.c.version + 1)
    )
    if result.rowcount != 1:
        get_stack(conn, stack_id, show_deleted=False)
        raise ConcurrentUpdate("Stack", stack_id)
    return expected_version + 1


def soft_delete_stack(conn: Connection, stack_id: str, *, now: datetime) -> None:
    """Mark a live stack deleted (its name becomes free); NotFound if not live. Writes."""
    result = conn.execute(
        sa.update(S)
        .where(S.c.id == stack_id, S.c.deleted_at.is_(None))
        .values(deleted_at=now, updated_at=now, version=S.c.version + 1)
    )
    if result.rowcount != 1:
        raise NotFound("Stack", stack_id)
