"""PATCH updates (existing parameters, clear_parameters) and immutable parameters."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, make_harness

from kiln.core.errors import ImmutableParameterModified
from kiln.engine.service import StackRequest
from kiln.template.loader import load_template

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  a: {type: string, default: a0}
  b: {type: string, default: b0}
  zone: {type: string, default: z1, immutable: true}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {list_join: ["-", [{get_param: a}, {get_param: b}]]}}
outputs:
  v: {value: {get_attr: [v, value]}}
"""


def test_patch_keeps_the_stored_template_and_parameters(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE, parameters={"a": "a1", "b": "b1"})
    h.run()
    h.service.update_stack(
        CALLER, sid, StackRequest(name="s", template=None, existing=True, parameters={"b": "b2"})
    )
    h.run()
    assert h.outputs(sid) == {"v": "a1-b2"}
    h.service.update_stack(
        CALLER, sid, StackRequest(name="s", template=None, existing=True, clear_parameters=["a"])
    )
    h.run()
    assert h.outputs(sid) == {"v": "a0-b2"}


def test_full_update_resets_parameters_not_given(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE, parameters={"a": "a1"})
    h.run()
    h.update(sid, TEMPLATE, parameters={"b": "b9"})
    h.run()
    assert h.outputs(sid) == {"v": "a0-b9"}


def test_immutable_parameter_may_not_change(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    sid = h.create(TEMPLATE)
    h.run()
    with pytest.raises(ImmutableParameterModified, match="zone"):
        h.update(sid, TEMPLATE, parameters={"zone": "z2"})
    h.update(sid, TEMPLATE, parameters={"zone": "z1"})  # the same value is fine
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    request = StackRequest(name="s", template=load_template(TEMPLATE).data)
    assert request.existing is False
