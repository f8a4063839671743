"""Engine calls as RPC messages over the in-process transport, scoped by project."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import make_harness

from kiln.core.errors import NotSupported
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


def test_operations_over_messages(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    rpc = InProcessTransport(EngineHandlers(h.service).table())
    sid = rpc.call(m.CreateStack(ALICE, "web", m.StackInput(TEMPLATE))).stack_id
    h.run()
    preview = rpc.call(m.PreviewUpdate(ALICE, sid, m.StackInput(TEMPLATE)))
    assert [r.name for r in preview.unchanged] == ["v"] and preview.added == ()
    created = rpc.call(m.PreviewCreate(ALICE, "new", m.StackInput(TEMPLATE)))
    assert [r.name for r in created.resources] == ["v"]
    rpc.call(m.StackAction(ALICE, sid, "check"))
    h.run()
    assert rpc.call(m.ShowStack(ALICE, sid)).action == "CHECK"
    snap = rpc.call(m.CreateSnapshot(ALICE, sid, "s1"))
    h.run()
    listed = rpc.call(m.ListSnapshots(ALICE, sid)).snapshots
    assert [(s.id, s.status) for s in listed] == [(snap.id, "COMPLETE")]
    rpc.call(m.SnapshotRef(ALICE, sid, snap.id, op="restore"))
    h.run()
    assert rpc.call(m.ShowStack(ALICE, sid)).action == "RESTORE"
    with pytest.raises(NotSupported):
        rpc.call(m.StackAction(ALICE, sid, "cancel_update"))
    exported = rpc.call(m.AbandonStack(ALICE, sid, keep=True)).data
    assert exported["name"] == "web"
    with pytest.raises(NotFound):
        rpc.call(m.CreateSnapshot(BOB, sid))
    data = rpc.call(m.AbandonStack(ALICE, sid)).data
    again = rpc.call(m.AdoptStack(ALICE, "web2", data))
    h.run()
    assert rpc.call(m.ShowStack(ALICE, again.stack_id)).status == "COMPLETE"
