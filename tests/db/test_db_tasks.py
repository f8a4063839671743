"""kiln.db.tasks: claiming with leases, fencing, requeue, waiting, reclaiming, counts."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from dbhelpers import make_traversal
from sqlalchemy.engine import Engine

from kiln.core.errors import InternalError
from kiln.db.engine import create_engine, read, write
from kiln.db.errors import FencedOut
from kiln.db.tasks import (
    Lease,
    claim_tasks,
    count_by_state,
    count_ready,
    get_task,
    next_wake_at,
    reclaim_expired,
    record_progress,
    requeue_task,
    wait_task,
    wake_task,
)
from kiln.db.traversals import list_tasks

LEASE = timedelta(seconds=15)


def _claim(db: Engine, engine_id: str, now: datetime, limit: int = 10) -> list[Lease]:
    with write(db) as conn:
        return [t.lease for t in claim_tasks(conn, engine_id, now=now, lease=LEASE, limit=limit)]


def test_claim_sets_the_lease_in_priority_then_not_before_order(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(
        db, now, ["a", "b", "c", "d"], priorities={"a": 2, "b": 1, "c": 1, "d": 0}
    )
    with write(db) as conn:
        # b becomes due later than c: same priority, so c first.
        lease = claim_tasks(conn, "x", now=now, lease=LEASE, limit=4)
        for t in lease:
            requeue_task(
                conn,
                t.lease,
                now=now,
                not_before=now + (timedelta(1) if t.node_key == "b" else timedelta(0)),
            )
    with write(db) as conn:
        claimed = claim_tasks(conn, "e1", now=now + timedelta(days=2), lease=LEASE, limit=3)
    assert [t.node_key for t in claimed] == ["d", "c", "b"]
    expires = now + timedelta(days=2) + LEASE
    assert {(t.state, t.lease_owner, t.lease_epoch, t.lease_expires_at) for t in claimed} == {
        ("CLAIMED", "e1", 2, expires)
    }
    with read(db) as conn:
        stored = get_task(conn, traversal_id, "d")
    assert stored == claimed[0]


def test_claim_only_due_ready_tasks(db: Engine, now: datetime) -> None:
    _, _traversal_id = make_traversal(db, now, ["a", "b"], [("a", "b")])
    assert _claim(db, "e1", now - timedelta(seconds=1)) == []  # not due yet
    leases = _claim(db, "e1", now)
    assert [lease.node_key for lease in leases] == ["a"]  # b is BLOCKED
    assert _claim(db, "e2", now) == []  # a is CLAIMED


def _claim_all_concurrently(engines: list[Engine], now: datetime, total: int) -> list[list[str]]:
    got: list[list[str]] = [[] for _ in engines]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(engines))

    def worker(n: int) -> None:
        barrier.wait()
        try:
            empty_rounds = 0
            while empty_rounds < 3:
                leases = _claim(engines[n], f"engine-{n}", now, limit=3)
                got[n] += [lease.node_key for lease in leases]
                empty_rounds = 0 if leases else empty_rounds + 1
                if sum(len(g) for g in got) >= total:
                    break
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(len(engines))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return got


def test_two_threads_never_claim_the_same_task(db: Engine, now: datetime) -> None:
    keys = [f"n{i:03d}" for i in range(120)]
    _, traversal_id = make_traversal(db, now, keys)
    first, second = _claim_all_concurrently([db, db], now, len(keys))
    assert set(first).isdisjoint(second)
    assert sorted(first + second) == keys
    with read(db) as conn:
        tasks = list_tasks(conn, traversal_id)
    owners = {t.node_key: t.lease_owner for t in tasks}
    assert all(owners[k] == "engine-0" for k in first)
    assert all(owners[k] == "engine-1" for k in second)


def test_two_engines_with_their_own_connections_never_claim_the_same_task(
    db: Engine, now: datetime
) -> None:
    keys = [f"n{i:03d}" for i in range(120)]
    make_traversal(db, now, keys)
    other = create_engine(db.url)
    try:
        first, second = _claim_all_concurrently([db, other], now, len(keys))
    finally:
        other.dispose()
    assert set(first).isdisjoint(second)
    assert sorted(first + second) == keys


def test_fencing_rejects_a_stale_epoch_and_a_stranger(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    (lease,) = _claim(db, "e1", now)
    stale = Lease(lease.traversal_id, lease.node_key, lease.owner, lease.epoch - 1)
    stranger = Lease(lease.traversal_id, lease.node_key, "e2", lease.epoch)
    for bad in (stale, stranger):
        with pytest.raises(FencedOut, match="is no longer claimed"), write(db) as conn:
            record_progress(conn, bad, now=now, phase="SUBMITTED")
    with write(db) as conn:
        record_progress(conn, lease, now=now, phase="SUBMITTED", cookie={"id": "p1"})
    with read(db) as conn:
        task = get_task(conn, traversal_id, "a")
    assert (task.phase, task.cookie, task.state) == ("SUBMITTED", {"id": "p1"}, "CLAIMED")


def test_takeover_fences_out_the_zombie(db: Engine, now: datetime) -> None:
    _, _traversal_id = make_traversal(db, now, ["a"])
    (zombie,) = _claim(db, "e1", now)
    later = now + LEASE + timedelta(seconds=1)
    with write(db) as conn:
        assert reclaim_expired(conn, now=later) == 1
    (taker,) = _claim(db, "e2", later)
    assert taker.epoch == zombie.epoch + 1
    with pytest.raises(FencedOut), write(db) as conn:
        requeue_task(conn, zombie, now=later, not_before=later)
    with write(db) as conn:
        requeue_task(conn, taker, now=later, not_before=later)


def test_requeue_keeps_phase_and_cookie_and_clears_the_lease(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    (lease,) = _claim(db, "e1", now)
    poll_at = now + timedelta(seconds=4)
    with write(db) as conn:
        record_progress(conn, lease, now=now, phase="POLLING", cookie={"server": "s1"})
        requeue_task(conn, lease, now=now, not_before=poll_at)
        task = get_task(conn, traversal_id, "a")
    assert (task.state, task.lease_owner, task.lease_expires_at) == ("READY", None, None)
    assert (task.phase, task.cookie, task.not_before, task.attempt) == (
        "POLLING",
        {"server": "s1"},
        poll_at,
        0,
    )
    assert _claim(db, "e2", now) == []  # not due before poll_at
    (again,) = _claim(db, "e2", poll_at)
    assert again.epoch == lease.epoch + 1
    with write(db) as conn:
        requeue_task(
            conn, again, now=now, not_before=poll_at, phase="RETRY", cookie=None, retry=True
        )
        task = get_task(conn, traversal_id, "a")
    assert (task.phase, task.cookie, task.attempt) == ("RETRY", None, 1)


def test_reclaim_expired_keeps_progress(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a", "b"])
    leases = _claim(db, "e1", now)
    with write(db) as conn:
        record_progress(conn, leases[0], now=now, phase="SUBMITTED", cookie=[1, 2])
        assert reclaim_expired(conn, now=now + LEASE) == 0  # not expired yet: strictly after
        assert reclaim_expired(conn, now=now + LEASE + timedelta(microseconds=1)) == 2
        tasks = list_tasks(conn, traversal_id)
    assert [(t.state, t.lease_owner, t.lease_expires_at) for t in tasks] == [
        ("READY", None, None)
    ] * 2
    assert (tasks[0].phase, tasks[0].cookie, tasks[0].attempt, tasks[0].lease_epoch) == (
        "SUBMITTED",
        [1, 2],
        0,
        1,
    )


def test_wait_and_wake(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    (lease,) = _claim(db, "e1", now)
    later = now + timedelta(seconds=9)
    with write(db) as conn:
        with pytest.raises(InternalError, match="not a waiting state"):
            wait_task(conn, lease, now=now, state="DONE")
        wait_task(conn, lease, now=now, state="WAITING_CHILD", phase="CHILD")
        assert get_task(conn, traversal_id, "a").state == "WAITING_CHILD"
        assert count_ready(conn, now=later) == 0
        assert wake_task(conn, traversal_id, "a", now=later)
        assert not wake_task(conn, traversal_id, "a", now=later)
        task = get_task(conn, traversal_id, "a")
    assert (task.state, task.not_before, task.phase, task.lease_owner) == (
        "READY",
        later,
        "CHILD",
        None,
    )
    with pytest.raises(FencedOut), write(db) as conn:
        wait_task(conn, lease, now=now, state="WAITING_RESOURCE")


def test_ready_counts_and_next_wake(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a", "b", "c"], [("a", "c")])
    with read(db) as conn:
        assert count_ready(conn, now=now) == 2
        assert count_ready(conn, now=now - timedelta(seconds=1)) == 0
        assert next_wake_at(conn) == now
        assert count_by_state(conn, traversal_id) == {"READY": 2, "BLOCKED": 1}
    leases = _claim(db, "e1", now)
    with write(db) as conn:
        requeue_task(conn, leases[0], now=now, not_before=now + timedelta(seconds=30))
        assert next_wake_at(conn) == now + timedelta(seconds=30)
        assert count_by_state(conn, traversal_id) == {"READY": 1, "CLAIMED": 1, "BLOCKED": 1}
    with write(db) as conn:
        claim_tasks(conn, "e1", now=now + timedelta(minutes=1), lease=LEASE, limit=5)
        assert next_wake_at(conn) is None


def test_lease_property_needs_a_claim(db: Engine, now: datetime) -> None:
    _, traversal_id = make_traversal(db, now, ["a"])
    with read(db) as conn:
        task = get_task(conn, traversal_id, "a")
    with pytest.raises(InternalError, match="not claimed"):
        _ = task.lease


def _traversal_on_rows(db: Engine, now: datetime, rows: dict[str, str]) -> tuple[str, str]:
    """A stack with a traversal whose node key -> resource id are ``rows``; (stack, traversal)."""
    from dbhelpers import make_stack, new_id

    from kiln.db.traversals import NodeSpec, start_traversal

    with write(db) as conn:
        stack = make_stack(conn, now)
        traversal_id = new_id()
        assert start_traversal(
            conn,
            traversal_id=traversal_id,
            stack_id=stack.id,
            expected_current=None,
            action="UPDATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec(k, k, resource_id=r) for k, r in rows.items()],
            edges=[],
            now=now,
        )
    return stack.id, traversal_id


def test_resource_in_flight_and_wake_parked(db: Engine, now: datetime) -> None:
    from kiln.db.tasks import resource_in_flight, wake_parked

    stack_id, traversal_id = _traversal_on_rows(db, now, {"a": "row-a", "b": "row-b"})
    with read(db) as conn:
        assert not resource_in_flight(conn, traversal_id, "row-a")  # not started
    leases = {lease.node_key: lease for lease in _claim(db, "e1", now)}
    with write(db) as conn:
        record_progress(conn, leases["a"], now=now, phase="POLLING")
        # b is parked until later without having started
        requeue_task(conn, leases["b"], now=now, not_before=now + LEASE)
    with read(db) as conn:
        assert resource_in_flight(conn, traversal_id, "row-a")
        assert not resource_in_flight(conn, traversal_id, "row-b")
    with write(db) as conn:
        assert wake_parked(conn, stack_id=stack_id, resource_id="row-a", now=now) == 0
        assert wake_parked(conn, stack_id=stack_id, resource_id="row-b", now=now) == 1
        assert get_task(conn, traversal_id, "b").not_before == now
        assert wake_parked(conn, stack_id=stack_id, resource_id="row-b", now=now) == 0
