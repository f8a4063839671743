"""Export, abandon and adopt: a stack handed over without touching its resources."""

from __future__ import annotations

import json
import pathlib

from engine_support import CALLER, make_harness

TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  pw: {type: OS::Heat::RandomString, properties: {length: 12}}
  t: {type: OS::Heat::TestResource, properties: {value: {get_attr: [pw, value]}}}
outputs:
  pw: {value: {get_attr: [pw, value]}}
"""


def test_abandon_then_adopt_keeps_the_resources(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE)
    h.run()
    password = h.outputs(sid)["pw"]
    exported = h.service.export_stack(CALLER, sid)
    assert exported["resources"]["pw"]["resource_data"]["value"] == password
    data = h.service.abandon_stack(CALLER, sid)
    assert data == exported
    assert h.service.get_stack(sid).deleted_at is not None
    assert h.service.resources(sid) == []
    deletes = [e for e in h.service.events(sid) if e.action == "DELETE"]
    assert deletes == []  # nothing was deleted in the cloud

    adopted = h.service.adopt_stack(CALLER, "again", json.dumps(data))
    h.run()
    stack = h.service.get_stack(adopted)
    assert (stack.action, stack.status) == ("ADOPT", "COMPLETE"), stack.status_reason
    assert h.outputs(adopted)["pw"] == password  # taken over, not generated again
    rows = {r.name: r for r in h.service.resources(adopted)}
    assert rows["pw"].physical_id == data["resources"]["pw"]["resource_id"]
