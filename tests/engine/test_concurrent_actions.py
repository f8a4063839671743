"""Many engines on one stack: racing updates, steps that raise, child stacks whose
creation committed unseen (the scaled-out mode's failure cases, on one process)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.db import engine as dbe
from kiln.db import stacks as sdb
from kiln.db import tasks as tdb
from kiln.db import templates as templates_db
from kiln.db.errors import ConcurrentUpdate
from kiln.engine.service import StackRequest
from kiln.engine.worker import EngineRuntime
from kiln.template.loader import load_template

VALUE = """
heat_template_version: 2018-08-31
resources:
  v:
    type: OS::Heat::Value
    properties: {value: %s}
outputs:
  out: {value: {get_attr: [v, value]}}
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def _request(h: Harness, stack_id: str, value: str) -> StackRequest:
    name = h.service.get_stack(stack_id).name
    return StackRequest(name=name, template=load_template(VALUE % value).data)


def test_an_update_overtaken_while_it_validated_validates_again(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_id = h.create(VALUE % "zero")
    h.run()
    validate = h.service._definition
    raced: list[bool] = []

    def racing(*args: Any, **kwargs: Any) -> Any:
        if not raced:  # another API's update is committed while this one validates
            raced.append(True)
            h.service.update_stack(CALLER, stack_id, _request(h, stack_id, "first"))
        return validate(*args, **kwargs)

    monkeypatch.setattr(h.service, "_definition", racing)
    h.service.update_stack(CALLER, stack_id, _request(h, stack_id, "second"))
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE")
    assert h.outputs(stack_id) == {"out": "second"}  # the later one won
    with dbe.read(h.deps.db) as conn:  # it replaced the first update's template
        stored = sdb.get_stack(conn, stack_id)
        before = templates_db.get_raw_template(conn, stored.prev_raw_template_id or "")
    assert before.template["resources"]["v"]["properties"] == {"value": "first"}


def test_an_update_always_overtaken_is_a_conflict(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_id = h.create(VALUE % "zero")
    h.run()
    validate = h.service._definition
    nested = [False]

    def always_racing(*args: Any, **kwargs: Any) -> Any:
        if not nested[0]:
            nested[0] = True
            try:
                h.service.update_stack(CALLER, stack_id, _request(h, stack_id, "other"))
            finally:
                nested[0] = False
        return validate(*args, **kwargs)

    monkeypatch.setattr(h.service, "_definition", always_racing)
    with pytest.raises(ConcurrentUpdate):
        h.service.update_stack(CALLER, stack_id, _request(h, stack_id, "mine"))


def test_a_step_that_raises_is_handed_back_and_runs_again(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack_id = h.create(VALUE % "once")
    runtime = EngineRuntime(h.deps, threads=1)
    runner = runtime.claimer.runner
    with dbe.write(h.deps.db) as conn:
        (task,) = tdb.claim_tasks(
            conn, h.deps.engine_id, now=h.clock.now(), lease=h.deps.lease, limit=1
        )
    monkeypatch.setattr(runner, "run", lambda t: (_ for _ in ()).throw(OSError("db away")))
    runtime._hand_back(task)
    with dbe.read(h.deps.db) as conn:
        back = tdb.get_task(conn, task.traversal_id, task.node_key)
    assert (back.state, back.lease_owner) == ("READY", None)
    assert back.not_before > h.clock.now()  # after a short pause
    monkeypatch.undo()
    h.run()
    assert h.outputs(stack_id) == {"out": "once"}


def test_a_hand_back_that_cannot_be_written_is_retried_by_the_heartbeat(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h.create(VALUE % "later")
    runtime = EngineRuntime(h.deps, threads=1)
    with dbe.write(h.deps.db) as conn:
        (task,) = tdb.claim_tasks(
            conn, h.deps.engine_id, now=h.clock.now(), lease=h.deps.lease, limit=1
        )
    real = tdb.requeue_task
    monkeypatch.setattr(tdb, "requeue_task", lambda *a, **k: (_ for _ in ()).throw(OSError("x")))
    runtime._hand_back(task)
    assert runtime._unreleased == [task]
    monkeypatch.setattr(tdb, "requeue_task", real)
    runtime._hand_back_unreleased()
    assert runtime._unreleased == []
    with dbe.read(h.deps.db) as conn:
        assert tdb.get_task(conn, task.traversal_id, task.node_key).state == "READY"


GROUP = """
heat_template_version: 2018-08-31
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::RandomString}
"""


def test_a_child_stack_made_already_is_taken_not_made_twice(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kiln.engine.nested import EngineNestedStacks

    create = EngineNestedStacks.create
    made: list[str] = []

    def twice(self: EngineNestedStacks, **kwargs: Any) -> str:
        # the first creation commits, but its step sees an error and runs again
        made.append(create(self, **kwargs))
        return create(self, **kwargs)

    monkeypatch.setattr(EngineNestedStacks, "create", twice)
    stack_id = h.create(GROUP)
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE")
    with dbe.read(h.deps.db) as conn:
        children = sdb.list_children(conn, stack_id)
    assert [c.id for c in children] == made  # one child: the one made first
