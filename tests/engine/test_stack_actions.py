"""Suspend, resume and check: each resource in the right order, Heat's states."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.errors import ActionInProgress, NotSupported

TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  base: {type: OS::Heat::TestResource, properties: {value: b}}
  top:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [base, output]}}
  pw: {type: OS::Heat::RandomString}
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def events(h: Harness, sid: str, action: str) -> list[str]:
    return [
        e.resource_name
        for e in h.service.events(sid)
        if e.action == action and e.status == "COMPLETE" and e.resource_type != "OS::Heat::Stack"
    ]


def test_suspend_goes_dependents_first_and_resume_dependencies_first(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    h.service.stack_action(CALLER, sid, "SUSPEND")
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("SUSPEND", "COMPLETE")
    order = events(h, sid, "SUSPEND")
    assert order.index("top") < order.index("base")
    assert {r.action for r in h.service.resources(sid)} == {"SUSPEND"}
    h.service.stack_action(CALLER, sid, "RESUME")
    h.run()
    assert h.service.get_stack(sid).action == "RESUME"
    order = events(h, sid, "RESUME")
    assert order.index("base") < order.index("top")


def test_check(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    h.service.stack_action(CALLER, sid, "CHECK")
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CHECK", "COMPLETE")
    assert sorted(events(h, sid, "CHECK")) == ["base", "pw", "top"]


def test_an_action_while_another_runs_is_refused(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    with pytest.raises(ActionInProgress):
        h.service.stack_action(CALLER, sid, "SUSPEND")


def test_unknown_action(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    with pytest.raises(NotSupported):
        h.service.stack_action(CALLER, sid, "DANCE")
