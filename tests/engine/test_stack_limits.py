"""The per-stack cap on running tasks (EngineDeps.max_concurrent_tasks_per_stack) in the engine."""

from __future__ import annotations

import pathlib

from engine_support import Harness, make_harness

from kiln.db import engine as dbe
from kiln.db.stack_limits import running_by_root
from kiln.db.tasks import NodeTask
from kiln.engine.steps import EngineDeps
from kiln.engine.worker import Worker

HUGE = 40


def _values(count: int) -> str:
    body = "".join(
        f"  v{i}: {{type: OS::Heat::Value, properties: {{value: {i}}}}}\n" for i in range(count)
    )
    return "heat_template_version: 2021-04-16\nresources:\n" + body


def _created(h: Harness, stack_id: str) -> int:
    return sum(r.action == "CREATE" for r in h.service.resources(stack_id))


def _huge_then_small(h: Harness) -> tuple[str, str]:
    huge = h.create(_values(HUGE), name="huge")
    # The small stack's tasks come after every one of the huge stack's.
    h.clock.advance(1)
    return huge, h.create(_values(3), name="small")


def test_a_small_stack_is_not_starved_by_a_huge_one(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    h.deps.max_concurrent_tasks_per_stack = 4
    huge, small = _huge_then_small(h)
    h.worker.step_once()  # one claim (a batch of 32): 4 of huge, all of small
    assert h.service.get_stack(small).status == "COMPLETE"
    assert _created(h, huge) == 4
    h.run()
    assert h.service.get_stack(huge).status == "COMPLETE"
    assert _created(h, huge) == HUGE


def test_without_a_limit_the_huge_stack_takes_the_whole_batch(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    h.deps.max_concurrent_tasks_per_stack = 0
    huge, small = _huge_then_small(h)
    h.worker.step_once()
    assert _created(h, huge) == 32
    assert _created(h, small) == 0
    h.run()
    assert h.service.get_stack(small).status == "COMPLETE"


def test_the_limit_holds_across_engines(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    h.deps.max_concurrent_tasks_per_stack = 4
    huge, small = _huge_then_small(h)
    held = h.worker.claim()  # engine-1 holds its batch without running it yet
    assert sorted(t.stack_id for t in held) == [huge] * 4 + [small] * 3
    other = Worker(_other_engine(h.deps))
    # small's tasks are all taken and huge is full: engine-2 finds nothing.
    assert other.step_once() == 0
    for task in held:
        h.worker.runner.run(task)
    assert h.service.get_stack(small).status == "COMPLETE"
    assert other.step_once() == 4
    other.run_until_idle()
    assert h.service.get_stack(huge).status == "COMPLETE"


def test_running_tasks_of_a_stack_never_exceed_the_limit(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    h.deps.max_concurrent_tasks_per_stack = 5
    seen: list[int] = []

    def at(point: str, task: NodeTask) -> None:
        if point == "start":
            with dbe.read(h.deps.db) as conn:
                seen.append(running_by_root(conn, now=h.clock.now())[task.root_stack_id])

    h.deps.fault_point = at
    huge, small = _huge_then_small(h)
    h.run()
    assert max(seen) == 5
    assert len(seen) == HUGE + 3
    assert {h.service.get_stack(s).status for s in (huge, small)} == {"COMPLETE"}


NESTED_TOP = """\
heat_template_version: 2021-04-16
resources:
  one: {type: inner.yaml}
  two: {type: inner.yaml}
"""
NESTED_INNER = _values(3)


def test_nested_stacks_share_their_roots_limit_and_still_finish(tmp_path: pathlib.Path) -> None:
    # With room for one task per tree, a parent's task that waits for its child
    # polls (READY between polls), so the child's tasks get the slot in turn.
    h = make_harness(tmp_path)
    h.deps.max_concurrent_tasks_per_stack = 1
    seen: list[tuple[str, int]] = []

    def at(point: str, task: NodeTask) -> None:
        if point == "start":
            with dbe.read(h.deps.db) as conn:
                running = running_by_root(conn, now=h.clock.now())
            seen.append((task.stack_id, running[task.root_stack_id]))

    h.deps.fault_point = at
    sid = h.create(NESTED_TOP, files={"inner.yaml": NESTED_INNER})
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert {count for _stack, count in seen} == {1}
    assert len({stack for stack, _count in seen}) == 3  # the root and both children


def _other_engine(deps: EngineDeps) -> EngineDeps:
    return EngineDeps(
        db=deps.db,
        registry=deps.registry,
        custom=deps.custom,
        clock=deps.clock,
        engine_id="engine-2",
        rng=deps.rng,
        new_id=deps.new_id,
        max_concurrent_tasks_per_stack=deps.max_concurrent_tasks_per_stack,
    )
