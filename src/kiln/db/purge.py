"""Purging soft-deleted stacks for good (``kiln manage purge-deleted``).

A stack deleted before a cutoff goes with everything that belongs to it: its
nested stacks (whenever they were deleted), their resources and resource data,
events, snapshots, traversals with their node tasks and edges, and the raw
templates that no remaining stack, resource or traversal refers to (snapshots
keep their template inline). A stack with a live nested stack under it is kept
(the live one would lose its parent). ``purge_batch`` is one transaction's
worth; the caller repeats it, each time in a new transaction, until it purges
nothing. Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables

S = tables.stack
TR = tables.traversal
R = tables.resource
T = tables.raw_template

# Tables whose rows live and die with a stack, reached from the ids of the stacks
# being purged. The stack table itself goes last, children before parents.
_OWNED: dict[str, Callable[[list[str]], sa.ColumnElement[bool]]] = {
    "node_task": lambda ids: tables.node_task.c.traversal_id.in_(_traversals_of(ids)),
    "traversal_edge": lambda ids: tables.traversal_edge.c.traversal_id.in_(_traversals_of(ids)),
    "resource_data": lambda ids: tables.resource_data.c.resource_id.in_(
        sa.select(R.c.id).where(R.c.stack_id.in_(ids))
    ),
    "resource": lambda ids: R.c.stack_id.in_(ids),
    "event": lambda ids: tables.event.c.stack_id.in_(ids),
    "snapshot": lambda ids: tables.snapshot.c.stack_id.in_(ids),
    "traversal": lambda ids: TR.c.stack_id.in_(ids),
}
#: Tables purging never touches: they do not belong to a stack (or are the stacks).
NOT_OWNED = frozenset({"stack", "raw_template", "engine", "software_config", "software_deployment"})
OWNED = frozenset(_OWNED)


@dataclass(frozen=True, slots=True)
class PurgeBatch:
    """What one batch did: stacks removed (nested ones included), raw templates
    removed, and selected stacks kept because a live stack hangs under them."""

    stack_ids: list[str]
    raw_templates: int
    kept_ids: list[str]

    @property
    def empty(self) -> bool:
        return not self.stack_ids and not self.kept_ids


def _traversals_of(ids: list[str]) -> sa.Select[Any]:
    return sa.select(TR.c.id).where(TR.c.stack_id.in_(ids))


def purge_batch(
    conn: Connection,
    *,
    deleted_before: datetime,
    limit: int,
    project_id: str | None = None,
    skip: Collection[str] = (),
) -> PurgeBatch:
    """Purge up to ``limit`` stacks deleted before ``deleted_before`` (oldest first), with
    their nested stacks. Writes.

    ``skip``: ids kept by earlier batches (pass every ``kept_ids`` back in, so that the
    next batch moves on). ``project_id`` limits the selection to one project.
    """
    query = sa.select(S.c.id).where(S.c.deleted_at.is_not(None), S.c.deleted_at < deleted_before)
    if project_id is not None:
        query = query.where(S.c.project_id == project_id)
    if skip:
        query = query.where(S.c.id.not_in(sorted(skip)))
    selected = list(conn.execute(query.order_by(S.c.deleted_at, S.c.id).limit(limit)).scalars())
    if not selected:
        return PurgeBatch([], 0, [])
    children, live = _descendants(conn, selected)
    blocked = _with_live_below(selected, children, live)
    purged = [sid for sid in _subtree_nodes(selected, children) if sid not in blocked]
    templates = _purge_stacks(conn, purged, children) if purged else 0
    return PurgeBatch(sorted(purged), templates, [s for s in selected if s in blocked])


def _descendants(conn: Connection, roots: list[str]) -> tuple[dict[str, list[str]], set[str]]:
    """Each stack's nested stacks under ``roots`` (level by level), and which are live."""
    children: dict[str, list[str]] = {}
    live: set[str] = set()
    seen = set(roots)
    frontier = list(roots)
    while frontier:
        rows = conn.execute(
            sa.select(S.c.id, S.c.owner_id, S.c.deleted_at).where(S.c.owner_id.in_(frontier))
        ).all()
        frontier = []
        for sid, owner, deleted_at in rows:
            children.setdefault(owner, []).append(sid)
            if deleted_at is None:
                live.add(sid)
            if sid not in seen:  # a bad owner cycle must not loop forever
                seen.add(sid)
                frontier.append(sid)
    return children, live


def _subtree_nodes(roots: Iterable[str], children: dict[str, list[str]]) -> list[str]:
    found: list[str] = []
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        sid = stack.pop()
        if sid not in seen:
            seen.add(sid)
            found.append(sid)
            stack.extend(children.get(sid, ()))
    return found


def _with_live_below(roots: list[str], children: dict[str, list[str]], live: set[str]) -> set[str]:
    """The stacks under ``roots`` (and roots) that are live or have a live stack below."""
    blocked: set[str] = set()
    for sid in _subtree_nodes(roots, children):
        if sid in live:
            blocked.add(sid)
    # Walk up from each live stack: every ancestor within the subtrees is blocked.
    parent = {child: owner for owner, kids in children.items() for child in kids}
    for sid in list(blocked):
        owner = parent.get(sid)
        while owner is not None and owner not in blocked:
            blocked.add(owner)
            owner = parent.get(owner)
    return blocked


def _purge_stacks(conn: Connection, stack_ids: list[str], children: dict[str, list[str]]) -> int:
    """Delete the stacks (a set closed under nesting) and all their rows; returns how many
    raw templates went with them. Writes."""
    templates = _templates_of(conn, stack_ids)
    for table in tables.DELETE_ORDER:
        clause = _OWNED.get(table.name)
        if clause is not None:
            conn.execute(sa.delete(table).where(clause(stack_ids)))
    # MariaDB checks the owner foreign key row by row: nested stacks go first.
    for group in _by_height(stack_ids, children):
        conn.execute(sa.delete(S).where(S.c.id.in_(group)))
    return _delete_unreferenced_templates(conn, templates)


def _by_height(stack_ids: list[str], children: dict[str, list[str]]) -> list[list[str]]:
    """``stack_ids`` grouped by their height in the nesting (leaves first)."""
    members = set(stack_ids)
    height: dict[str, int] = {}

    def measure(sid: str, depth: int = 0) -> int:
        if sid not in height:
            if depth > len(members):  # an owner cycle: stop rather than recurse forever
                return 0
            kids = [k for k in children.get(sid, ()) if k in members]
            height[sid] = 1 + max((measure(k, depth + 1) for k in kids), default=-1)
        return height[sid]

    for sid in stack_ids:
        measure(sid)
    groups: dict[int, list[str]] = {}
    for sid in stack_ids:
        groups.setdefault(height[sid], []).append(sid)
    return [sorted(groups[h]) for h in sorted(groups)]


def _templates_of(conn: Connection, stack_ids: list[str]) -> set[str]:
    """The raw templates the stacks and their resources and traversals refer to."""
    queries = [
        sa.select(S.c.raw_template_id).where(S.c.id.in_(stack_ids)),
        sa.select(S.c.prev_raw_template_id).where(S.c.id.in_(stack_ids)),
        sa.select(R.c.raw_template_id).distinct().where(R.c.stack_id.in_(stack_ids)),
        sa.select(TR.c.raw_template_id).distinct().where(TR.c.stack_id.in_(stack_ids)),
    ]
    return {tid for q in queries for tid in conn.execute(q).scalars() if tid is not None}


def _delete_unreferenced_templates(conn: Connection, candidates: set[str]) -> int:
    """Delete those of ``candidates`` no remaining stack, resource or traversal uses."""
    if not candidates:
        return 0
    used = sa.or_(
        sa.exists().where(S.c.raw_template_id == T.c.id),
        sa.exists().where(S.c.prev_raw_template_id == T.c.id),
        sa.exists().where(R.c.raw_template_id == T.c.id),
        sa.exists().where(TR.c.raw_template_id == T.c.id),
    )
    result = conn.execute(sa.delete(T).where(T.c.id.in_(sorted(candidates)), ~used))
    return int(result.rowcount)
