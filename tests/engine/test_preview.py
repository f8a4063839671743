"""Previews decide like the engine and change nothing."""

from __future__ import annotations

import pathlib

from engine_support import CALLER, make_harness

from kiln.engine import stack_previews
from kiln.engine.service import StackRequest
from kiln.template.loader import load_template

BEFORE = """\
heat_template_version: 2021-04-16
resources:
  keep: {type: OS::Heat::Value, properties: {value: 1}}
  change: {type: OS::Heat::Value, properties: {value: 1}}
  swap: {type: OS::Heat::RandomString, properties: {length: 8}}
  drop: {type: OS::Heat::None}
"""
AFTER = """\
heat_template_version: 2021-04-16
resources:
  keep: {type: OS::Heat::Value, properties: {value: 1}}
  change: {type: OS::Heat::Value, properties: {value: 2}}
  swap: {type: OS::Heat::RandomString, properties: {length: 9}}
  new: {type: OS::Heat::None}
"""


def request(text: str) -> StackRequest:
    return StackRequest(name="s", template=load_template(text).data)


def test_update_preview_sorts_resources_and_changes_nothing(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(BEFORE)
    h.run()
    rows_before = {r.id for r in h.service.resources(sid)}
    events_before = len(h.service.events(sid))
    stack = h.service.get_stack(sid)
    preview = stack_previews.preview_update(
        h.service, CALLER, stack, request(AFTER), show_nested=False
    )
    kinds = ("added", "deleted", "replaced", "updated", "unchanged")
    assert {k: sorted(r.name for r in getattr(preview, k)) for k in kinds} == {
        "added": ["new"],
        "deleted": ["drop"],
        "replaced": ["swap"],
        "updated": ["change"],
        "unchanged": ["keep"],
    }
    assert {r.id for r in h.service.resources(sid)} == rows_before
    assert len(h.service.events(sid)) == events_before
    assert h.service.get_stack(sid).action == "CREATE"


def test_create_preview_lists_resources_in_order(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    resources = stack_previews.preview_create(h.service, CALLER, request(BEFORE)).resources
    assert [r.name for r in resources] == ["keep", "change", "swap", "drop"]
    assert resources[0].properties == {"value": 1}
