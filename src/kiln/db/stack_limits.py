"""Per-stack claim limits: which stack trees are full or busy, and picking within the limit.

A stack tree is a root stack and its nested stacks; its tasks share
``node_task.root_stack_id``. A task is running while it is CLAIMED under a live
lease: one whose lease expired is only waiting for the sweeper, so it neither
counts nor blocks. The subqueries read CLAIMED rows only, which are few (at most
the engines' batches). ``kiln.db.tasks.claim_tasks`` uses these.
Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables

N = tables.node_task

#: The smallest step of stored times: a lease that expires at T is expired
#: (``reclaim_expired``, the running count) from T plus this.
LEASE_RESOLUTION = timedelta(microseconds=1)

# Parameters of the statements below: the time leases must still be live at,
# and the per-stack limit.
LIVE_AT = "w_live_at"
LIMIT = "w_per_stack_limit"


def _running(table: Any) -> Any:
    live_at = sa.bindparam(LIVE_AT, type_=N.c.lease_expires_at.type)
    return sa.and_(table.c.state == "CLAIMED", table.c.lease_expires_at >= live_at)


# An alias, so that these never correlate with the node_task of a query using them.
_R = N.alias("running_task")

#: The stack trees with no room left.
FULL_ROOTS = (
    sa.select(_R.c.root_stack_id)
    .where(_running(_R))
    .group_by(_R.c.root_stack_id)
    .having(sa.func.count() >= sa.bindparam(LIMIT, type_=sa.Integer))
)
#: The stack trees with something running.
BUSY_ROOTS = sa.select(_R.c.root_stack_id).where(_running(_R))

_RUNNING_BY_ROOT = (
    sa.select(N.c.root_stack_id, sa.func.count()).where(_running(N)).group_by(N.c.root_stack_id)
)


class HasRoot(Protocol):
    @property
    def root_stack_id(self) -> str: ...


T = TypeVar("T", bound=HasRoot)


def running_by_root(conn: Connection, *, now: datetime) -> dict[str, int]:
    """How many tasks each stack tree has running (CLAIMED, lease not expired at ``now``)."""
    rows = conn.execute(_RUNNING_BY_ROOT, {LIVE_AT: now})
    return {root: int(count) for root, count in rows}


def fits_without_count(candidates: Sequence[HasRoot]) -> bool:
    """Whether the candidates fit whatever is running: at most one per stack tree (a tree
    that is not full has room for one)."""
    return max(Counter(t.root_stack_id for t in candidates).values(), default=0) <= 1


def pick_within_limit(
    candidates: Sequence[T], running: dict[str, int], per_stack_limit: int, room: int
) -> tuple[list[T], bool]:
    """The first ``room`` candidates that keep their stack tree within ``per_stack_limit``.

    ``running`` is updated with the picks. Returns the picks, and whether a
    candidate was passed over because its tree had no room left.
    """
    picked: list[T] = []
    cut = False
    for task in candidates:
        if len(picked) >= room:
            break
        count = running.get(task.root_stack_id, 0)
        if count >= per_stack_limit:
            cut = True
            continue
        running[task.root_stack_id] = count + 1
        picked.append(task)
    return picked, cut


_NEXT_READY = sa.select(sa.func.min(N.c.not_before)).where(
    N.c.state == "READY", N.c.root_stack_id.not_in(FULL_ROOTS)
)
_FULL_WITH_READY = sa.select(sa.func.min(N.c.lease_expires_at)).where(
    _running(N),
    N.c.root_stack_id.in_(FULL_ROOTS),
    N.c.root_stack_id.in_(sa.select(_R.c.root_stack_id).where(_R.c.state == "READY")),
)


def next_wake_with_limit(
    conn: Connection, *, now: datetime, per_stack_limit: int
) -> datetime | None:
    """The earliest ``not_before`` of a READY task whose stack tree has room.

    A full tree frees a slot when one of its steps ends (that worker claims
    again at once) or, at the latest, just after the earliest of its leases
    expires: that time counts for a full tree with READY tasks, when nothing
    else is due now.
    """
    params = {LIVE_AT: now, LIMIT: per_stack_limit}
    ready: datetime | None = conn.execute(_NEXT_READY, params).scalar_one()
    if ready is not None and ready <= now:
        return ready
    expiry: datetime | None = conn.execute(_FULL_WITH_READY, params).scalar_one()
    times = [t for t in (ready, expiry and expiry + LEASE_RESOLUTION) if t is not None]
    return min(times) if times else None
