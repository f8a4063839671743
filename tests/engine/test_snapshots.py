"""Stack snapshots: taken as a SNAPSHOT traversal, restored by converging back."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, make_harness

from kiln.core.errors import NotSupported

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  value: {type: string, default: first}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: value}}}
  pw: {type: OS::Heat::RandomString}
outputs:
  v: {value: {get_attr: [v, value]}}
"""


def test_snapshot_then_restore(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE)
    h.run()
    snapshot_id = h.service.snapshot_stack(CALLER, sid, "before")
    assert h.service.get_snapshot(CALLER, sid, snapshot_id).status == "IN_PROGRESS"
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("SNAPSHOT", "COMPLETE")
    snapshot = h.service.get_snapshot(CALLER, sid, snapshot_id)
    assert (snapshot.name, snapshot.status) == ("before", "COMPLETE")
    assert set(snapshot.data["resources"]) == {"v", "pw"}

    h.update(sid, TEMPLATE, parameters={"value": "second"})
    h.run()
    assert h.outputs(sid) == {"v": "second"}
    h.service.restore_snapshot(CALLER, sid, snapshot_id)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("RESTORE", "COMPLETE"), stack.status_reason
    assert h.outputs(sid) == {"v": "first"}

    assert [s.id for s in h.service.list_snapshots(CALLER, sid)] == [snapshot_id]
    h.service.delete_snapshot(CALLER, sid, snapshot_id)
    assert h.service.list_snapshots(CALLER, sid) == []


def test_an_unfinished_snapshot_cannot_be_restored(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE)
    h.run()
    snapshot_id = h.service.snapshot_stack(CALLER, sid)
    with pytest.raises(NotSupported):
        h.service.restore_snapshot(CALLER, sid, snapshot_id)
