"""One scenario per engine bug the harness found (each failed before its fix)."""

from __future__ import annotations

import pathlib

from scenario_support import resource_rows, things

from kiln.db import engine as dbe
from kiln.db import events as evdb
from kiln.db import traversals as trdb
from kiln.testing.scenario import Scenario, make_thing_template


def test_an_older_row_left_by_a_failed_replacement_is_cleaned_up(tmp_path: pathlib.Path) -> None:
    """Cleanup kept every unreplaced row of a name in the template (not just the live one)."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(make_thing_template({"a": {"flavor": "small"}}))
    sc.run()
    first = resource_rows(sc, sid)["a"]
    # The replacement fails: the old row stays unreplaced next to the failed new one.
    sc.update(sid, make_thing_template({"a": {"flavor": "large", "fail": True}}))
    sc.run()
    assert sc.stack(sid).status == "FAILED"
    sc.update(sid, make_thing_template({"a": {"flavor": "large"}}))
    sc.run()  # convergence: one row, one object
    rows = resource_rows(sc, sid)
    assert list(rows) == ["a"] and rows["a"].id != first.id
    assert [o.properties["flavor"] for o in sc.cloud.live()] == ["large"]


def test_an_action_in_flight_goes_on_with_the_properties_it_started_with(
    tmp_path: pathlib.Path,
) -> None:
    """A superseded create that finishes must not record properties it never sent."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "p": {"type": "Test::Cloud::Thing", "properties": {"size": 1}},
            "x": {
                "type": "Test::Cloud::Thing",
                "properties": {
                    "polls": 4,
                    "input": {
                        "str_replace": {
                            "template": "size=S",
                            "params": {"S": {"get_attr": ["p", "size"]}},
                        }
                    },
                },
            },
        },
    }
    sid = sc.create(template)
    sc.run_until(lambda s: bool(s.cloud.polls_seen))  # x is being created with size=1
    bigger = {**template, "resources": {**template["resources"]}}
    bigger["resources"]["p"] = {"type": "Test::Cloud::Thing", "properties": {"size": 2}}
    sc.update(sid, bigger)
    sc.run()
    assert things(sc)["x"]["input"] == "size=2"
    assert resource_rows(sc, sid)["x"].properties["input"] == "size=2"


def test_an_adopted_create_still_reports_in_progress(tmp_path: pathlib.Path) -> None:
    """The step that found the object after a crash skipped the IN_PROGRESS event."""
    sc = Scenario(tmp_path, engines=2)
    sc.crash_at("after_handle", resource="a")
    sid = sc.create(make_thing_template({"a": {"polls": 1}}))
    sc.run()
    with sc.read() as conn:
        seen = [
            (e.action, e.status) for e in evdb.list_events(conn, [sid]) if e.resource_name == "a"
        ]
    assert seen == [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]


def _cancel_mid_create(sc: Scenario) -> str:
    sid = sc.create(make_thing_template({"a": {"polls": 5}}))
    sc.run_until(lambda s: bool(s.cloud.polls_seen))  # a's object exists, its id recorded
    with dbe.write(sc.db) as conn:
        assert trdb.request_cancel(conn, sc.traversal_of(sid).id)
    sc.run()  # the task stops at its next step, which ends the traversal CANCELLED
    assert (sc.stack(sid).status, sc.stack(sid).status_reason) == (
        "FAILED",
        "Stack CREATE cancelled",
    )
    assert sc.traversal_of(sid).state == "CANCELLED"
    return sid


def test_delete_after_an_interrupted_create_deletes_its_object(tmp_path: pathlib.Path) -> None:
    """An INIT row with a physical id was dropped without deleting the object (an orphan).

    Also: a cancelled traversal ended COMPLETE when its last task stopped.
    """
    sc = Scenario(tmp_path, engines=1)
    sid = _cancel_mid_create(sc)
    assert len(sc.cloud.live()) == 1
    sc.delete(sid)
    sc.run()
    assert sc.cloud.live() == []


def test_update_after_an_interrupted_create_starts_afresh(tmp_path: pathlib.Path) -> None:
    """An INIT row with a physical id was created again under the same client token."""
    sc = Scenario(tmp_path, engines=1)
    sid = _cancel_mid_create(sc)
    sc.update(sid, make_thing_template({"a": {"polls": 1, "size": 4}}))
    sc.run()
    assert [o.properties["size"] for o in sc.cloud.live()] == [4]
    assert sc.stack(sid).status == "COMPLETE"


def _removal_under_way(sc: Scenario) -> tuple[str, dict[str, object]]:
    keep = make_thing_template({"a": {"polls": 1}, "x": {"polls": 3}})
    sid = sc.create(keep)
    sc.run()
    sc.update(sid, make_thing_template({"a": {"polls": 1}}))
    sc.run_until(lambda s: any(o.status == "DELETING" for o in s.cloud.live()))
    return sid, keep


def test_a_resource_re_added_while_its_removal_runs_is_created_again(
    tmp_path: pathlib.Path,
) -> None:
    """The superseded delete was abandoned half-way; the row looked alive and was kept."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid, keep = _removal_under_way(sc)
    old_x = resource_rows(sc, sid)["x"].id
    sc.update(sid, keep)
    sc.run()
    assert sorted(things(sc)) == ["a", "x"]
    assert resource_rows(sc, sid)["x"].id != old_x  # the old one finished deleting


def test_an_update_plans_from_the_rows_as_they_are_when_it_starts(
    tmp_path: pathlib.Path,
) -> None:
    """The plan was built from rows read before validation; steps in between were missed."""
    sc = Scenario(tmp_path, engines=2, check_each_step=True)
    sid = sc.create(make_thing_template({"a": {"flavor": "small"}}))
    sc.run()
    sc.update(sid, make_thing_template({"a": {"flavor": "large", "polls": 2}}))
    validate = sc.service._definition

    def slow_validation(*args: object, **kw: object) -> object:
        # Meanwhile an engine starts the replacement: a new row appears.
        sc.run_until(lambda s: len(s.cloud.creates) == 2)
        return validate(*args, **kw)  # type: ignore[arg-type]

    sc.service._definition = slow_validation  # type: ignore[method-assign]
    sc.update(sid, make_thing_template({"a": {"flavor": "medium"}}))
    sc.run()
    assert [o.properties["flavor"] for o in sc.cloud.live()] == ["medium"]
