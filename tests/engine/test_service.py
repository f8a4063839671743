"""Stack lifecycle through the engine, on SQLite with a virtual clock."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.errors import KilnError

BASIC = """\
heat_template_version: 2021-04-16
parameters:
  n: {type: number, default: 8}
  value: {type: string, default: hi}
resources:
  pw: {type: OS::Heat::RandomString, properties: {length: {get_param: n}}}
  v:
    type: OS::Heat::Value
    properties:
      value: {str_replace: {template: "pw=X", params: {X: {get_attr: [pw, value]}}}}
  t: {type: OS::Heat::TestResource, properties: {value: {get_param: value}, wait_secs: 3}}
outputs:
  pw: {value: {get_attr: [pw, value]}}
  v: {value: {get_attr: [v, value]}}
  t: {value: {get_attr: [t, output]}}
  ref: {value: {get_resource: t}}
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def test_create_resolves_outputs_through_dependencies(h: Harness) -> None:
    sid = h.create(BASIC)
    assert h.service.get_stack(sid).status == "IN_PROGRESS"
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")
    out = h.outputs(sid)
    assert isinstance(out["pw"], str) and len(out["pw"]) == 8
    assert out["v"] == f"pw={out['pw']}"
    assert out["t"] == "hi"
    assert out["ref"].startswith("s-t-")  # the physical name of the TestResource


def test_waits_are_polls_not_sleeps(h: Harness) -> None:
    start = h.clock.now()
    sid = h.create(BASIC)
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert (h.clock.now() - start).total_seconds() == pytest.approx(3, abs=0.01)


def test_events_follow_heat(h: Harness) -> None:
    sid = h.create(BASIC)
    h.run()
    seen = [(e.resource_name, e.action, e.status) for e in h.service.events(sid)]
    assert seen[0] == ("s", "CREATE", "IN_PROGRESS")
    assert seen[-1] == ("s", "CREATE", "COMPLETE")
    for name in ("pw", "v", "t"):
        assert seen.index((name, "CREATE", "IN_PROGRESS")) < seen.index(
            (name, "CREATE", "COMPLETE")
        )
    assert seen.index(("pw", "CREATE", "COMPLETE")) < seen.index(("v", "CREATE", "IN_PROGRESS"))


def test_update_in_place_replace_and_unchanged(h: Harness) -> None:
    sid = h.create(BASIC)
    h.run()
    before = {r.name: r for r in h.service.resources(sid)}
    old_pw = h.outputs(sid)["pw"]
    h.update(sid, BASIC, parameters={"n": 12, "value": "changed"})
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE")
    after = {r.name: r for r in h.service.resources(sid)}
    assert after["pw"].id != before["pw"].id  # length is not updatable: replaced
    assert after["pw"].replaces == before["pw"].id
    assert after["t"].id == before["t"].id and after["t"].action == "UPDATE"
    out = h.outputs(sid)
    assert len(out["pw"]) == 12 and out["pw"] != old_pw
    assert out["v"] == f"pw={out['pw']}"
    assert out["t"] == "changed"
    assert len(h.service.resources(sid)) == 3  # the replaced row was cleaned up


def test_update_removes_and_adds_resources(h: Harness) -> None:
    sid = h.create(BASIC)
    h.run()
    h.update(
        sid,
        """\
heat_template_version: 2021-04-16
resources:
  only: {type: OS::Heat::Value, properties: {value: 1}}
outputs:
  only: {value: {get_attr: [only, value]}}
""",
    )
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert [r.name for r in h.service.resources(sid)] == ["only"]
    assert h.outputs(sid) == {"only": 1}


def test_delete(h: Harness) -> None:
    sid = h.create(BASIC)
    h.run()
    h.service.delete_stack(CALLER, sid)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    assert stack.deleted_at is not None
    assert h.service.resources(sid) == []


def test_failure_gives_a_failed_stack_with_the_resource_path(h: Harness) -> None:
    sid = h.create("""\
heat_template_version: 2021-04-16
resources:
  ok: {type: OS::Heat::Value, properties: {value: 1}}
  bad: {type: OS::Heat::TestResource, properties: {fail: true}}
""")
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "Resource CREATE failed" in stack.status_reason
    assert "Test Resource failed bad" in stack.status_reason
    bad = {r.name: r for r in h.service.resources(sid)}["bad"]
    assert (bad.action, bad.status) == ("CREATE", "FAILED")


def test_invalid_template_is_rejected_before_anything_is_stored(h: Harness) -> None:
    with pytest.raises(KilnError, match="could not be found"):
        h.create("heat_template_version: 2021-04-16\nresources:\n  a: {type: Nope::Nope}\n")


def test_empty_stack_completes_at_once(h: Harness) -> None:
    sid = h.create("heat_template_version: 2021-04-16\n")
    assert h.service.get_stack(sid).status == "COMPLETE"
