"""Repairing a lost traversal: RUNNING, yet nothing can ever run.

Readiness is kept by counters decremented in each completion's transaction,
so a traversal should never get lost; this is the safety net the sweeper
runs anyway (Heat's stacks stuck IN_PROGRESS came from exactly such lost
wake-ups). A traversal is lost when it is RUNNING and none of its tasks is
READY, CLAIMED or WAITING. Each BLOCKED task's counter is recomputed from its
edges and the DONE state of its predecessors; tasks left with no unfinished
predecessor become READY. Imports: stdlib, SQLAlchemy, kiln.db.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables

TR = tables.traversal
N = tables.node_task
ED = tables.traversal_edge

_LIVE = ("READY", "CLAIMED", "WAITING_RESOURCE", "WAITING_CHILD", "WAITING_HOOK")


def lost_traversals(conn: Connection) -> list[str]:
    """RUNNING traversals with BLOCKED tasks and no task that can run or is running."""
    live = sa.exists().where(N.c.traversal_id == TR.c.id, N.c.state.in_(_LIVE))
    blocked = sa.exists().where(N.c.traversal_id == TR.c.id, N.c.state == "BLOCKED")
    query = sa.select(TR.c.id).where(TR.c.state == "RUNNING", ~live, blocked).order_by(TR.c.id)
    return list(conn.execute(query).scalars())


def repair_traversal(conn: Connection, traversal_id: str, *, now: datetime) -> list[str]:
    """Recompute the BLOCKED tasks' counters from durable state; returns those made READY."""
    done = set(
        conn.execute(
            sa.select(N.c.node_key).where(N.c.traversal_id == traversal_id, N.c.state == "DONE")
        ).scalars()
    )
    blocked = list(
        conn.execute(
            sa.select(N.c.node_key).where(N.c.traversal_id == traversal_id, N.c.state == "BLOCKED")
        ).scalars()
    )
    waiting: dict[str, int] = {key: 0 for key in blocked}
    for before, after in conn.execute(
        sa.select(ED.c.from_node, ED.c.to_node).where(ED.c.traversal_id == traversal_id)
    ):
        if after in waiting and before not in done:
            waiting[after] += 1
    ready = []
    for key in sorted(waiting):
        count = waiting[key]
        conn.execute(
            sa.update(N)
            .where(N.c.traversal_id == traversal_id, N.c.node_key == key, N.c.state == "BLOCKED")
            .values(
                pending_deps=count,
                state="READY" if count == 0 else "BLOCKED",
                not_before=now,
                updated_at=now,
            )
        )
        if count == 0:
            ready.append(key)
    return ready
