"""Engine calls as RPC messages over the in-process transport, scoped by project."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import make_harness

from kiln.db.errors import NotFound
from kiln.engine.handlers import EngineHandlers
from kiln.rpc import messages as m
from kiln.rpc.transport import InProcessTransport
from kiln.template.loader import load_template

TEMPLATE = load_template("""\
heat_template_version: 2021-04-16
resources:
  v: {type: OS::Heat::Value, properties: {value: 42}}
outputs:
  answer: {value: {get_attr: [v, value]}, description: The answer}
""").data

ALICE = m.Context("alice")
BOB = m.Context("bob")


def test_messages_drive_a_stack_and_projects_are_isolated(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    rpc = InProcessTransport(EngineHandlers(h.service).table())
    created = rpc.call(m.CreateStack(ALICE, "web", m.StackInput(TEMPLATE)))
    assert isinstance(created, m.StackCreated)
    h.run()
    view = rpc.call(m.ShowStack(ALICE, created.stack_id))
    assert (view.action, view.status) == ("CREATE", "COMPLETE")
    assert view.outputs == (m.Output("answer", 42, "The answer"),)
    resources = rpc.call(m.ListResources(ALICE, created.stack_id)).resources
    assert [(r.name, r.status) for r in resources] == [("v", "COMPLETE")]
    events = rpc.call(m.ListEvents(ALICE, created.stack_id)).events
    assert events[-1].status_reason == "Stack CREATE completed successfully"
    assert [s.name for s in rpc.call(m.ListStacks(ALICE)).stacks] == ["web"]
    assert rpc.call(m.ListStacks(BOB)).stacks == ()
    with pytest.raises(NotFound):
        rpc.call(m.ShowStack(BOB, created.stack_id))
    with pytest.raises(NotFound):
        rpc.call(m.DeleteStack(BOB, created.stack_id))
    rpc.call(m.DeleteStack(ALICE, created.stack_id))
    h.run()
    assert rpc.call(m.ListStacks(ALICE)).stacks == ()
