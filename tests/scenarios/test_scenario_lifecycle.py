"""Create, update and delete on several engines, superseding updates, failures."""

from __future__ import annotations

import pathlib

import pytest
from scenario_support import THREE, resource_rows, things

from kiln.testing.scenario import Scenario, make_thing_template


@pytest.mark.parametrize(
    ("engines", "interleave"), [(1, "round_robin"), (2, "round_robin"), (3, "random")]
)
def test_create_update_delete(tmp_path: pathlib.Path, engines: int, interleave: str) -> None:
    sc = Scenario(tmp_path, engines=engines, interleave=interleave, check_each_step=True)
    sid = sc.create(THREE)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("CREATE", "COMPLETE")
    assert sorted(things(sc)) == ["disk", "net", "server"]
    work = sc.work()
    # Bounded work: one step per node plus one per pending status poll.
    assert work.executions == 3 + sum(sc.cloud.polls_seen.values())
    assert work.count("poll") == 2 + 1 + 3
    assert len({s.engine for s in sc.steps}) == engines

    bigger = make_thing_template(
        {
            "net": {"size": 1, "polls": 2},
            "disk": {"size": 20, "polls": 1, "input": {"get_attr": ["net", "name"]}},
            "server": {"size": 2, "flavor": "large", "input": {"get_resource": "disk"}},
        }
    )
    before = resource_rows(sc, sid)
    sc.update(sid, bigger)
    sc.run()
    after = resource_rows(sc, sid)
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("UPDATE", "COMPLETE")
    assert after["disk"].id == before["disk"].id  # size updates in place
    assert after["server"].id != before["server"].id  # flavor replaces
    assert after["server"].replaces == before["server"].id
    assert things(sc)["server"]["flavor"] == "large"

    sc.delete(sid)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("DELETE", "COMPLETE")
    assert sc.cloud.live() == []
    assert resource_rows(sc, sid) == {}


def test_update_adds_and_removes_resources(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=2)
    sid = sc.create(THREE)
    sc.run()
    sc.update(sid, make_thing_template({"net": {"size": 5}, "extra": {"polls": 1}}))
    sc.run()
    assert sorted(things(sc)) == ["extra", "net"]
    assert things(sc)["net"]["size"] == 5


def test_a_later_update_supersedes_a_running_update(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(THREE)
    sc.run()
    slow = make_thing_template(
        {
            "net": {"size": 3, "polls": 4},
            "disk": {"size": 30, "polls": 4, "input": {"get_attr": ["net", "name"]}},
            "server": {"size": 3, "polls": 4, "input": {"get_resource": "disk"}},
        }
    )
    first = sc.update(sid, slow)
    sc.run_steps(4)  # the first update is under way: net is being updated
    assert sc.traversal_of(sid).id == first
    last = make_thing_template({"net": {"size": 9}, "disk": {"size": 99}})
    second = sc.update(sid, last)
    sc.run()
    with sc.read() as conn:
        from kiln.db import traversals as trdb

        states = {t.id: t.state for t in trdb.list_traversals(conn, sid)}
    assert states[first] == "SUPERSEDED" and states[second] == "COMPLETE"
    assert things(sc) == {
        "net": {"size": 9, "flavor": "small", "input": ""},
        "disk": {"size": 99, "flavor": "small", "input": ""},
    }


def test_update_reverting_an_interrupted_update_converges(tmp_path: pathlib.Path) -> None:
    """The second template equals the first: the half-done update must be undone."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    original = make_thing_template({"a": {"size": 1, "polls": 1}})
    sid = sc.create(original)
    sc.run()
    sc.update(sid, make_thing_template({"a": {"size": 2, "polls": 3}}))
    sc.run_steps(2)  # a's update was sent to the cloud and is being polled
    assert sc.cloud.get(next(iter(sc.cloud.objects))).properties["size"] == 2
    sc.update(sid, original)
    sc.run()
    assert things(sc)["a"]["size"] == 1


def test_delete_supersedes_a_running_create(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(THREE)
    sc.run_steps(3)
    assert sc.cloud.creates  # something is already being built
    sc.delete(sid)
    sc.run()
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("DELETE", "COMPLETE")
    assert sc.cloud.live() == []


def test_a_failed_resource_fails_the_stack_with_its_path_and_reason(
    tmp_path: pathlib.Path,
) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(
        make_thing_template(
            {
                "ok": {"polls": 5},
                "bad": {"polls": 1, "fail": True},
                "after": {"depends_on": ["bad"]},
            }
        )
    )
    sc.run()
    stack = sc.stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "Resource CREATE failed" in stack.status_reason
    assert stack.status_reason == (
        "Resource CREATE failed: ResourceFailure: resources.bad: Thing bad went to ERROR"
    )
    rows = resource_rows(sc, sid)
    assert (rows["bad"].action, rows["bad"].status) == ("CREATE", "FAILED")
    assert rows["bad"].status_reason == "ResourceFailure: resources.bad: Thing bad went to ERROR"
    assert rows["after"].action == "INIT"  # never started
    assert sc.traversal_of(sid).state == "FAILED"
    # The stack can still be repaired by an update, and deleted.
    sc.update(sid, make_thing_template({"ok": {"polls": 5}, "bad": {}}))
    sc.run()
    assert sc.stack(sid).status == "COMPLETE"
    sc.delete(sid)
    sc.run()
    assert sc.cloud.live() == []


def test_a_stack_delete_while_a_removal_runs(tmp_path: pathlib.Path) -> None:
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(make_thing_template({"a": {"polls": 1}, "x": {"polls": 3}}))
    sc.run()
    sc.update(sid, make_thing_template({"a": {"polls": 1}}))
    sc.run_until(lambda s: any(o.status == "DELETING" for o in s.cloud.live()))
    sc.delete(sid)
    sc.run()
    assert sc.cloud.live() == []
    assert (sc.stack(sid).action, sc.stack(sid).status) == ("DELETE", "COMPLETE")
