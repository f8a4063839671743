"""kiln.db.traversals: start_traversal's CAS and bulk insert, finishing, cancel."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from dbhelpers import make_stack, make_traversal, new_id
from sqlalchemy.engine import Engine

from kiln.core.errors import InternalError
from kiln.db import tables
from kiln.db.engine import read, write
from kiln.db.errors import NotFound
from kiln.db.stacks import get_stack
from kiln.db.traversals import (
    NodeSpec,
    finish_traversal,
    get_traversal,
    list_edges,
    list_overdue,
    list_tasks,
    list_traversals,
    predecessors,
    request_cancel,
    start_traversal,
)

# a -> b -> d, a -> c -> d, e alone
KEYS = ["a", "b", "c", "d", "e"]
EDGES = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]


def test_start_inserts_traversal_tasks_and_edges(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, KEYS, EDGES, priorities={"e": 5})
    with read(db) as conn:
        trav = get_traversal(conn, traversal_id)
        tasks = {t.node_key: t for t in list_tasks(conn, traversal_id)}
        edges = list_edges(conn, traversal_id)
        got_stack = get_stack(conn, stack.id)
        assert predecessors(conn, traversal_id, "d") == ["b", "c"]
    assert (trav.state, trav.action, trav.remaining_nodes, trav.started_at) == (
        "RUNNING",
        "CREATE",
        5,
        now,
    )
    assert (trav.cancel_requested, trav.finished_at, trav.failure_reason) == (False, None, None)
    assert {k: (t.pending_deps, t.state) for k, t in tasks.items()} == {
        "a": (0, "READY"),
        "b": (1, "BLOCKED"),
        "c": (1, "BLOCKED"),
        "d": (2, "BLOCKED"),
        "e": (0, "READY"),
    }
    assert tasks["e"].priority == 5 and tasks["a"].lease_epoch == 0
    assert tasks["a"].not_before == now and tasks["a"].stack_id == stack.id
    assert edges == sorted(EDGES)
    assert got_stack.current_traversal_id == traversal_id
    assert (got_stack.action, got_stack.status, got_stack.status_reason) == (
        "CREATE",
        "IN_PROGRESS",
        "Stack CREATE started",
    )
    assert got_stack.version == stack.version + 1


def test_start_supersedes_the_running_traversal(db: Engine, now: datetime) -> None:
    stack, first = make_traversal(db, now, ["a"])
    with read(db) as conn:
        stack = get_stack(conn, stack.id)
    later = now + timedelta(seconds=5)
    _, second = make_traversal(db, later, ["a", "b"], [("a", "b")], stack=stack, action="UPDATE")
    with read(db) as conn:
        old = get_traversal(conn, first)
        assert (old.state, old.finished_at) == ("SUPERSEDED", later)
        assert get_traversal(conn, second).state == "RUNNING"
        assert get_stack(conn, stack.id).current_traversal_id == second
        assert [t.id for t in list_traversals(conn, stack.id)] == [first, second]


def test_start_does_not_supersede_a_finished_traversal(db: Engine, now: datetime) -> None:
    stack, first = make_traversal(db, now, ["a"])
    with write(db) as conn:
        assert finish_traversal(conn, first, state="COMPLETE", now=now)
        stack = get_stack(conn, stack.id)
    make_traversal(db, now, ["a"], stack=stack, action="UPDATE")
    with read(db) as conn:
        assert get_traversal(conn, first).state == "COMPLETE"


def test_start_cas_fails_cleanly_when_another_traversal_won(db: Engine, now: datetime) -> None:
    stack, winner = make_traversal(db, now, ["a"])
    # `stack` still says no traversal is current: a stale expectation.
    assert stack.current_traversal_id is None
    with read(db) as conn:
        before = {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
            for t in tables.metadata.sorted_tables
        }
    with write(db) as conn:
        lost = start_traversal(
            conn,
            traversal_id=new_id(),
            stack_id=stack.id,
            expected_current=None,
            action="UPDATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec("x", "x"), NodeSpec("y", "y")],
            edges=[("x", "y")],
            now=now,
        )
        also_lost = start_traversal(
            conn,
            traversal_id=new_id(),
            stack_id=stack.id,
            expected_current="someone-else",
            action="UPDATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec("x", "x")],
            edges=[],
            now=now,
        )
    assert (lost, also_lost) == (False, False)
    with read(db) as conn:
        after = {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
            for t in tables.metadata.sorted_tables
        }
        assert get_stack(conn, stack.id).current_traversal_id == winner
        assert get_traversal(conn, winner).state == "RUNNING"
    assert after == before


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        (["a", "a"], [], "duplicate node keys"),
        (["a"], [("a", "z")], "bad edge"),
        (["a"], [("a", "a")], "bad edge"),
        (["a", "b"], [("a", "b"), ("a", "b")], "duplicate edges"),
    ],
)
def test_bad_plans_are_refused_before_writing(
    db: Engine, now: datetime, nodes: list[str], edges: list[tuple[str, str]], message: str
) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
    with pytest.raises(InternalError, match=message), write(db) as conn:
        start_traversal(
            conn,
            traversal_id=new_id(),
            stack_id=stack.id,
            expected_current=None,
            action="CREATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec(k, k) for k in nodes],
            edges=edges,
            now=now,
        )


def test_empty_plan_starts_with_nothing_remaining(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, [])
    with read(db) as conn:
        assert get_traversal(conn, traversal_id).remaining_nodes == 0
        assert list_tasks(conn, traversal_id) == []


def test_finish_is_a_cas_first_outcome_wins(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    later = now + timedelta(seconds=3)
    with write(db) as conn:
        assert finish_traversal(conn, traversal_id, state="FAILED", now=later, failure_reason="x")
        assert not finish_traversal(
            conn, traversal_id, state="FAILED", now=later, failure_reason="y"
        )
        assert not finish_traversal(conn, traversal_id, state="COMPLETE", now=later)
        with pytest.raises(InternalError, match="not a final traversal state"):
            finish_traversal(conn, traversal_id, state="RUNNING", now=later)
    with read(db) as conn:
        trav = get_traversal(conn, traversal_id)
    assert (trav.state, trav.failure_reason, trav.finished_at) == ("FAILED", "x", later)


def test_cancel_only_a_running_traversal(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    with write(db) as conn:
        assert request_cancel(conn, traversal_id)
        assert get_traversal(conn, traversal_id).cancel_requested
        finish_traversal(conn, traversal_id, state="CANCELLED", now=now)
        assert not request_cancel(conn, traversal_id)


def test_overdue_traversals(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
        start_traversal(
            conn,
            traversal_id="t-deadline",
            stack_id=stack.id,
            expected_current=None,
            action="CREATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec("a", "a")],
            edges=[],
            now=now,
            deadline_at=now + timedelta(minutes=10),
        )
    with read(db) as conn:
        assert list_overdue(conn, now=now + timedelta(minutes=5)) == []
        assert [t.id for t in list_overdue(conn, now=now + timedelta(minutes=11))] == ["t-deadline"]


def test_list_tasks_by_state_and_missing_traversal(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, KEYS, EDGES)
    with read(db) as conn:
        ready = list_tasks(conn, traversal_id, states=["READY"])
        assert [t.node_key for t in ready] == ["a", "e"]
        with pytest.raises(NotFound):
            get_traversal(conn, "missing")
