"""external_id, deletion_policy Retain, restricted_actions, stack timeouts."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.engine.worker import sweep_once


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def test_external_id_adopts_and_is_retained(h: Harness) -> None:
    sid = h.create("""\
heat_template_version: 2021-04-16
resources:
  ext: {type: OS::Heat::TestResource, external_id: existing-thing}
outputs:
  ref: {value: {get_resource: ext}}
""")
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    (row,) = h.service.resources(sid)
    assert row.physical_id == "existing-thing"
    assert h.outputs(sid) == {"ref": "existing-thing"}
    h.service.delete_stack(CALLER, sid)
    h.run()
    deletes = [
        e for e in h.service.events(sid) if e.resource_name == "ext" and e.action == "DELETE"
    ]
    assert [e.status for e in deletes] == ["COMPLETE"]  # retained: no delete action ran


def test_restricted_update_fails_the_update(h: Harness) -> None:
    env = {"resource_registry": {"resources": {"v": {"restricted_actions": "update"}}}}
    template = (
        "heat_template_version: 2021-04-16\nresources:\n"
        "  v: {type: OS::Heat::Value, properties: {value: %d}}\n"
    )
    sid = h.create(template % 1, environment=env)
    h.run()
    h.update(sid, template % 2, environment=env)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "FAILED")
    assert "update is restricted for resource." in stack.status_reason


def test_stack_timeout_fails_the_traversal(h: Harness) -> None:
    sid = h.create(
        "heat_template_version: 2021-04-16\nresources:\n"
        "  slow: {type: OS::Heat::TestResource, properties: {wait_secs: 600}}\n",
        timeout_mins=1,
    )
    h.worker.step_once()
    h.clock.advance(61)
    sweep_once(h.deps)
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert stack.status_reason == "Timed out"
    h.run()  # the waiting task ends without changing the outcome
    assert h.service.get_stack(sid).status == "FAILED"


def test_mark_unhealthy_makes_the_next_update_replace(h: Harness) -> None:
    template = (
        "heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::RandomString}\n"
    )
    sid = h.create(template)
    h.run()
    (before,) = h.service.resources(sid)
    h.service.mark_unhealthy(CALLER, sid, "r", True, "broken disk")
    (marked,) = h.service.resources(sid)
    assert (marked.action, marked.status, marked.status_reason) == (
        "CHECK",
        "FAILED",
        "broken disk",
    )
    h.update(sid, template)
    h.run()
    (after,) = h.service.resources(sid)
    assert after.id != before.id and after.replaces == before.id


def test_clearing_the_mark(h: Harness) -> None:
    template = (
        "heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::RandomString}\n"
    )
    sid = h.create(template)
    h.run()
    h.service.mark_unhealthy(CALLER, sid, "r", True)
    h.service.mark_unhealthy(CALLER, sid, "r", False)
    (row,) = h.service.resources(sid)
    assert (row.action, row.status) == ("CHECK", "COMPLETE")
