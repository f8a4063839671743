"""kiln.db.recovery: a stuck stack tree's tasks go back to the queue; nothing else moves."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from dbhelpers import make_stack, make_traversal, new_id
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.engine import read, write
from kiln.db.engines import register_engine
from kiln.db.errors import NotFound
from kiln.db.recovery import HandedBack, NotInProgress, resume_stack
from kiln.db.stacks import create_stack, soft_delete_stack
from kiln.db.tasks import claim_tasks, get_task
from kiln.db.traversals import list_tasks

LEASE = timedelta(seconds=15)
ALIVE = timedelta(seconds=10)
N = tables.node_task


def _claim_all(db: Engine, engine_id: str, now: datetime) -> None:
    with write(db) as conn:
        assert claim_tasks(conn, engine_id, now=now, lease=LEASE, limit=100)


def _states(db: Engine, traversal_id: str) -> dict[str, tuple[str, str | None]]:
    with read(db) as conn:
        return {t.node_key: (t.state, t.lease_owner) for t in list_tasks(conn, traversal_id)}


@pytest.fixture
def engines(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        register_engine(conn, "dead", host="h1", pid=1, now=now - timedelta(hours=1))
        register_engine(conn, "live", host="h2", pid=2, now=now)


@pytest.mark.usefixtures("engines")
def test_hands_back_only_the_tasks_of_engines_that_are_down(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"])
    _claim_all(db, "dead", now)
    with write(db) as conn:
        # "b" is being run by the live engine
        conn.execute(
            sa.update(N)
            .where(N.c.traversal_id == traversal_id, N.c.node_key == "b")
            .values(lease_owner="live")
        )
        done = resume_stack(conn, stack.id, now=now + timedelta(seconds=1), alive=ALIVE)
    assert done.handed_back == [HandedBack(traversal_id, "a", stack.id, "dead")]
    assert done.repaired == {}
    assert (done.stack.action, done.stack.status) == ("CREATE", "IN_PROGRESS")
    assert _states(db, traversal_id) == {"a": ("READY", None), "b": ("CLAIMED", "live")}
    with read(db) as conn:
        task = get_task(conn, traversal_id, "a")
    # due at once; the epoch stays, so the next claim fences the old owner out
    assert (task.not_before, task.lease_epoch) == (now + timedelta(seconds=1), 1)


@pytest.mark.usefixtures("engines")
def test_force_hands_back_every_claimed_task(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"])
    _claim_all(db, "live", now)
    with write(db) as conn:
        assert resume_stack(conn, stack.id, now=now, alive=ALIVE).handed_back == []
        done = resume_stack(conn, stack.id, now=now, alive=ALIVE, force=True)
    assert [(t.node_key, t.lease_owner) for t in done.handed_back] == [("a", "live"), ("b", "live")]
    assert _states(db, traversal_id) == {"a": ("READY", None), "b": ("READY", None)}


def test_a_reaped_engines_tasks_are_handed_back(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a"])
    _claim_all(db, "gone-from-the-engine-table", now)
    with write(db) as conn:
        done = resume_stack(conn, stack.id, now=now, alive=ALIVE)
    assert [t.node_key for t in done.handed_back] == ["a"]
    assert _states(db, traversal_id) == {"a": ("READY", None)}


@pytest.mark.usefixtures("engines")
def test_nested_stacks_are_resumed_and_other_stacks_left_alone(db: Engine, now: datetime) -> None:
    parent, top = make_traversal(db, now, ["p"])
    with write(db) as conn:
        child = create_stack(
            conn,
            stack_id=new_id(),
            name="child",
            project_id="proj",
            user_id="user",
            raw_template_id=parent.raw_template_id,
            now=now,
            owner_id=parent.id,
            root_id=parent.root_id,
            nested_depth=1,
        )
    child, nested = make_traversal(db, now, ["n"], stack=child)
    _, elsewhere = make_traversal(db, now, ["o"])
    _claim_all(db, "dead", now)
    with write(db) as conn:
        done = resume_stack(conn, parent.id, now=now, alive=ALIVE)
    assert done.stack_ids == [parent.id, child.id]
    assert sorted((t.stack_id, t.node_key) for t in done.handed_back) == sorted(
        [(parent.id, "p"), (child.id, "n")]
    )
    assert _states(db, top) == {"p": ("READY", None)}
    assert _states(db, nested) == {"n": ("READY", None)}
    assert _states(db, elsewhere) == {"o": ("CLAIMED", "dead")}


def test_a_lost_traversal_is_repaired(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"], [("a", "b")])
    _, other = make_traversal(db, now, ["x", "y"], [("x", "y")])
    with write(db) as conn:
        # "a" finished but the decrement of "b" was lost: nothing can ever run
        for tid, key in ((traversal_id, "a"), (other, "x")):
            conn.execute(
                sa.update(N)
                .where(N.c.traversal_id == tid, N.c.node_key == key)
                .values(state="DONE")
            )
        done = resume_stack(conn, stack.id, now=now, alive=ALIVE)
    assert (done.handed_back, done.repaired) == ([], {traversal_id: ["b"]})
    assert _states(db, traversal_id)["b"] == ("READY", None)
    assert _states(db, other)["y"] == ("BLOCKED", None)  # another stack's: the sweeper's


@pytest.mark.usefixtures("engines")
def test_a_stack_not_in_progress_is_refused_and_left_alone(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        idle = make_stack(conn, now)
        with pytest.raises(NotInProgress, match="INIT_COMPLETE, not IN_PROGRESS"):
            resume_stack(conn, idle.id, now=now, alive=ALIVE)
        soft_delete_stack(conn, idle.id, now=now)
        with pytest.raises(NotInProgress, match="deleted"):
            resume_stack(conn, idle.id, now=now, alive=ALIVE)
        with pytest.raises(NotFound):
            resume_stack(conn, "no-such-stack", now=now, alive=ALIVE)
