"""The harness itself: determinism, crashes and takeover timing, and checks that bite."""

from __future__ import annotations

import pathlib

import pytest
from scenario_support import THREE

from kiln.db import engine as dbe
from kiln.db import tables
from kiln.db import tasks as tdb
from kiln.testing import invariants
from kiln.testing.invariants import InvariantViolation
from kiln.testing.scenario import Crash, Scenario, StepRecord, make_thing_template


def _log(sc: Scenario) -> list[tuple[str, str, str]]:
    return [(s.engine, s.node_key, s.outcome) for s in sc.steps]


def test_a_seed_replays_a_scenario_exactly(tmp_path: pathlib.Path) -> None:
    runs = []
    for i in range(2):
        sc = Scenario(tmp_path / str(i), engines=3, seed=7, interleave="random")
        sc.crash_at("after_handle", resource="disk")
        sc.create(THREE)
        sc.run()
        runs.append((_log(sc), [(o.id, o.token) for o in sc.cloud.live()], sc.clock.now()))
    assert runs[0] == runs[1]
    assert len({engine for engine, _, _ in runs[0][0]}) >= 2


def test_a_crash_leaves_the_claim_until_the_lease_expires(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=2)
    plan = sc.crash_at("after_handle", resource="net")
    sc.create(THREE)
    sc.run_until(lambda s: s.crashes == 1)
    dead = next(e for e in sc.engines if not e.alive)
    assert plan.fired_on == (dead.id, "c:net")
    assert len(sc.engines) == 3  # a fresh engine took the dead one's place
    with sc.read() as conn:
        claimed = tdb.get_task(conn, sc.steps[-1].traversal_id, "c:net")
    assert claimed.state == "CLAIMED" and claimed.lease_owner == dead.id
    crashed_at = sc.clock.now()
    sc.run_until(lambda s: s.steps[-1].node_key == "c:net" and not s.steps[-1].crashed)
    assert sc.clock.now() > crashed_at + sc.lease  # not before the lease ran out
    assert sc.steps[-1].engine != dead.id


def test_crash_is_not_an_exception_the_engine_can_swallow() -> None:
    assert not issubclass(Crash, Exception)


def test_check_each_step_runs_the_checks(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=1, check_each_step=True)
    sc.create(make_thing_template({"a": {"polls": 2}}))
    sc.step()
    sc.cloud.create(token="nobody", name="x", properties={}, polls=0, fail=False)
    sc.cloud.create(token="nobody", name="x", properties={}, polls=0, fail=False)
    with pytest.raises(InvariantViolation, match="more than once per client token"):
        sc.run()


# -- each check finds what it is for -------------------------------------------------------
@pytest.fixture
def done(tmp_path: pathlib.Path) -> Scenario:
    sc = Scenario(tmp_path, engines=2)
    sc.create(THREE)
    sc.run()
    return sc


def test_orphans_are_found(done: Scenario) -> None:
    done.cloud.create(token="no-such-row", name="stray", properties={}, polls=0, fail=False)
    with pytest.raises(InvariantViolation, match=r"orphan: cloud object .* has no resource row"):
        done.check()


def test_an_object_its_row_does_not_record_is_an_orphan(done: Scenario) -> None:
    obj = done.cloud.live()[0]
    done.cloud.create(token=obj.token, name="again", properties={}, polls=0, fail=False)
    with pytest.raises(InvariantViolation):
        done.check()


def test_divergence_from_the_template_is_found(done: Scenario) -> None:
    done.cloud.live()[0].properties["size"] = 42
    with pytest.raises(InvariantViolation, match="is not ACTIVE with"):
        done.check()


def test_a_lost_traversal_is_found(done: Scenario) -> None:
    done.update(done.stacks[0], make_thing_template({"a": {}, "b": {"depends_on": ["a"]}}))
    with dbe.write(done.db) as conn:  # forget the ready task: only BLOCKED ones are left
        conn.execute(tdb.N.update().where(tdb.N.c.state == "READY").values(state="BLOCKED"))
    with pytest.raises(InvariantViolation, match="is lost"):
        done.check(final=False)
    with pytest.raises(InvariantViolation, match="RUNNING at quiescence"):
        done.check(final=True)


def test_dependency_order_violations_are_found(done: Scenario) -> None:
    traversal = done.steps[0].traversal_id
    at = done.steps[0].at
    fake = [
        StepRecord(1, "e", traversal, "c:server", "CONVERGE", 1, "done", at),
        StepRecord(2, "e", traversal, "c:net", "CONVERGE", 1, "done", at),
    ]
    with (
        done.read() as conn,
        pytest.raises(InvariantViolation, match=r"c:server ran \(step 1\) before c:\w+ was done"),
    ):
        invariants.check_dependency_order(conn, fake)


def test_a_second_outcome_is_found(done: Scenario) -> None:
    traversal = done.steps[0].traversal_id
    done.outcomes[traversal] += 1
    with pytest.raises(InvariantViolation, match="wrote 2 stack outcomes"):
        done.check()


def test_unbounded_work_is_found(done: Scenario) -> None:
    first = done.steps[-1]
    done.steps.append(
        StepRecord(
            len(done.steps) + 1,
            "e",
            first.traversal_id,
            first.node_key,
            first.kind,
            9,
            "done",
            first.at,
        )
    )
    with pytest.raises(InvariantViolation, match="finished more than once"):
        done.check()


def test_an_action_in_flight_without_its_row_is_found(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=1)
    sc.create(make_thing_template({"a": {"polls": 3}}))
    sc.run_until(lambda s: bool(s.cloud.polls_seen))  # a is POLLING and owns its row
    sc.check(final=False)
    with dbe.write(sc.db) as conn:
        conn.execute(tables.resource.update().values(owner_traversal_id="someone-else"))
    with pytest.raises(InvariantViolation, match=r"action in flight .* owned by someone-else"):
        sc.check(final=False)


def test_a_stale_claim_of_a_live_engine_is_found(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=1)
    sc.create(make_thing_template({"a": {}}))
    with dbe.write(sc.db) as conn:
        tdb.claim_tasks(conn, sc.engines[0].id, now=sc.clock.now(), lease=sc.lease, limit=1)
    with pytest.raises(InvariantViolation, match="CLAIMED by live engine-1"):
        sc.check(final=False)
