"""The durable work queue: node tasks, their leases, and the one-transaction completion.

A task is claimed with a lease (``lease_owner``, ``lease_epoch`` + 1,
``lease_expires_at``). The ``Lease`` a claim returns is a fencing token: every
later write by the owner matches ``lease_owner``, ``lease_epoch`` and state
CLAIMED, and raises ``FencedOut`` when that matches nothing (the lease expired
and was reclaimed, or taken over). Claims use ``SELECT … FOR UPDATE SKIP LOCKED``
then an UPDATE by primary key on PostgreSQL and MariaDB; SQLite serialises
writers. ``complete_task`` and ``fail_task`` are in ``kiln.db.completion``.
Lower ``priority`` values are claimed first, then older ``not_before``. A claim
may cap the running tasks of each stack tree (``kiln.db.stack_limits``).
Imports: stdlib, SQLAlchemy, ``kiln.core`` and ``kiln.db``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.core.errors import InternalError
from kiln.db import tables
from kiln.db.common import (
    KEEP,
    Keep,
    changes,
    execute_fenced,
    from_row,
    is_mysql,
    param,
    set_params,
    set_values,
)
from kiln.db.errors import NotFound
from kiln.db.stack_limits import (
    BUSY_ROOTS,
    FULL_ROOTS,
    LIMIT,
    LIVE_AT,
    fits_without_count,
    next_wake_with_limit,
    pick_within_limit,
    running_by_root,
)

N = tables.node_task

STATES = frozenset(
    {"BLOCKED", "READY", "CLAIMED", "WAITING_RESOURCE", "WAITING_CHILD", "DONE", "FAILED"}
    | {"SKIPPED"}
)
WAITING_STATES = frozenset({"WAITING_RESOURCE", "WAITING_CHILD", "WAITING_HOOK"})


@dataclass(frozen=True, slots=True)
class Lease:
    """The fencing token of a claimed task."""

    traversal_id: str
    node_key: str
    owner: str
    epoch: int


@dataclass(frozen=True, slots=True)
class NodeTask:
    traversal_id: str
    node_key: str
    stack_id: str
    root_stack_id: str
    resource_name: str
    resource_id: str | None
    kind: str
    pending_deps: int
    state: str
    priority: int
    lease_owner: str | None
    lease_epoch: int
    lease_expires_at: datetime | None
    not_before: datetime
    attempt: int
    phase: str | None
    cookie: Any
    result_resource_id: str | None
    updated_at: datetime

    @property
    def lease(self) -> Lease:
        """The fencing token of this claimed task."""
        if self.state != "CLAIMED" or self.lease_owner is None:
            raise InternalError(f"task {self.node_key} is not claimed")
        return Lease(self.traversal_id, self.node_key, self.lease_owner, self.lease_epoch)


# The WHERE clause of every write by a task's owner, with placeholders (statements
# are built once); filled by ``fence_params``.
FENCE = sa.and_(
    N.c.traversal_id == param(N.c.traversal_id, "f_"),
    N.c.node_key == param(N.c.node_key, "f_"),
    N.c.lease_owner == param(N.c.lease_owner, "f_"),
    N.c.lease_epoch == param(N.c.lease_epoch, "f_"),
    N.c.state == "CLAIMED",
)


def fence_params(lease: Lease) -> dict[str, Any]:
    return {
        "f_traversal_id": lease.traversal_id,
        "f_node_key": lease.node_key,
        "f_lease_owner": lease.owner,
        "f_lease_epoch": lease.epoch,
    }


@functools.cache
def _fenced_update(names: tuple[str, ...], bump_attempt: bool) -> sa.Update:
    values: dict[str, Any] = set_params(N, names)
    if bump_attempt:
        values["attempt"] = N.c.attempt + 1
    return sa.update(N).where(FENCE).values(values)


def update_fenced(
    conn: Connection, lease: Lease, values: dict[str, Any], *, bump_attempt: bool = False
) -> None:
    """SET ``values`` (and ``attempt + 1``) on the lease's task; ``FencedOut`` if stale."""
    params = set_values(values)
    params.update(fence_params(lease))
    execute_fenced(
        conn, _fenced_update(tuple(values), bump_attempt), fenced_out_message(lease), params
    )


def fenced_out_message(lease: Lease) -> str:
    return (
        f"task {lease.node_key} of traversal {lease.traversal_id} is no longer "
        f"claimed by {lease.owner} at epoch {lease.epoch}"
    )


def _by_keys(keys: list[tuple[str, str]]) -> Any:
    """Rows with these primary keys, grouped by traversal so every dialect uses the index."""
    grouped: dict[str, list[str]] = defaultdict(list)
    for traversal_id, node_key in keys:
        grouped[traversal_id].append(node_key)
    return sa.or_(
        *(
            sa.and_(N.c.traversal_id == tid, N.c.node_key.in_(node_keys))
            for tid, node_keys in grouped.items()
        )
    )


@functools.cache
def _claim_query(lock: bool, limit: int) -> sa.Select[Any]:
    query = (
        sa.select(N)
        .where(N.c.state == "READY", N.c.not_before <= param(N.c.not_before))
        .order_by(N.c.priority, N.c.not_before, N.c.traversal_id, N.c.node_key)
        .limit(limit)
    )
    return query.with_for_update(skip_locked=True) if lock else query


@functools.cache
def _limited_claim_query(lock: bool, limit: int) -> sa.Select[Any]:
    """Like ``_claim_query`` without full stack trees, busy ones after the others."""
    busy_last = sa.case((N.c.root_stack_id.in_(BUSY_ROOTS), 1), else_=0)
    query = (
        sa.select(N)
        .where(
            N.c.state == "READY",
            N.c.not_before <= param(N.c.not_before),
            N.c.root_stack_id.not_in(FULL_ROOTS),
        )
        .order_by(busy_last, N.c.priority, N.c.not_before, N.c.traversal_id, N.c.node_key)
        .limit(limit)
    )
    return query.with_for_update(skip_locked=True) if lock else query


_CLAIM = (
    sa.update(N)
    .where(N.c.state == "READY")
    .values(
        state="CLAIMED",
        lease_epoch=N.c.lease_epoch + 1,
        **set_params(N, ("lease_owner", "lease_expires_at", "updated_at")),
    )
)
_CLAIM_ONE_TRAVERSAL = _CLAIM.where(
    N.c.traversal_id == param(N.c.traversal_id),
    N.c.node_key.in_(sa.bindparam("w_node_key", expanding=True, type_=N.c.node_key.type)),
)

#: At most this many candidate reads per claim with a per-stack limit: a further
#: read happens only when a stack tree ran out of room in a full read.
CLAIM_ROUNDS = 3


def claim_tasks(
    conn: Connection,
    engine_id: str,
    *,
    now: datetime,
    lease: timedelta,
    limit: int,
    per_stack_limit: int = 0,
) -> list[NodeTask]:
    """Claim up to ``limit`` READY tasks due at ``now``, leased until ``now + lease``. Writes.

    Two engines claiming concurrently never get the same task: the candidates
    are row-locked (skipping rows another claimer holds) on PostgreSQL and
    MariaDB, and the UPDATE re-checks READY in every dialect.

    ``per_stack_limit`` (0: none) caps the tasks of one stack tree (a root stack
    and its nested stacks, by ``root_stack_id``) that are running (CLAIMED under
    a live lease) across all engines. Full trees are left out in SQL, so their
    READY tasks never hide other trees' tasks; trees with nothing running come
    first, then the priority order as without a cap. When the candidates hold
    more than one task of a tree, the running tasks are counted (one small read)
    and a tree's surplus is passed over; a tree that fills up so is left out of
    a further read (at most ``CLAIM_ROUNDS``) for the rest of the batch.

    The cap is strict on SQLite (writers are serialised) and soft on PostgreSQL
    and MariaDB: under READ COMMITTED two engines claiming at the same moment
    each count the running tasks without the other's uncommitted claims, so a
    tree may exceed the cap by up to one batch per concurrent claimer. A strict
    cap would need a lock per tree taken by every claim, which serialises the
    claims of all engines on the busiest tree, the one the cap is for.
    """
    lock = conn.dialect.name != "sqlite"
    if per_stack_limit <= 0:
        query = _claim_query(lock, limit)
        found = [from_row(NodeTask, row) for row in conn.execute(query, {"w_not_before": now})]
        return _mark_claimed(conn, found, engine_id, now, now + lease)
    params = {"w_not_before": now, LIVE_AT: now, LIMIT: per_stack_limit}
    claimed: list[NodeTask] = []
    running: dict[str, int] | None = None
    for _round in range(CLAIM_ROUNDS):
        room = limit - len(claimed)
        candidates = conn.execute(_limited_claim_query(lock, room), params).all()
        if running is None and fits_without_count(candidates):
            picked, cut = candidates, False
        else:
            if running is None:
                running = running_by_root(conn, now=now)
            picked, cut = pick_within_limit(candidates, running, per_stack_limit, room)
        found = [from_row(NodeTask, row) for row in picked]
        claimed += _mark_claimed(conn, found, engine_id, now, now + lease)
        if not cut or len(candidates) < room:
            break
    return claimed


def _mark_claimed(
    conn: Connection, found: list[NodeTask], engine_id: str, now: datetime, expires: datetime
) -> list[NodeTask]:
    """Lease the found READY tasks to ``engine_id`` (one UPDATE by primary key)."""
    if not found:
        return []
    params = set_values({"lease_owner": engine_id, "lease_expires_at": expires, "updated_at": now})
    traversals = {t.traversal_id for t in found}
    if len(traversals) == 1:
        params["w_traversal_id"] = found[0].traversal_id
        params["w_node_key"] = [t.node_key for t in found]
        result = conn.execute(_CLAIM_ONE_TRAVERSAL, params)
    else:
        keys = _by_keys([(t.traversal_id, t.node_key) for t in found])
        result = conn.execute(_CLAIM.where(keys), params)
    if result.rowcount != len(found):
        # Only possible when writers are not serialised (a SQLite claim outside
        # kiln.db.engine.write): refuse rather than hand out a shared task.
        raise InternalError("claimed tasks changed under the claim; retry in a write transaction")
    return [
        replace(
            t,
            state="CLAIMED",
            lease_owner=engine_id,
            lease_epoch=t.lease_epoch + 1,
            lease_expires_at=expires,
            updated_at=now,
        )
        for t in found
    ]


_GET_TASK = sa.select(N).where(
    N.c.traversal_id == param(N.c.traversal_id), N.c.node_key == param(N.c.node_key)
)


def get_task(conn: Connection, traversal_id: str, node_key: str) -> NodeTask:
    """The task with that key; NotFound otherwise."""
    params = {"w_traversal_id": traversal_id, "w_node_key": node_key}
    row = conn.execute(_GET_TASK, params).first()
    if row is None:
        raise NotFound("Task", f"{traversal_id}/{node_key}")
    return from_row(NodeTask, row)


def record_progress(
    conn: Connection, lease: Lease, *, now: datetime, phase: str | None, cookie: Any = KEEP
) -> None:
    """Persist the owner's phase (and poll cookie) before/after a cloud call. Fenced; writes."""
    update_fenced(conn, lease, {**changes(phase=phase, cookie=cookie), "updated_at": now})


def requeue_task(
    conn: Connection,
    lease: Lease,
    *,
    now: datetime,
    not_before: datetime,
    phase: str | Keep | None = KEEP,
    cookie: Any = KEEP,
    retry: bool = False,
) -> None:
    """Put a claimed task back to READY until ``not_before``, lease cleared. Fenced; writes.

    Phase and cookie are kept (or replaced when given); ``retry`` counts an attempt.
    """
    values = changes(phase=phase, cookie=cookie)
    values.update(
        state="READY",
        lease_owner=None,
        lease_expires_at=None,
        not_before=not_before,
        updated_at=now,
    )
    update_fenced(conn, lease, values, bump_attempt=retry)


def wait_task(
    conn: Connection,
    lease: Lease,
    *,
    now: datetime,
    state: str,
    phase: str | Keep | None = KEEP,
    cookie: Any = KEEP,
) -> None:
    """Park a claimed task in a WAITING_* state, lease cleared. Fenced; writes."""
    if state not in WAITING_STATES:
        raise InternalError(f"{state!r} is not a waiting state")
    values = changes(phase=phase, cookie=cookie)
    values.update(state=state, lease_owner=None, lease_expires_at=None, updated_at=now)
    update_fenced(conn, lease, values)


def wake_task(conn: Connection, traversal_id: str, node_key: str, *, now: datetime) -> bool:
    """Make a WAITING_* task READY now; False if it was not waiting. Writes."""
    result = conn.execute(
        sa.update(N)
        .where(
            N.c.traversal_id == traversal_id,
            N.c.node_key == node_key,
            N.c.state.in_(sorted(WAITING_STATES)),
        )
        .values(state="READY", not_before=now, updated_at=now)
    )
    return result.rowcount == 1


def reclaim_expired(conn: Connection, *, now: datetime) -> int:
    """CLAIMED tasks whose lease expired before ``now`` become READY; returns how many. Writes.

    Phase, cookie, attempt and epoch are kept; the next claim bumps the epoch.
    """
    result = conn.execute(
        sa.update(N)
        .where(N.c.state == "CLAIMED", N.c.lease_expires_at < now)
        .values(state="READY", lease_owner=None, lease_expires_at=None, updated_at=now)
    )
    return int(result.rowcount)


def count_ready(conn: Connection, *, now: datetime) -> int:
    """How many tasks are READY and due at ``now`` (work an engine could claim)."""
    count = conn.execute(
        sa.select(sa.func.count()).select_from(N).where(N.c.state == "READY", N.c.not_before <= now)
    ).scalar_one()
    return int(count)


def next_wake_at(
    conn: Connection, *, now: datetime | None = None, per_stack_limit: int = 0
) -> datetime | None:
    """When a poller should look again: the earliest ``not_before`` of a READY task.

    With ``per_stack_limit`` and ``now``, a task due now counts only if a claim
    could take it (``kiln.db.stack_limits.next_wake_with_limit``), so that an
    idle worker does not spin on a full stack's tasks.
    """
    if per_stack_limit > 0 and now is not None:
        return next_wake_with_limit(conn, now=now, per_stack_limit=per_stack_limit)
    value: datetime | None = conn.execute(
        sa.select(sa.func.min(N.c.not_before)).where(N.c.state == "READY")
    ).scalar_one()
    return value


def count_by_state(conn: Connection, traversal_id: str) -> dict[str, int]:
    """How many of the traversal's tasks are in each state (states with none are absent)."""
    rows = conn.execute(
        sa.select(N.c.state, sa.func.count())
        .where(N.c.traversal_id == traversal_id)
        .group_by(N.c.state)
    )
    return {state: int(count) for state, count in rows}


def readback_needed(conn: Connection) -> bool:
    """Whether UPDATE … RETURNING is missing (MariaDB): read rows back instead."""
    return is_mysql(conn) or not conn.dialect.update_returning


def set_result_resource(conn: Connection, lease: Lease, *, resource_id: str, now: datetime) -> None:
    """Record the row a claimed task now works on (its replacement). Fenced; writes."""
    update_fenced(conn, lease, {"result_resource_id": resource_id, "updated_at": now})


def resource_in_flight(conn: Connection, traversal_id: str, resource_id: str) -> bool:
    """Whether a task of the traversal has an action in flight on that row.

    In flight: the task recorded a phase (the action reached, or may have
    reached, the cloud) and is not finished. A task of a newer traversal
    waits for such a task before it touches the row.
    """
    query = (
        sa.select(N.c.node_key)
        .where(
            N.c.traversal_id == traversal_id,
            N.c.phase.is_not(None),
            N.c.state.not_in(("DONE", "FAILED", "SKIPPED")),
            sa.or_(N.c.resource_id == resource_id, N.c.result_resource_id == resource_id),
        )
        .limit(1)
    )
    return conn.execute(query).first() is not None


def wake_parked(conn: Connection, *, stack_id: str, resource_id: str, now: datetime) -> int:
    """Tasks parked until later waiting for that row (READY, not started) are due now. Writes.

    Returns how many. Called when an older traversal's task lets go of the row.
    """
    result = conn.execute(
        sa.update(N)
        .where(
            N.c.stack_id == stack_id,
            N.c.state == "READY",
            N.c.phase.is_(None),
            N.c.not_before > now,
            sa.or_(N.c.resource_id == resource_id, N.c.result_resource_id == resource_id),
        )
        .values(not_before=now, updated_at=now)
    )
    return int(result.rowcount)


def hurry_tasks(conn: Connection, traversal_id: str, *, now: datetime) -> int:
    """Make the traversal's waiting READY tasks due now (a cancel must not wait for the
    next poll of a long action). Returns how many moved. Writes."""
    result = conn.execute(
        sa.update(N)
        .where(N.c.traversal_id == traversal_id, N.c.state == "READY", N.c.not_before > now)
        .values(not_before=now)
    )
    return int(result.rowcount or 0)


def hurry_resource_tasks(
    conn: Connection, stack_id: str, resource_name: str, *, now: datetime
) -> int:
    """Make the waiting READY tasks of one resource due now (its nested stack just
    finished: the parent's poll need not wait out its backoff). Returns how many
    moved. Writes."""
    result = conn.execute(
        sa.update(N)
        .where(
            N.c.stack_id == stack_id,
            N.c.resource_name == resource_name,
            N.c.state == "READY",
            N.c.not_before > now,
        )
        .values(not_before=now)
    )
    return int(result.rowcount or 0)
