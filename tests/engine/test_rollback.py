"""Rollback after a failure, and cancel_update with and without rollback."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

GOOD = """\
heat_template_version: 2021-04-16
parameters:
  value: {type: string, default: one}
resources:
  a: {type: OS::Heat::Value, properties: {value: {get_param: value}}}
outputs:
  a: {value: {get_attr: [a, value]}}
"""
FAILING = GOOD.replace(
    "outputs:",
    "  b: {type: OS::Heat::TestResource, properties: {fail: true, wait_secs: 1}}\noutputs:",
)
SLOW = GOOD.replace(
    "outputs:",
    "  slow: {type: OS::Heat::TestResource, properties: {wait_secs: 60}}\noutputs:",
)


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def test_create_failure_rolls_back_to_nothing(h: Harness) -> None:
    sid = h.create(FAILING, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert h.service.resources(sid) == []


def test_create_failure_without_rollback_stays_failed(h: Harness) -> None:
    sid = h.create(FAILING)  # disable_rollback defaults to true, as Heat's CLI sends
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert {r.name for r in h.service.resources(sid)} == {"a", "b"}


def test_update_failure_rolls_back_to_the_previous_template(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    h.update(sid, FAILING, parameters={"value": "two"}, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert [r.name for r in h.service.resources(sid)] == ["a"]
    assert h.outputs(sid) == {"a": "one"}


def test_cancel_update_rolls_back(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    h.update(sid, SLOW, parameters={"value": "two"})
    h.worker.step_once()  # the update starts: a changes, slow starts waiting
    h.worker.step_once()
    assert h.service.cancel_update(CALLER, sid, rollback=True)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert [r.name for r in h.service.resources(sid)] == ["a"]
    assert h.outputs(sid) == {"a": "one"}


def test_cancel_without_rollback_leaves_the_update_failed(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    h.update(sid, SLOW)
    h.worker.step_once()
    assert h.service.cancel_update(CALLER, sid, rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "FAILED")
    assert "cancelled" in stack.status_reason


def test_nothing_to_cancel(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    assert not h.service.cancel_update(CALLER, sid)


def test_cancel_does_not_wait_for_the_next_poll(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    h.update(sid, SLOW, parameters={"value": "two"})
    h.worker.step_once()
    h.worker.step_once()
    started = h.clock.now()
    assert h.service.cancel_update(CALLER, sid, rollback=True)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE")
    # the waiting resource's poll was due much later; the cancel brought it forward
    assert (h.clock.now() - started).total_seconds() < 5


def test_cancel_with_rollback_records_no_failed_stack_event(h: Harness) -> None:
    sid = h.create(GOOD)
    h.run()
    h.update(sid, SLOW, parameters={"value": "two"})
    h.worker.step_once()
    assert h.service.cancel_update(CALLER, sid, rollback=True)
    h.run()
    stack_events = [(e.action, e.status) for e in h.service.events(sid) if e.resource_name == "s"]
    # heatclient's `stack cancel --wait` ends at the first FAILED or COMPLETE stack event
    assert ("UPDATE", "FAILED") not in stack_events
    assert stack_events[-1] == ("ROLLBACK", "COMPLETE")
