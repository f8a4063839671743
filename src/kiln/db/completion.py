"""Completing and failing a claimed task: one fenced transaction step each.

``complete_task`` writes, in this order: the task DONE (fenced first, so a
fenced-out owner writes nothing), the resource row (fenced on its ownership,
which is released), each successor's ``pending_deps - 1`` in sorted node_key
order (so concurrent completions lock rows in one order and cannot deadlock),
flipping to READY at 0, ``traversal.remaining_nodes - 1`` (COMPLETE at 0 if
still RUNNING), the stack's status when the traversal completed here and is
still current (CAS on ``current_traversal_id``). The events go before the
traversal's counter on PostgreSQL and SQLite, so that hot row is locked for as
short a time as possible (every completion of the traversal waits for it), and
last on MariaDB (an event insert share-locks the stack row there; taking it last
keeps the stack update from deadlocking with it). The counters flip their state in the same
UPDATE with CASE; PostgreSQL and SQLite read the result with RETURNING,
MariaDB reads the rows back in the same transaction. SET clauses are ordered
so that MariaDB's left-to-right assignment sees the old values too.
Imports: stdlib, SQLAlchemy, ``kiln.core`` and ``kiln.db``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.core.errors import InternalError
from kiln.db import tables
from kiln.db.common import KEEP, Keep, changes, is_mysql, param, set_params
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import ResourceChange, update_resource_cas, write_owned_resource
from kiln.db.stacks import StackStatus, update_stack_status
from kiln.db.tasks import Lease, readback_needed, update_fenced
from kiln.db.types import UTCDateTime

N = tables.node_task
TR = tables.traversal
ED = tables.traversal_edge


@dataclass(frozen=True, slots=True)
class Completion:
    """What a completion changed beyond the task itself."""

    ready: tuple[str, ...]  # successors that became READY, to notify
    remaining_nodes: int
    traversal_completed: bool  # this completion finished the traversal
    stack_updated: bool  # and wrote the stack's status (it was still current)


# A bare datetime inside CASE would not get the column's UTC conversion: type it.
_NOW = sa.bindparam("w_now", type_=UTCDateTime())


def _finish_task(
    conn: Connection,
    lease: Lease,
    *,
    now: datetime,
    state: str,
    resource_id: str | None,
    resource_change: ResourceChange | None,
    result_resource_id: str | Keep | None,
    resource_version: int | None = None,
) -> None:
    values = changes(result_resource_id=result_resource_id)
    values.update(state=state, lease_expires_at=None, updated_at=now)
    update_fenced(conn, lease, values)
    if resource_id is not None and resource_version is not None:
        # A task that never took ownership writes under a CAS on the version it read.
        update_resource_cas(
            conn,
            resource_id,
            resource_change or ResourceChange(),
            now=now,
            expected_version=resource_version,
            what=f"resource {resource_id} changed since version {resource_version}",
        )
    elif resource_id is not None:
        write_owned_resource(
            conn,
            resource_id,
            resource_change or ResourceChange(),
            traversal_id=lease.traversal_id,
            epoch=lease.epoch,
            now=now,
            release=True,
        )


@functools.cache
def _decrement_stmt(returning: bool) -> Any:
    flips = sa.and_(N.c.pending_deps == 1, N.c.state == "BLOCKED")
    stmt = (
        sa.update(N)
        .where(
            N.c.traversal_id == param(N.c.traversal_id),
            N.c.node_key == param(N.c.node_key),
            N.c.pending_deps > 0,
        )
        .ordered_values(
            (N.c.not_before, sa.case((flips, _NOW), else_=N.c.not_before)),
            (N.c.state, sa.case((flips, "READY"), else_=N.c.state)),
            (N.c.pending_deps, N.c.pending_deps - 1),
            (N.c.updated_at, param(N.c.updated_at, "v_")),
        )
    )
    return stmt.returning(N.c.pending_deps, N.c.state) if returning else stmt


_READBACK_SUCCESSORS = sa.select(N.c.node_key, N.c.pending_deps, N.c.state).where(
    N.c.traversal_id == param(N.c.traversal_id),
    N.c.node_key.in_(sa.bindparam("w_keys", expanding=True, type_=N.c.node_key.type)),
)


def _decrement_successors(
    conn: Connection, traversal_id: str, keys: list[str], now: datetime
) -> list[str]:
    """``pending_deps - 1`` on each successor, in the given (sorted) order; returns new READY."""
    ready: list[str] = []
    readback = readback_needed(conn)
    stmt = _decrement_stmt(not readback)
    params = {"w_traversal_id": traversal_id, "w_now": now, "v_updated_at": now}
    for key in keys:
        params["w_node_key"] = key
        if readback:
            if conn.execute(stmt, params).rowcount != 1:
                raise InternalError(
                    f"successor {key} of traversal {traversal_id} has no pending deps"
                )
            continue
        row = conn.execute(stmt, params).first()
        if row is None:
            raise InternalError(f"successor {key} of traversal {traversal_id} has no pending deps")
        if row.pending_deps == 0 and row.state == "READY":
            ready.append(key)
    if readback and keys:
        rows = conn.execute(_READBACK_SUCCESSORS, {"w_traversal_id": traversal_id, "w_keys": keys})
        ready = sorted(r.node_key for r in rows if r.pending_deps == 0 and r.state == "READY")
    return ready


_COUNT_DOWN_COLS = (TR.c.stack_id, TR.c.action, TR.c.remaining_nodes, TR.c.state)
_READBACK_TRAVERSAL = sa.select(*_COUNT_DOWN_COLS).where(TR.c.id == param(TR.c.id))


@functools.cache
def _count_down_stmt(returning: bool) -> Any:
    done = sa.and_(TR.c.remaining_nodes == 1, TR.c.state == "RUNNING")
    stmt = (
        sa.update(TR)
        .where(TR.c.id == param(TR.c.id), TR.c.remaining_nodes > 0)
        .ordered_values(
            (TR.c.finished_at, sa.case((done, _NOW), else_=TR.c.finished_at)),
            (TR.c.state, sa.case((done, "COMPLETE"), else_=TR.c.state)),
            (TR.c.remaining_nodes, TR.c.remaining_nodes - 1),
        )
    )
    return stmt.returning(*_COUNT_DOWN_COLS) if returning else stmt


def _count_down(conn: Connection, traversal_id: str, now: datetime) -> Any:
    """``remaining_nodes - 1``, COMPLETE at 0 if RUNNING.

    Returns the traversal's stack_id, action, remaining_nodes and state.
    """
    params = {"w_id": traversal_id, "w_now": now}
    row: Any
    if readback_needed(conn):
        row = None
        if conn.execute(_count_down_stmt(False), params).rowcount == 1:
            row = conn.execute(_READBACK_TRAVERSAL, params).first()
    else:
        row = conn.execute(_count_down_stmt(True), params).first()
    if row is None:
        raise InternalError(f"traversal {traversal_id} has no remaining nodes to count down")
    return row


_SUCCESSORS = sa.select(ED.c.to_node).where(
    ED.c.traversal_id == param(ED.c.traversal_id), ED.c.from_node == param(ED.c.from_node)
)


def complete_task(
    conn: Connection,
    lease: Lease,
    *,
    now: datetime,
    resource_id: str | None = None,
    resource_change: ResourceChange | None = None,
    events: Sequence[NewEvent] = (),
    result_resource_id: str | Keep | None = KEEP,
    successors: Sequence[str] | None = None,
    stack_outcome: StackStatus | None = None,
    resource_version: int | None = None,
) -> Completion:
    """Mark a claimed task DONE and propagate, as one fenced step. Writes.

    ``resource_id`` names the row the task owns: ``resource_change`` is applied
    to it and its ownership released. ``successors`` (the plan's, when cached)
    saves reading the edges; pass ``()`` for a task of a superseded traversal,
    which must not propagate. The stack gets ``stack_outcome`` (default: the
    traversal's action COMPLETE) if this completion finished the traversal and
    it is still current. ``FencedOut`` (nothing written) if the lease is stale.
    ``resource_version``: write the row under a CAS on that version instead of
    as its owner (a one-step action never took ownership).
    """
    _finish_task(
        conn,
        lease,
        now=now,
        state="DONE",
        resource_id=resource_id,
        resource_change=resource_change,
        result_resource_id=result_resource_id,
        resource_version=resource_version,
    )
    if successors is None:
        successors = (
            conn.execute(
                _SUCCESSORS, {"w_traversal_id": lease.traversal_id, "w_from_node": lease.node_key}
            )
            .scalars()
            .all()
        )
    ready = _decrement_successors(conn, lease.traversal_id, sorted(set(successors)), now)
    events_last = is_mysql(conn)
    if not events_last:
        # Every completion of the traversal updates its one row, which stays locked
        # until the commit: the less written after it, the shorter the queue behind it.
        add_events(conn, events, now=now)
    row = _count_down(conn, lease.traversal_id, now)
    completed = row.remaining_nodes == 0 and row.state == "COMPLETE"
    stack_updated = False
    if completed:
        outcome = stack_outcome or StackStatus(
            row.action, "COMPLETE", f"Stack {row.action} completed successfully"
        )
        stack_updated = update_stack_status(
            conn, row.stack_id, traversal_id=lease.traversal_id, outcome=outcome, now=now
        )
    if events_last:
        add_events(conn, events, now=now)
    return Completion(tuple(ready), row.remaining_nodes, completed, stack_updated)


_FAIL_TRAVERSAL = (
    sa.update(TR)
    .where(TR.c.id == param(TR.c.id), TR.c.state == "RUNNING")
    .values(state="FAILED", **set_params(TR, ("failure_reason", "finished_at")))
)
_TRAVERSAL_STACK = sa.select(TR.c.stack_id, TR.c.action).where(TR.c.id == param(TR.c.id))


def fail_task(
    conn: Connection,
    lease: Lease,
    *,
    now: datetime,
    reason: str,
    resource_id: str | None = None,
    resource_change: ResourceChange | None = None,
    events: Sequence[NewEvent] = (),
    stack_outcome: StackStatus | None = None,
    winner_events: Sequence[NewEvent] = (),
) -> bool:
    """Mark a claimed task FAILED and fail its traversal, as one fenced step. Writes.

    The traversal goes RUNNING -> FAILED with ``reason`` (only the first failure
    wins); the winner also writes the stack's status (default: the traversal's
    action FAILED with ``reason``) if the traversal is still current, and
    ``winner_events`` (the stack's FAILED event: one per traversal). Returns
    whether this call failed the traversal. ``FencedOut`` if the lease is stale.
    """
    _finish_task(
        conn,
        lease,
        now=now,
        state="FAILED",
        resource_id=resource_id,
        resource_change=resource_change,
        result_resource_id=KEEP,
    )
    won = (
        conn.execute(
            _FAIL_TRAVERSAL,
            {"w_id": lease.traversal_id, "v_failure_reason": reason, "v_finished_at": now},
        ).rowcount
        == 1
    )
    if won:
        trav = conn.execute(_TRAVERSAL_STACK, {"w_id": lease.traversal_id}).one()
        outcome = stack_outcome or StackStatus(trav.action, "FAILED", reason)
        update_stack_status(
            conn, trav.stack_id, traversal_id=lease.traversal_id, outcome=outcome, now=now
        )
    add_events(conn, [*events, *(winner_events if won else ())], now=now)
    return won
