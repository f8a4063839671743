"""Traversals: one per stack action, started with a CAS on the stack's current traversal.

``start_traversal`` is one transaction step: it swaps ``stack.current_traversal_id``
from the expected old value to the new id (and sets the stack IN_PROGRESS for the
action), marks the old traversal SUPERSEDED if it is still RUNNING, inserts the
traversal with ``remaining_nodes`` = the node count, and bulk-inserts its node
tasks (READY when nothing precedes them, BLOCKED otherwise, ``pending_deps`` =
in-degree) and edges. When the CAS fails it returns False having written
nothing. Finishing is a CAS on ``state`` (the first outcome wins).
Imports: stdlib, SQLAlchemy, ``kiln.core`` and ``kiln.db``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.core.errors import InternalError
from kiln.db import tables
from kiln.db.common import from_row, param
from kiln.db.errors import NotFound
from kiln.db.tasks import NodeTask

S = tables.stack
TR = tables.traversal
N = tables.node_task
ED = tables.traversal_edge

ACTIONS = frozenset(
    {"CREATE", "UPDATE", "DELETE", "ROLLBACK", "SUSPEND", "RESUME", "CHECK", "SNAPSHOT"}
    | {"RESTORE", "ADOPT"}
)
FINAL_STATES = frozenset({"COMPLETE", "FAILED", "CANCELLED", "SUPERSEDED"})


@dataclass(frozen=True, slots=True)
class Traversal:
    id: str
    stack_id: str
    action: str
    raw_template_id: str
    state: str
    remaining_nodes: int
    cancel_requested: bool
    rollback_on_failure: bool
    failure_reason: str | None
    started_at: datetime
    deadline_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One node of a traversal plan, as ``start_traversal`` inserts it."""

    node_key: str
    resource_name: str
    kind: str = "CREATE_OR_UPDATE"
    resource_id: str | None = None
    priority: int = 0


def _check_plan(nodes: Sequence[NodeSpec], edges: Sequence[tuple[str, str]]) -> Counter[str]:
    keys = [n.node_key for n in nodes]
    if len(set(keys)) != len(keys):
        dup = sorted(k for k, c in Counter(keys).items() if c > 1)
        raise InternalError(f"duplicate node keys in traversal plan: {dup}")
    known = set(keys)
    if len(set(edges)) != len(edges):
        raise InternalError("duplicate edges in traversal plan")
    for src, dst in edges:
        if src not in known or dst not in known or src == dst:
            raise InternalError(f"bad edge in traversal plan: {src!r} -> {dst!r}")
    return Counter(dst for _src, dst in edges)


def start_traversal(
    conn: Connection,
    *,
    traversal_id: str,
    stack_id: str,
    expected_current: str | None,
    action: str,
    raw_template_id: str,
    nodes: Sequence[NodeSpec],
    edges: Sequence[tuple[str, str]],
    now: datetime,
    deadline_at: datetime | None = None,
    rollback_on_failure: bool = False,
    status_reason: str | None = None,
) -> bool:
    """Start a traversal if ``expected_current`` is still the stack's current one. Writes.

    ``edges`` are (from_node, to_node): ``to_node`` waits for ``from_node``. A
    plan with no nodes starts with ``remaining_nodes`` 0; the caller finishes it.
    """
    if action not in ACTIONS:
        raise InternalError(f"unknown traversal action {action!r}")
    in_degree = _check_plan(nodes, edges)
    current = (
        S.c.current_traversal_id.is_(None)
        if expected_current is None
        else S.c.current_traversal_id == expected_current
    )
    swapped = conn.execute(
        sa.update(S)
        .where(S.c.id == stack_id, current)
        .values(
            current_traversal_id=traversal_id,
            action=action,
            status="IN_PROGRESS",
            status_reason=status_reason if status_reason is not None else f"Stack {action} started",
            updated_at=now,
            version=S.c.version + 1,
        )
    )
    if swapped.rowcount != 1:
        return False
    if expected_current is not None:
        conn.execute(
            sa.update(TR)
            .where(TR.c.id == expected_current, TR.c.state == "RUNNING")
            .values(state="SUPERSEDED", finished_at=now)
        )
    conn.execute(
        sa.insert(TR).values(
            id=traversal_id,
            stack_id=stack_id,
            action=action,
            raw_template_id=raw_template_id,
            state="RUNNING",
            remaining_nodes=len(nodes),
            cancel_requested=False,
            rollback_on_failure=rollback_on_failure,
            failure_reason=None,
            started_at=now,
            deadline_at=deadline_at,
            finished_at=None,
        )
    )
    if nodes:
        root_stack_id = conn.execute(sa.select(S.c.root_id).where(S.c.id == stack_id)).scalar_one()
        conn.execute(
            sa.insert(N),
            [
                {
                    "traversal_id": traversal_id,
                    "node_key": n.node_key,
                    "stack_id": stack_id,
                    "root_stack_id": root_stack_id,
                    "resource_name": n.resource_name,
                    "resource_id": n.resource_id,
                    "kind": n.kind,
                    "pending_deps": in_degree[n.node_key],
                    "state": "BLOCKED" if in_degree[n.node_key] else "READY",
                    "priority": n.priority,
                    "lease_owner": None,
                    "lease_epoch": 0,
                    "lease_expires_at": None,
                    "not_before": now,
                    "attempt": 0,
                    "phase": None,
                    "cookie": None,
                    "result_resource_id": None,
                    "updated_at": now,
                }
                for n in nodes
            ],
        )
    if edges:
        conn.execute(
            sa.insert(ED),
            [{"traversal_id": traversal_id, "from_node": a, "to_node": b} for a, b in edges],
        )
    return True


_GET_TRAVERSAL = sa.select(TR).where(TR.c.id == param(TR.c.id))


def get_traversal(conn: Connection, traversal_id: str) -> Traversal:
    """The traversal with that id; NotFound otherwise."""
    row = conn.execute(_GET_TRAVERSAL, {"w_id": traversal_id}).first()
    if row is None:
        raise NotFound("Traversal", traversal_id)
    return from_row(Traversal, row)


def list_traversals(conn: Connection, stack_id: str) -> list[Traversal]:
    """The stack's traversals, oldest first."""
    query = sa.select(TR).where(TR.c.stack_id == stack_id).order_by(TR.c.started_at, TR.c.id)
    return [from_row(Traversal, row) for row in conn.execute(query)]


def list_overdue(conn: Connection, *, now: datetime) -> list[Traversal]:
    """RUNNING traversals past their deadline (the sweeper fails them)."""
    query = (
        sa.select(TR)
        .where(TR.c.state == "RUNNING", TR.c.deadline_at.is_not(None), TR.c.deadline_at < now)
        .order_by(TR.c.deadline_at, TR.c.id)
    )
    return [from_row(Traversal, row) for row in conn.execute(query)]


def finish_traversal(
    conn: Connection,
    traversal_id: str,
    *,
    state: str,
    now: datetime,
    failure_reason: str | None = None,
    expected_state: str = "RUNNING",
) -> bool:
    """CAS the traversal from ``expected_state`` to a final ``state``. Writes.

    Returns False (nothing written) if it was no longer in ``expected_state``.
    """
    if state not in FINAL_STATES:
        raise InternalError(f"{state!r} is not a final traversal state")
    values: dict[str, object] = {"state": state, "finished_at": now}
    if failure_reason is not None:
        values["failure_reason"] = failure_reason
    result = conn.execute(
        sa.update(TR).where(TR.c.id == traversal_id, TR.c.state == expected_state).values(**values)
    )
    return result.rowcount == 1


def request_cancel(conn: Connection, traversal_id: str) -> bool:
    """Raise the cancel flag of a RUNNING traversal; False if it is not running. Writes."""
    result = conn.execute(
        sa.update(TR)
        .where(TR.c.id == traversal_id, TR.c.state == "RUNNING")
        .values(cancel_requested=True)
    )
    return result.rowcount == 1


def list_tasks(
    conn: Connection, traversal_id: str, *, states: Sequence[str] | None = None
) -> list[NodeTask]:
    """The traversal's node tasks (optionally only those in ``states``), by node key."""
    query = sa.select(N).where(N.c.traversal_id == traversal_id)
    if states is not None:
        query = query.where(N.c.state.in_(list(states)))
    # Sorted here, not by the database, whose collation differs per dialect.
    return sorted((from_row(NodeTask, row) for row in conn.execute(query)), key=_by_key)


def _by_key(task: NodeTask) -> str:
    return task.node_key


def list_edges(conn: Connection, traversal_id: str) -> list[tuple[str, str]]:
    """The traversal's edges (from_node, to_node), sorted."""
    query = sa.select(ED.c.from_node, ED.c.to_node).where(ED.c.traversal_id == traversal_id)
    return sorted((row.from_node, row.to_node) for row in conn.execute(query))


def predecessors(conn: Connection, traversal_id: str, node_key: str) -> list[str]:
    """The nodes ``node_key`` waits for, sorted (the sweeper recomputes readiness from them)."""
    query = sa.select(ED.c.from_node).where(
        ED.c.traversal_id == traversal_id, ED.c.to_node == node_key
    )
    return sorted(conn.execute(query).scalars())


def set_rollback_on_failure(conn: Connection, traversal_id: str, value: bool) -> None:
    """Whether the traversal rolls back when it fails or is cancelled. Writes."""
    conn.execute(sa.update(TR).where(TR.c.id == traversal_id).values(rollback_on_failure=value))
