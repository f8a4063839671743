"""kiln.db.tasks and kiln.db.stack_limits: the per-stack cap on running tasks, and fairness."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime, timedelta

import pytest
from dbhelpers import TEMPLATE, make_stack, make_traversal, new_id
from sqlalchemy.engine import Engine

from kiln.db.completion import complete_task
from kiln.db.engine import create_engine, read, write
from kiln.db.stack_limits import LEASE_RESOLUTION, pick_within_limit, running_by_root
from kiln.db.stacks import Stack, create_stack
from kiln.db.tasks import NodeTask, claim_tasks, get_task, next_wake_at
from kiln.db.templates import store_raw_template

LEASE = timedelta(seconds=15)


def _claim(
    db: Engine, now: datetime, limit: int, per_stack: int, owner: str = "e1"
) -> list[NodeTask]:
    with write(db) as conn:
        return claim_tasks(
            conn, owner, now=now, lease=LEASE, limit=limit, per_stack_limit=per_stack
        )


def _keys(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


def _by_stack(tasks: list[NodeTask]) -> Counter[str]:
    return Counter(t.stack_id for t in tasks)


def _two_stacks(db: Engine, now: datetime, a: int, b: int) -> tuple[Stack, Stack]:
    stack_a, _ = make_traversal(db, now, _keys("a", a))
    stack_b, _ = make_traversal(db, now, _keys("b", b))
    return stack_a, stack_b


def test_tasks_know_their_root_stack(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a"])
    with read(db) as conn:
        assert get_task(conn, traversal_id, "a").root_stack_id == stack.id


def test_a_claim_takes_at_most_the_limit_of_each_stack(db: Engine, now: datetime) -> None:
    a, b = _two_stacks(db, now, 5, 3)
    claimed = _claim(db, now, limit=10, per_stack=2)
    assert _by_stack(claimed) == {a.id: 2, b.id: 2}
    assert {t.state for t in claimed} == {"CLAIMED"}
    # Both stacks are full: nothing more until a task ends.
    assert _claim(db, now, limit=10, per_stack=2) == []
    done = next(t for t in claimed if t.stack_id == a.id)
    with write(db) as conn:
        complete_task(conn, done.lease, now=now)
    again = _claim(db, now, limit=10, per_stack=2)
    assert _by_stack(again) == {a.id: 1}


def test_limit_zero_is_unlimited(db: Engine, now: datetime) -> None:
    _two_stacks(db, now, 5, 3)
    assert len(_claim(db, now, limit=10, per_stack=0)) == 8


def test_a_full_stack_never_hides_the_others(db: Engine, now: datetime) -> None:
    # a's tasks come first in claim order (lower priority value) and fill
    # whole candidate windows; b's are still claimed in the same claim.
    a, _ = make_traversal(db, now, _keys("a", 40), priorities=dict.fromkeys(_keys("a", 40), 0))
    b, _ = make_traversal(db, now, _keys("b", 3), priorities=dict.fromkeys(_keys("b", 3), 5))
    assert _by_stack(_claim(db, now, limit=4, per_stack=2)) == {a.id: 2, b.id: 2}


def test_nested_stacks_count_with_their_root(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        root = make_stack(conn, now)
        child = create_stack(
            conn,
            stack_id=new_id(),
            name="child",
            project_id="proj",
            user_id="user",
            raw_template_id=store_raw_template(conn, TEMPLATE, now=now),
            now=now,
            owner_id=root.id,
            root_id=root.id,
        )
    make_traversal(db, now, _keys("r", 2), stack=root)
    make_traversal(db, now, _keys("c", 2), stack=child)
    claimed = _claim(db, now, limit=10, per_stack=3)
    assert len(claimed) == 3
    assert {t.root_stack_id for t in claimed} == {root.id}
    with read(db) as conn:
        assert running_by_root(conn, now=now) == {root.id: 3}


def test_claims_take_stacks_with_nothing_running_first(db: Engine, now: datetime) -> None:
    a, _ = make_traversal(db, now, _keys("a", 5), priorities=dict.fromkeys(_keys("a", 5), 0))
    first = _claim(db, now, limit=3, per_stack=10)
    assert _by_stack(first) == {a.id: 3}
    b, _ = make_traversal(db, now, _keys("b", 10), priorities=dict.fromkeys(_keys("b", 10), 5))
    # Priority order alone would take a's two first; b has nothing running.
    second = _claim(db, now, limit=4, per_stack=10)
    assert _by_stack(second) == {b.id: 4}
    # Within a stack the priority order holds.
    assert [t.node_key for t in second] == ["b0", "b1", "b2", "b3"]


def test_expired_leases_do_not_count(db: Engine, now: datetime) -> None:
    a, _ = make_traversal(db, now, _keys("a", 4))
    assert len(_claim(db, now, limit=10, per_stack=2)) == 2
    assert _claim(db, now + LEASE, limit=10, per_stack=2) == []  # expiring, not expired
    later = now + LEASE + LEASE_RESOLUTION
    assert _by_stack(_claim(db, later, limit=10, per_stack=2)) == {a.id: 2}


def test_next_wake_leaves_out_full_stacks(db: Engine, now: datetime) -> None:
    make_traversal(db, now, _keys("a", 3))
    claimed = _claim(db, now, limit=10, per_stack=2)
    with read(db) as conn:
        # a's third task is due but a is full: it may go once a lease expires.
        assert next_wake_at(conn) == now
        assert next_wake_at(conn, now=now, per_stack_limit=2) == (
            claimed[0].lease_expires_at + LEASE_RESOLUTION
        )
        assert next_wake_at(conn, now=now, per_stack_limit=3) == now
    make_traversal(db, now + timedelta(seconds=1), ["b"])
    with read(db) as conn:
        assert next_wake_at(conn, now=now, per_stack_limit=2) == now + timedelta(seconds=1)


def test_next_wake_ignores_full_stacks_with_nothing_ready(db: Engine, now: datetime) -> None:
    make_traversal(db, now, _keys("a", 2))
    _claim(db, now, limit=10, per_stack=2)
    with read(db) as conn:
        assert next_wake_at(conn, now=now, per_stack_limit=2) is None


@pytest.mark.timeout(60)
def test_concurrent_limited_claims_never_share_a_task(db: Engine, now: datetime) -> None:
    make_traversal(db, now, _keys("a", 60))
    make_traversal(db, now, _keys("b", 60))
    engines = [db, create_engine(db.url)]
    got: list[list[NodeTask]] = [[], []]
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def worker(n: int) -> None:
        barrier.wait()
        try:
            for _ in range(200):
                if sum(len(g) for g in got) >= 120:
                    break
                batch = _claim(engines[n], now, limit=3, per_stack=4, owner=f"e{n}")
                got[n] += batch
                with write(engines[n]) as conn:
                    for task in batch:
                        complete_task(conn, task.lease, now=now)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        engines[1].dispose()
    assert errors == []
    keys = [(t.traversal_id, t.node_key) for t in got[0] + got[1]]
    assert len(keys) == len(set(keys))
    assert len(keys) == 120


class _Task:
    def __init__(self, root: str) -> None:
        self.root_stack_id = root


def test_pick_within_limit_passes_over_full_stacks() -> None:
    candidates = [_Task(r) for r in "aaabbbc"]
    running = {"a": 1, "c": 3}
    picked, cut = pick_within_limit(candidates, running, per_stack_limit=3, room=5)
    assert [t.root_stack_id for t in picked] == ["a", "a", "b", "b", "b"]
    assert cut  # the third a
    assert running == {"a": 3, "b": 3, "c": 3}
    picked, cut = pick_within_limit(candidates, {}, per_stack_limit=3, room=2)
    assert [t.root_stack_id for t in picked] == ["a", "a"]
    assert not cut
