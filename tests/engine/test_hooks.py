"""Breakpoint hooks: a resource pauses until its hook is cleared by a signal."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.errors import InvalidBreakPointHook

TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  first: {type: OS::Heat::Value, properties: {value: 1}}
  second:
    type: OS::Heat::Value
    properties: {value: {get_attr: [first, value]}}
  other: {type: OS::Heat::Value, properties: {value: 2}}
"""


def env(hook: str | list[str]) -> dict[str, object]:
    return {"resource_registry": {"resources": {"first": {"hooks": hook}}}}


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def names(h: Harness, sid: str, action: str, status: str) -> set[str]:
    return {
        e.resource_name for e in h.service.events(sid) if e.action == action and e.status == status
    }


def test_pre_create_pauses_the_resource_and_its_dependents(h: Harness) -> None:
    sid = h.create(TEMPLATE, environment=env("pre-create"))
    h.run()
    assert h.service.get_stack(sid).status == "IN_PROGRESS"
    assert names(h, sid, "CREATE", "COMPLETE") == {"other"}  # independent work goes on
    paused = [e for e in h.service.events(sid) if e.resource_name == "first"]
    assert paused[-1].status_reason == "CREATE paused until Hook pre-create is cleared"
    h.service.signal(CALLER, sid, "first", {"unset_hook": "pre-create"})
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")


def test_pre_update_and_pre_delete(h: Harness) -> None:
    sid = h.create(TEMPLATE, environment=env(["pre-update", "pre-delete"]))
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"  # no create hook set
    h.update(
        sid,
        TEMPLATE.replace("{value: 1}", "{value: 5}"),
        environment=env(["pre-update", "pre-delete"]),
    )
    h.run()
    assert h.service.get_stack(sid).status == "IN_PROGRESS"
    h.service.signal(CALLER, sid, "first", {"unset_hook": "pre-update"})
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    h.service.delete_stack(CALLER, sid)
    h.run()
    assert h.service.get_stack(sid).deleted_at is None
    h.service.signal(CALLER, sid, "first", {"unset_hook": "pre-delete"})
    h.run()
    assert h.service.get_stack(sid).deleted_at is not None


def test_bad_hook_signals(h: Harness) -> None:
    sid = h.create(TEMPLATE, environment=env("pre-create"))
    with pytest.raises(InvalidBreakPointHook, match="Invalid hook type"):
        h.service.signal(CALLER, sid, "first", {"unset_hook": "pre-creat"})
    with pytest.raises(
        InvalidBreakPointHook, match='The "pre-update" hook is not defined on first'
    ):
        h.service.signal(CALLER, sid, "first", {"unset_hook": "pre-update"})


def test_post_create_holds_dependents_until_cleared(h: Harness) -> None:
    sid = h.create(TEMPLATE, environment=env("post-create"))
    h.run()
    assert h.service.get_stack(sid).status == "IN_PROGRESS"
    rows = {r.name: r for r in h.service.resources(sid)}
    assert (rows["first"].action, rows["first"].status) == ("CREATE", "COMPLETE")
    assert rows["second"].action == "INIT"  # waits for first's hook
    reasons = [e.status_reason for e in h.service.events(sid) if e.resource_name == "first"]
    assert reasons[-1] == "CREATE paused until Hook post-create is cleared"
    h.service.signal(CALLER, sid, "first", {"unset_hook": "post-create"})
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert {r.action for r in h.service.resources(sid)} == {"CREATE"}


def test_post_delete_holds_the_rest_of_the_delete(h: Harness) -> None:
    sid = h.create(TEMPLATE, environment=env("post-delete"))
    h.run()
    h.service.delete_stack(CALLER, sid)
    h.run()
    assert h.service.get_stack(sid).deleted_at is None
    reasons = [e.status_reason for e in h.service.events(sid) if e.resource_name == "first"]
    assert reasons[-1] == "DELETE paused until Hook post-delete is cleared"
    h.service.signal(CALLER, sid, "first", {"unset_hook": "post-delete"})
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE")
    assert stack.deleted_at is not None
