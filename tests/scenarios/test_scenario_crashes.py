"""Engines killed at every step boundary: the work is taken over after the lease, once."""

from __future__ import annotations

import pathlib
from datetime import timedelta

import pytest
from scenario_support import THREE, resource_rows, things

from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import tasks as tdb
from kiln.db.errors import FencedOut
from kiln.engine.steps import FAULT_POINTS, StepRunner
from kiln.testing.scenario import Scenario, make_thing_template

# The second occurrence of a point is a poll step (a handle is called once per action).
OCCURRENCES = [(point, 1) for point in FAULT_POINTS] + [
    (point, 2) for point in ("start", "before_outcome", "after_outcome")
]


def _takeover(sc: Scenario) -> None:
    """The crashed task was resumed by another engine, with a new epoch, after its lease."""
    plan = sc.plans[0]
    assert plan.fired_on is not None, "the crash never happened"
    dead, node = plan.fired_on
    crashed = [s for s in sc.steps if s.crashed]
    assert len(crashed) == 1 and crashed[0].engine == dead
    later = [
        s
        for s in sc.steps
        if s.seq > crashed[0].seq
        and s.node_key == node
        and s.traversal_id == crashed[0].traversal_id
    ]
    if plan.point == "after_outcome":
        return  # the outcome was written: nothing to take over
    assert later, f"{node} was never resumed"
    assert later[0].engine != dead and later[0].epoch > crashed[0].epoch
    assert later[0].at >= crashed[0].at + sc.lease


@pytest.mark.parametrize(("point", "occurrence"), OCCURRENCES)
def test_crash_during_create(tmp_path: pathlib.Path, point: str, occurrence: int) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sc.crash_at(point, resource="server", action="CREATE", occurrence=occurrence)
    sid = sc.create(THREE)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("CREATE", "COMPLETE")
    assert sorted(things(sc)) == ["disk", "net", "server"]
    assert len(sc.cloud.creates) == 3  # exactly one create per resource
    _takeover(sc)
    # Bounded work: one step per node and per pending cloud state, plus the crashed one.
    work, polls = sc.work(), sum(sc.cloud.polls_seen.values())
    assert 3 + polls <= work.executions <= 3 + polls + 1


@pytest.mark.parametrize("point", [p for p in FAULT_POINTS if p != "after_handle"])
def test_two_crashes_in_a_row_on_one_task(tmp_path: pathlib.Path, point: str) -> None:
    sc = Scenario(tmp_path, engines=3, interleave="random", seed=3, check_each_step=True)
    sc.crash_at(point, resource="net", occurrence=1)
    sc.crash_at(point, resource="net", occurrence=2)
    sid = sc.create(THREE)
    sc.run()
    assert sc.stack(sid).status == "COMPLETE"
    assert sc.crashes == 2
    assert len(sc.cloud.creates) == 3


def test_a_create_that_reached_the_cloud_is_adopted_not_repeated(
    tmp_path: pathlib.Path,
) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sc.crash_at("after_handle", resource="net")
    sc.crash_at("after_handle", resource="net", occurrence=2)  # never reached: no 2nd create
    sid = sc.create(THREE)
    sc.run()
    assert sc.stack(sid).status == "COMPLETE"
    assert sc.crashes == 1
    net = resource_rows(sc, sid)["net"]
    assert [c for c in sc.cloud.calls if c[1] == net.id] == [("create", net.id), ("find", net.id)]


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_crash_during_delete(tmp_path: pathlib.Path, point: str) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(THREE)
    sc.run()
    sc.crash_at(point, resource="disk", action="DELETE")
    sc.delete(sid)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("DELETE", "COMPLETE")
    assert sc.plans[0].fired_on is not None
    assert sc.cloud.live() == []
    assert resource_rows(sc, sid) == {}


@pytest.mark.parametrize("point", FAULT_POINTS)
@pytest.mark.parametrize("change", ["size", "flavor"])
def test_crash_during_update(tmp_path: pathlib.Path, point: str, change: str) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(THREE)
    sc.run()
    new = {"size": 7} if change == "size" else {"flavor": "large"}
    target = make_thing_template(
        {
            "net": {"size": 1, "polls": 2},
            "disk": {"size": 10, "polls": 1, "input": {"get_attr": ["net", "name"]}},
            "server": {"polls": 2, "input": {"get_resource": "disk"}, **new},
        }
    )
    sc.crash_at(point, resource="server", kind="CONVERGE", action="UPDATE")
    sc.update(sid, target)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("UPDATE", "COMPLETE")
    assert sc.plans[0].fired_on is not None
    server = things(sc)["server"]
    assert server["size" if change == "size" else "flavor"] == (7 if change == "size" else "large")
    assert len(sc.cloud.creates) == (3 if change == "size" else 4)


@pytest.mark.parametrize("point", ["before_handle", "after_handle", "before_outcome"])
def test_update_after_a_crash_waits_for_the_takeover(tmp_path: pathlib.Path, point: str) -> None:
    """A crashed create is finished by its own traversal before the newer one decides."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sc.crash_at(point, resource="server", action="CREATE")
    sid = sc.create(THREE)
    sc.run_until(lambda s: s.crashes == 1)
    target = make_thing_template(
        {
            "net": {"size": 1, "polls": 2},
            "disk": {"size": 10, "polls": 1, "input": {"get_attr": ["net", "name"]}},
            "server": {"size": 5, "input": {"get_resource": "disk"}},
        }
    )
    sc.update(sid, target)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("UPDATE", "COMPLETE")
    assert things(sc)["server"]["size"] == 5
    assert (
        sum(1 for token, _ in sc.cloud.creates if token == resource_rows(sc, sid)["server"].id) == 1
    )


def test_dead_engines_without_restart(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=3, check_each_step=True)
    sc.crash_at("after_handle", resource="net", restart=False)
    sc.crash_at("before_outcome", resource="server", restart=False)
    sid = sc.create(THREE)
    sc.run()
    assert sc.stack(sid).status == "COMPLETE"
    assert len(sc.engines) == 3 and sum(e.alive for e in sc.engines) == 1
    survivor = next(e.id for e in sc.engines if e.alive)
    assert sc.steps[-1].engine == survivor


# -- 4: fencing ----------------------------------------------------------------------------
def test_a_stale_epoch_write_is_fenced_out(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=1)
    sc.create(make_thing_template({"a": {"polls": 3}}))
    with dbe.write(sc.db) as conn:
        [old] = tdb.claim_tasks(conn, "zombie", now=sc.clock.now(), lease=sc.lease, limit=1)
    sc.clock.advance(sc.lease.total_seconds() + 1)
    with dbe.write(sc.db) as conn:
        assert tdb.reclaim_expired(conn, now=sc.clock.now()) == 1
        [new] = tdb.claim_tasks(conn, "engine-x", now=sc.clock.now(), lease=sc.lease, limit=1)
    assert new.lease_epoch == old.lease_epoch + 1
    now = sc.clock.now()
    for write in (
        lambda c: tdb.requeue_task(c, old.lease, now=now, not_before=now),
        lambda c: tdb.record_progress(c, old.lease, now=now, phase="POLLING"),
        lambda c: tdb.set_result_resource(c, old.lease, resource_id="x", now=now),
    ):
        with pytest.raises(FencedOut), dbe.write(sc.db) as conn:
            write(conn)
    with dbe.write(sc.db) as conn:
        rdb.claim_resource(
            conn,
            new.resource_id or "",
            traversal_id=new.traversal_id,
            epoch=new.lease_epoch,
            expected_version=1,
            now=now,
        )
    with pytest.raises(FencedOut), dbe.write(sc.db) as conn:
        rdb.write_owned_resource(
            conn,
            new.resource_id or "",
            rdb.ResourceChange(physical_id="zombie"),
            traversal_id=old.traversal_id,
            epoch=old.lease_epoch,
            now=now,
        )
    with dbe.read(sc.db) as conn:
        assert tdb.get_task(conn, new.traversal_id, new.node_key).lease_owner == "engine-x"
        assert rdb.get_resource(conn, new.resource_id or "").physical_id is None


def test_a_zombie_step_is_fenced_before_it_reaches_the_cloud(tmp_path: pathlib.Path) -> None:
    """A step run with a lease that was taken over writes nothing and creates nothing."""
    sc = Scenario(tmp_path, engines=1)
    sc.create(make_thing_template({"a": {"polls": 3}}))
    with dbe.write(sc.db) as conn:
        [old] = tdb.claim_tasks(conn, "zombie", now=sc.clock.now(), lease=sc.lease, limit=1)
    sc.clock.advance((sc.lease + timedelta(seconds=1)).total_seconds())
    with dbe.write(sc.db) as conn:
        tdb.reclaim_expired(conn, now=sc.clock.now())
        tdb.claim_tasks(conn, "engine-x", now=sc.clock.now(), lease=sc.lease, limit=1)
    zombie = StepRunner(sc.engines[0].deps)
    assert zombie.run(old) == []
    assert sc.cloud.creates == []  # the intent write was fenced before handle_create
