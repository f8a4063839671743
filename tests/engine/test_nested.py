"""Template resources as nested stacks: create, read through, update, delete."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.db import engine as dbe
from kiln.db import stacks as sdb

INNER = """\
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 6}
  label: {type: string, default: inner}
resources:
  pw: {type: OS::Heat::RandomString, properties: {length: {get_param: length}}}
  deeper: {type: leaf.yaml, properties: {text: {get_param: label}}}
outputs:
  password: {value: {get_attr: [pw, value]}}
  echoed: {value: {get_attr: [deeper, echoed]}}
"""
LEAF = """\
heat_template_version: 2021-04-16
parameters:
  text: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: text}}}
outputs:
  echoed: {value: {get_attr: [v, value]}}
  OS::stack_id: {value: {get_resource: v}}
"""
TOP = """\
heat_template_version: 2021-04-16
resources:
  box:
    type: My::Box
    properties: {length: 10, label: outer}
  after:
    type: OS::Heat::Value
    properties: {value: {get_attr: [box, echoed]}}
outputs:
  password: {value: {get_attr: [box, password]}}
  echoed: {value: {get_attr: [after, value]}}
  inner_pw: {value: {get_attr: [box, resource.pw]}}
"""
FILES = {"inner.yaml": INNER, "leaf.yaml": LEAF}
ENV = {"resource_registry": {"My::Box": "inner.yaml"}}


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def children(h: Harness, parent: str) -> list[sdb.Stack]:
    with dbe.read(h.deps.db) as conn:
        return sdb.list_children(conn, parent)


def test_three_levels_create_and_read_through(h: Harness) -> None:
    sid = h.create(TOP, files=FILES, environment=ENV)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    out = h.outputs(sid)
    assert isinstance(out["password"], str) and len(out["password"]) == 10
    assert out["echoed"] == "outer"
    assert out["inner_pw"] == out["password"]  # a RandomString's reference is its value
    (child,) = children(h, sid)
    assert child.parent_resource == "box" and child.nested_depth == 1 and child.root_id == sid
    (grandchild,) = children(h, child.id)
    assert grandchild.nested_depth == 2 and grandchild.root_id == sid
    box = {r.name: r for r in h.service.resources(sid)}["box"]
    assert box.physical_id == child.id


def test_update_reaches_the_nested_stack(h: Harness) -> None:
    sid = h.create(TOP, files=FILES, environment=ENV)
    h.run()
    h.update(sid, TOP.replace("label: outer", "label: changed"), files=FILES, environment=ENV)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    assert h.outputs(sid)["echoed"] == "changed"
    (child,) = children(h, sid)
    assert child.action == "UPDATE"


def test_changed_provider_template_updates_the_nested_stack(h: Harness) -> None:
    sid = h.create(TOP, files=FILES, environment=ENV)
    h.run()
    changed = dict(
        FILES,
        **{
            "leaf.yaml": LEAF.replace(
                "{get_param: text}", "{str_replace: {template: X!, params: {X: {get_param: text}}}}"
            )
        },
    )
    h.update(sid, TOP, files=changed, environment=ENV)
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert h.outputs(sid)["echoed"] == "outer!"


def test_delete_removes_the_whole_tree(h: Harness) -> None:
    sid = h.create(TOP, files=FILES, environment=ENV)
    h.run()
    (child,) = children(h, sid)
    h.service.delete_stack(CALLER, sid)
    h.run()
    assert h.service.get_stack(sid).deleted_at is not None
    assert h.service.get_stack(child.id).deleted_at is not None


def test_a_failure_inside_is_reported_with_its_reason(h: Harness) -> None:
    bad = dict(
        FILES,
        **{
            "leaf.yaml": LEAF.replace(
                "v: {type: OS::Heat::Value, properties: {value: {get_param: text}}}",
                "v: {type: OS::Heat::TestResource, properties: {fail: true}}",
            ).replace("echoed: {value: {get_attr: [v, value]}}", "echoed: {value: x}")
        },
    )
    sid = h.create(TOP, files=bad, environment=ENV)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "Test Resource failed v" in stack.status_reason


GROUP = """\
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: My::Member, properties: {value: "%index%"}}
outputs:
  refs: {value: {get_attr: [group, refs]}}
"""


def test_environment_change_reaches_a_group_whose_properties_did_not_change(h: Harness) -> None:
    env = {"resource_registry": {"My::Member": "OS::Heat::Value"}}
    sid = h.create(GROUP, environment=env)
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    before = h.outputs(sid)["refs"]
    h.update(sid, GROUP, environment={"resource_registry": {"My::Member": "OS::Heat::None"}})
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    (child,) = children(h, sid)
    types = {r.type for r in h.service.resources(child.id)}
    assert types == {"My::Member"}
    after = h.outputs(sid)["refs"]
    assert after != before  # the members were replaced by OS::Heat::None ones
