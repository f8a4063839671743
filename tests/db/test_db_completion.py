"""kiln.db.completion: the fenced one-transaction completion and failure of a task."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from dbhelpers import make_traversal, new_id
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.completion import Completion, complete_task, fail_task
from kiln.db.engine import read, write
from kiln.db.errors import FencedOut
from kiln.db.events import NewEvent, list_events
from kiln.db.resources import (
    NewResource,
    ResourceChange,
    claim_resource,
    create_resource,
    get_resource,
)
from kiln.db.stacks import StackStatus, get_stack
from kiln.db.tasks import Lease, claim_tasks, get_task, reclaim_expired
from kiln.db.traversals import get_traversal, list_tasks

LEASE = timedelta(seconds=15)


def _claim_one(db: Engine, now: datetime, key: str, engine_id: str = "e1") -> Lease:
    with write(db) as conn:
        claimed = claim_tasks(conn, engine_id, now=now, lease=LEASE, limit=100)
        leases = {t.node_key: t.lease for t in claimed}
        # Put back what we did not ask for, so that tests stay focused.
        for other, lease in leases.items():
            if other != key:
                conn.execute(
                    tables.node_task.update()
                    .where(
                        tables.node_task.c.traversal_id == lease.traversal_id,
                        tables.node_task.c.node_key == other,
                    )
                    .values(state="READY", lease_owner=None)
                )
    return leases[key]


def _complete(db: Engine, lease: Lease, now: datetime, **kw: object) -> Completion:
    with write(db) as conn:
        return complete_task(conn, lease, now=now, **kw)  # type: ignore[arg-type]


def test_completion_decrements_successors_and_readies_them_at_zero(
    db: Engine, now: datetime
) -> None:
    _, traversal_id = make_traversal(
        db, now, ["a", "b", "c", "d"], [("a", "c"), ("b", "c"), ("a", "d")]
    )
    # Any time zone will do: times are stored as UTC.
    later = (now + timedelta(seconds=2)).astimezone(timezone(timedelta(hours=-5)))
    done_a = _complete(db, _claim_one(db, now, "a"), later)
    assert done_a == Completion(
        ready=("d",), remaining_nodes=3, traversal_completed=False, stack_updated=False
    )
    with read(db) as conn:
        tasks = {t.node_key: t for t in list_tasks(conn, traversal_id)}
    assert (tasks["a"].state, tasks["a"].lease_expires_at) == ("DONE", None)
    assert (tasks["c"].pending_deps, tasks["c"].state) == (1, "BLOCKED")
    assert (tasks["d"].pending_deps, tasks["d"].state, tasks["d"].not_before) == (0, "READY", later)
    done_b = _complete(db, _claim_one(db, now, "b"), later)
    assert done_b.ready == ("c",) and done_b.remaining_nodes == 2


def test_last_completion_finishes_traversal_and_sets_stack_status(
    db: Engine, now: datetime
) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"], [("a", "b")])
    _complete(db, _claim_one(db, now, "a"), now)
    end = (now + timedelta(minutes=1)).astimezone(timezone(timedelta(hours=9)))
    last = _complete(db, _claim_one(db, now, "b"), end)
    assert last == Completion(
        ready=(), remaining_nodes=0, traversal_completed=True, stack_updated=True
    )
    with read(db) as conn:
        trav = get_traversal(conn, traversal_id)
        got = get_stack(conn, stack.id)
    assert (trav.state, trav.finished_at, trav.remaining_nodes) == ("COMPLETE", end, 0)
    assert (got.action, got.status, got.status_reason, got.updated_at) == (
        "CREATE",
        "COMPLETE",
        "Stack CREATE completed successfully",
        end,
    )


def test_stack_outcome_can_be_given(db: Engine, now: datetime) -> None:
    stack, _ = make_traversal(db, now, ["a"])
    outcome = StackStatus("CREATE", "COMPLETE", "custom")
    assert _complete(db, _claim_one(db, now, "a"), now, stack_outcome=outcome).stack_updated
    with read(db) as conn:
        assert get_stack(conn, stack.id).status_reason == "custom"


def test_superseded_traversal_never_sets_stack_status(db: Engine, now: datetime) -> None:
    stack, old = make_traversal(db, now, ["a"])
    lease = _claim_one(db, now, "a")
    with read(db) as conn:
        stack = get_stack(conn, stack.id)
    _, new = make_traversal(db, now, ["x"], stack=stack, action="UPDATE")
    result = _complete(db, lease, now, successors=())
    assert result == Completion(
        ready=(), remaining_nodes=0, traversal_completed=False, stack_updated=False
    )
    with read(db) as conn:
        assert get_traversal(conn, old).state == "SUPERSEDED"
        got = get_stack(conn, stack.id)
    assert (got.current_traversal_id, got.action, got.status) == (new, "UPDATE", "IN_PROGRESS")


def test_completed_but_no_longer_current_leaves_stack_alone(db: Engine, now: datetime) -> None:
    stack, _traversal_id = make_traversal(db, now, ["a"])
    lease = _claim_one(db, now, "a")
    # Another writer moved the stack on without superseding (e.g. a direct CAS).
    with write(db) as conn:
        conn.execute(
            tables.stack.update()
            .where(tables.stack.c.id == stack.id)
            .values(current_traversal_id="other")
        )
    result = _complete(db, lease, now)
    assert (result.traversal_completed, result.stack_updated) == (True, False)
    with read(db) as conn:
        assert get_stack(conn, stack.id).status == "IN_PROGRESS"


def _owned_resource(db: Engine, now: datetime, stack_id: str, lease: Lease) -> str:
    rid = new_id()
    with write(db) as conn:
        stack = get_stack(conn, stack_id)
        res = create_resource(
            conn,
            NewResource(rid, stack_id, stack.root_id, "a", "OS::Test", stack.raw_template_id),
            now=now,
        )
        assert claim_resource(
            conn,
            rid,
            traversal_id=lease.traversal_id,
            epoch=lease.epoch,
            expected_version=res.version,
            now=now,
        )
    return rid


def test_completion_writes_resource_and_events_and_releases_ownership(
    db: Engine, now: datetime
) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"], [("a", "b")])
    lease = _claim_one(db, now, "a")
    rid = _owned_resource(db, now, stack.id, lease)
    event = NewEvent(
        new_id(), stack.id, "a", "OS::Test", "CREATE", "COMPLETE", "state changed", "phys-1"
    )
    _complete(
        db,
        lease,
        now,
        resource_id=rid,
        resource_change=ResourceChange(
            action="CREATE", status="COMPLETE", physical_id="phys-1", attributes={"ip": "10.0.0.1"}
        ),
        events=[event],
        result_resource_id=rid,
    )
    with read(db) as conn:
        res = get_resource(conn, rid)
        events = list_events(conn, stack.id)
        task = get_task(conn, traversal_id, "a")
    assert (res.action, res.status, res.physical_id, res.attributes) == (
        "CREATE",
        "COMPLETE",
        "phys-1",
        {"ip": "10.0.0.1"},
    )
    assert (res.owner_traversal_id, res.version) == (None, 3)
    assert [(e.uuid, e.physical_resource_id, e.created_at) for e in events] == [
        (event.uuid, "phys-1", now)
    ]
    assert task.result_resource_id == rid


def _counts(db: Engine) -> dict[str, int]:
    with read(db) as conn:
        return {
            t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
            for t in tables.metadata.sorted_tables
        }


def test_fenced_out_completion_writes_nothing(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"], [("a", "b")])
    zombie = _claim_one(db, now, "a")
    later = now + LEASE + timedelta(seconds=1)
    with write(db) as conn:
        reclaim_expired(conn, now=later)
    _claim_one(db, later, "a", engine_id="e2")
    before = _counts(db)
    event = NewEvent(new_id(), stack.id, "a", "OS::Test", "CREATE", "COMPLETE")
    with pytest.raises(FencedOut), write(db) as conn:
        complete_task(conn, zombie, now=later, events=[event])
    assert _counts(db) == before
    with read(db) as conn:
        assert get_task(conn, traversal_id, "b").pending_deps == 1
        assert get_traversal(conn, traversal_id).remaining_nodes == 2


def test_resource_fence_also_guards_the_completion(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a"])
    lease = _claim_one(db, now, "a")
    rid = _owned_resource(db, now, stack.id, lease)
    with write(db) as conn:  # someone else took the row over
        res = get_resource(conn, rid)
        claim_resource(conn, rid, traversal_id="t2", epoch=1, expected_version=res.version, now=now)
    with pytest.raises(FencedOut, match="is not owned"), write(db) as conn:
        complete_task(
            conn, lease, now=now, resource_id=rid, resource_change=ResourceChange(status="COMPLETE")
        )
    with read(db) as conn:
        assert get_task(conn, traversal_id, "a").state == "CLAIMED"


def test_concurrent_completions_ready_a_join_exactly_once(db: Engine, now: datetime) -> None:
    preds = [f"p{i}" for i in range(8)]
    stack, _traversal_id = make_traversal(db, now, [*preds, "z"], [(p, "z") for p in preds])
    with write(db) as conn:
        leases = [t.lease for t in claim_tasks(conn, "e1", now=now, lease=LEASE, limit=100)]
    assert len(leases) == len(preds)
    results: list[Completion] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(leases))

    def worker(lease: Lease) -> None:
        barrier.wait()
        try:
            event = NewEvent(new_id(), stack.id, lease.node_key, "T", "CREATE", "COMPLETE")
            with write(db) as conn:
                results.append(complete_task(conn, lease, now=now, events=[event]))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(lease,)) for lease in leases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [r.ready for r in results].count(("z",)) == 1
    assert sorted(r.remaining_nodes for r in results) == list(range(1, len(preds) + 1))
    final = _complete(db, _claim_one(db, now, "z"), now)
    assert (final.traversal_completed, final.stack_updated) == (True, True)


def test_fail_task_first_failure_wins(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a", "b"])
    with write(db) as conn:
        a, b = sorted(
            (t.lease for t in claim_tasks(conn, "e1", now=now, lease=LEASE, limit=2)),
            key=lambda x: x.node_key,
        )
    event = NewEvent(new_id(), stack.id, "a", "T", "CREATE", "FAILED", "boom")
    with write(db) as conn:
        assert fail_task(conn, a, now=now, reason="Resource CREATE failed: boom", events=[event])
    with write(db) as conn:
        assert not fail_task(conn, b, now=now, reason="second")
    with read(db) as conn:
        trav = get_traversal(conn, traversal_id)
        got = get_stack(conn, stack.id)
        tasks = {t.node_key: t.state for t in list_tasks(conn, traversal_id)}
        assert len(list_events(conn, stack.id)) == 1
    assert (trav.state, trav.failure_reason, trav.finished_at) == (
        "FAILED",
        "Resource CREATE failed: boom",
        now,
    )
    assert (got.action, got.status, got.status_reason) == (
        "CREATE",
        "FAILED",
        "Resource CREATE failed: boom",
    )
    assert tasks == {"a": "FAILED", "b": "FAILED"}
    with pytest.raises(FencedOut), write(db) as conn:
        fail_task(conn, a, now=now, reason="again")


def test_a_whole_dag_runs_in_dependency_order(db: Engine, now: datetime) -> None:
    keys = [f"n{i}" for i in range(12)]
    edges = [
        (f"n{i}", f"n{j}") for i in range(12) for j in range(i + 1, 12) if (i * 7 + j) % 4 == 0
    ]
    stack, traversal_id = make_traversal(db, now, keys, edges)
    done: list[str] = []
    for _ in range(20):
        with write(db) as conn:
            claimed = claim_tasks(conn, "e1", now=now, lease=LEASE, limit=3)
        if not claimed:
            break
        for task in claimed:
            for src, dst in edges:
                if dst == task.node_key:
                    assert src in done  # every predecessor finished first
            _complete(db, task.lease, now)
            done.append(task.node_key)
    assert sorted(done) == sorted(keys)
    with read(db) as conn:
        assert get_traversal(conn, traversal_id).state == "COMPLETE"
        assert get_stack(conn, stack.id).status == "COMPLETE"


def test_only_the_winning_failure_adds_the_stack_event(db: Engine, now: datetime) -> None:
    """Regression: a second failure in a failed traversal wrote a second stack FAILED event."""
    stack, _ = make_traversal(db, now, ["a", "b"])
    with write(db) as conn:
        a, b = sorted(
            (t.lease for t in claim_tasks(conn, "e1", now=now, lease=LEASE, limit=2)),
            key=lambda x: x.node_key,
        )

    def events(name: str) -> tuple[list[NewEvent], list[NewEvent]]:
        resource = NewEvent(new_id(), stack.id, name, "T", "CREATE", "FAILED", "boom")
        whole = NewEvent(new_id(), stack.id, stack.name, "OS::Heat::Stack", "CREATE", "FAILED")
        return [resource], [whole]

    for lease, wins in ((a, True), (b, False)):
        mine, stack_events = events(lease.node_key)
        with write(db) as conn:
            won = fail_task(
                conn, lease, now=now, reason="boom", events=mine, winner_events=stack_events
            )
        assert won is wins
    with read(db) as conn:
        seen = [(e.resource_name, e.status) for e in list_events(conn, stack.id)]
    assert seen == [("a", "FAILED"), (stack.name, "FAILED"), ("b", "FAILED")]
