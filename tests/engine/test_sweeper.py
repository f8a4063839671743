"""The sweeper's safety net: a traversal whose wake-up was lost is repaired."""

from __future__ import annotations

import pathlib

import sqlalchemy as sa
from engine_support import make_harness

from kiln.db import engine as dbe
from kiln.db import tables
from kiln.engine.worker import sweep_once

CHAIN = """\
heat_template_version: 2021-04-16
resources:
  a: {type: OS::Heat::Value, properties: {value: 1}}
  b: {type: OS::Heat::Value, properties: {value: {get_attr: [a, value]}}}
  c: {type: OS::Heat::Value, properties: {value: {get_attr: [b, value]}}}
"""


def test_a_lost_decrement_is_repaired(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(CHAIN)
    h.worker.step_once()  # a completes; b becomes READY
    N = tables.node_task
    with dbe.write(h.deps.db) as conn:  # simulate a lost wake-up: b back to BLOCKED
        conn.execute(
            sa.update(N).where(N.c.node_key == "c:b").values(state="BLOCKED", pending_deps=1)
        )
    assert h.worker.run_until_idle(sweep=False) == 0
    assert h.service.get_stack(sid).status == "IN_PROGRESS"  # stuck, as Heat would be
    sweep_once(h.deps)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")


def test_a_step_with_too_little_lease_left_does_not_start_a_cloud_call(
    tmp_path: pathlib.Path,
) -> None:
    h = make_harness(tmp_path)
    sid = h.create(
        "heat_template_version: 2021-04-16\nresources:\n  t: {type: OS::Heat::TestResource}\n"
    )
    (task,) = h.worker.claim()
    h.clock.advance(h.deps.lease.total_seconds() * 0.8)  # a long pause after the claim
    assert h.worker.runner.run(task) == []
    assert h.service.resources(sid)[0].action == "INIT"  # nothing was started
    h.run()  # claimed again with a fresh lease, it goes on
    assert h.service.get_stack(sid).status == "COMPLETE"


def test_events_are_pruned_to_the_limit(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    h.deps.max_events_per_stack = 5
    body = "".join(
        f"  v{i}: {{type: OS::Heat::Value, properties: {{value: {i}}}}}\n" for i in range(6)
    )
    sid = h.create("heat_template_version: 2021-04-16\nresources:\n" + body)
    h.run()
    events = h.service.events(sid)
    assert len(events) == 5
    assert events[-1].status_reason == "Stack CREATE completed successfully"
