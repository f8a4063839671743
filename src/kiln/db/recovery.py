"""Operator recovery of a stuck stack (``kiln manage stack resume``).

The sweepers of live engines hand back expired leases and repair lost
traversals on their own; this does it at once for one stack tree, when an
operator knows better than the lease: the engines were all down for long, or an
engine's row was reaped while its tasks still look claimed. For the stack and
its live nested stacks, every CLAIMED task of a running current traversal whose
lease owner is not a live engine (or every CLAIMED task, forced) becomes READY
and due now, keeping its phase and epoch (the next claim bumps the epoch, so a
late write by the old owner is fenced out); then lost traversals of the tree
are repaired. Engines find the READY tasks by their idle poll.
Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables
from kiln.db.repair import lost_traversals, repair_traversal
from kiln.db.stacks import Stack, get_stack

S = tables.stack
TR = tables.traversal
N = tables.node_task
EN = tables.engine


@dataclass(frozen=True, slots=True)
class HandedBack:
    """A task taken from the engine that had claimed it."""

    traversal_id: str
    node_key: str
    stack_id: str
    lease_owner: str | None


@dataclass(frozen=True, slots=True)
class Resumed:
    """What ``resume_stack`` did: tasks handed back, and per repaired traversal the tasks
    it made ready."""

    stack: Stack
    stack_ids: list[str]
    handed_back: list[HandedBack]
    repaired: dict[str, list[str]]


class NotInProgress(Exception):
    """The stack has no action in progress: there is nothing to resume."""

    def __init__(self, stack: Stack) -> None:
        state = "deleted" if stack.deleted_at is not None else f"{stack.action}_{stack.status}"
        super().__init__(f"stack {stack.id} is {state}, not IN_PROGRESS: nothing to resume")
        self.stack = stack


def stack_tree(conn: Connection, stack_id: str) -> list[str]:
    """The stack and its live nested stacks at any depth, parents before children."""
    found = [stack_id]
    frontier = [stack_id]
    while frontier:
        rows = conn.execute(
            sa.select(S.c.id)
            .where(S.c.owner_id.in_(frontier), S.c.deleted_at.is_(None))
            .order_by(S.c.created_at, S.c.id)
        ).scalars()
        frontier = [sid for sid in rows if sid not in found]
        found.extend(frontier)
    return found


def resume_stack(
    conn: Connection,
    stack_id: str,
    *,
    now: datetime,
    alive: timedelta,
    force: bool = False,
) -> Resumed:
    """Hand back the stuck tasks of the stack tree and repair its lost traversals. Writes.

    ``alive``: how recent a heartbeat makes an engine live. NotFound if there is no
    such stack; ``NotInProgress`` (nothing written) unless it is IN_PROGRESS.
    """
    stack = get_stack(conn, stack_id)
    if stack.deleted_at is not None or stack.status != "IN_PROGRESS":
        raise NotInProgress(stack)
    stack_ids = stack_tree(conn, stack_id)
    running = list(
        conn.execute(
            sa.select(TR.c.id)
            .join(S, S.c.current_traversal_id == TR.c.id)
            .where(S.c.id.in_(stack_ids), TR.c.state == "RUNNING")
            .order_by(TR.c.id)
        ).scalars()
    )
    handed_back = _hand_back(conn, running, now=now, alive=alive, force=force)
    lost = set(lost_traversals(conn))
    repaired = {tid: repair_traversal(conn, tid, now=now) for tid in running if tid in lost}
    return Resumed(get_stack(conn, stack_id), stack_ids, handed_back, repaired)


def _hand_back(
    conn: Connection, traversal_ids: list[str], *, now: datetime, alive: timedelta, force: bool
) -> list[HandedBack]:
    if not traversal_ids:
        return []
    query = sa.select(
        N.c.traversal_id, N.c.node_key, N.c.stack_id, N.c.lease_owner, N.c.lease_epoch
    )
    query = query.where(N.c.traversal_id.in_(traversal_ids), N.c.state == "CLAIMED")
    if not force:
        live = sa.select(EN.c.id).where(EN.c.heartbeat_at >= now - alive)
        query = query.where(sa.or_(N.c.lease_owner.is_(None), N.c.lease_owner.not_in(live)))
    done = []
    for row in conn.execute(query.order_by(N.c.traversal_id, N.c.node_key)).all():
        # Only if the claim is still the one we saw (its owner may have just finished it).
        result = conn.execute(
            sa.update(N)
            .where(
                N.c.traversal_id == row.traversal_id,
                N.c.node_key == row.node_key,
                N.c.state == "CLAIMED",
                N.c.lease_epoch == row.lease_epoch,
            )
            .values(
                state="READY",
                lease_owner=None,
                lease_expires_at=None,
                not_before=now,
                updated_at=now,
            )
        )
        if result.rowcount == 1:
            done.append(HandedBack(row.traversal_id, row.node_key, row.stack_id, row.lease_owner))
    return done
