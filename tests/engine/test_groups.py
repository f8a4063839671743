"""ResourceGroup, ResourceChain and OS::Heat::Stack through the real engine."""

from __future__ import annotations

import itertools
import json
import pathlib
from typing import Any

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import stacks as sdb
from kiln.db.resources import Resource as Row
from kiln.engine.service import StackService
from kiln.testing.scenario import Scenario


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    return make_harness(tmp_path)


def child_of(h: Harness, parent: str) -> sdb.Stack:
    with dbe.read(h.deps.db) as conn:
        (child,) = [c for c in sdb.list_children(conn, parent) if c.deleted_at is None]
    return child


def rows(h: Harness, stack_id: str) -> dict[str, Row]:
    return {r.name: r for r in h.service.resources(stack_id)}


def done(h: Harness, stack_id: str, action: str) -> None:
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == (action, "COMPLETE"), stack.status_reason


GROUP = """\
heat_template_version: 2021-04-16
parameters:
  count: {type: number, default: 3}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::RandomString
        properties: {length: 8, salt: "salt-%index%"}
outputs:
  refs: {value: {get_attr: [group, refs]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
  values: {value: {get_attr: [group, value]}}
  by_name: {value: {get_attr: [group, attributes, value]}}
  second: {value: {get_attr: [group, resource.1.value]}}
  second_ref: {value: {get_attr: [group, resource.1]}}
  removed: {value: {get_attr: [group, removed_rsrc_list]}}
  id: {value: {get_resource: group}}
"""


def test_group_of_random_strings(h: Harness) -> None:
    sid = h.create(GROUP)
    done(h, sid, "CREATE")
    out = h.outputs(sid)
    values = out["values"]
    assert isinstance(values, list) and len(values) == 3
    assert all(isinstance(v, str) and len(v) == 8 for v in values)
    assert len(set(values)) == 3
    assert out["refs"] == values  # a RandomString's reference is its value
    assert out["refs_map"] == {"0": values[0], "1": values[1], "2": values[2]}
    assert out["by_name"] == out["refs_map"]
    assert out["second"] == out["second_ref"] == values[1]
    assert out["removed"] == []
    child = child_of(h, sid)
    assert out["id"] == child.id
    assert child.parent_resource == "group" and child.nested_depth == 1
    members = rows(h, child.id)
    assert sorted(members) == ["0", "1", "2"]
    assert {n: r.properties["salt"] for n, r in members.items()} == {
        "0": "salt-0",
        "1": "salt-1",
        "2": "salt-2",
    }


def test_scale_up_then_down_with_removal_policies(h: Harness) -> None:
    sid = h.create(GROUP)
    done(h, sid, "CREATE")
    first = h.outputs(sid)["refs_map"]
    assert isinstance(first, dict)
    h.update(sid, GROUP, parameters={"count": 5})
    done(h, sid, "UPDATE")
    grown = h.outputs(sid)["refs_map"]
    assert isinstance(grown, dict) and list(grown) == ["0", "1", "2", "3", "4"]
    assert {k: grown[k] for k in first} == first  # the members kept their strings
    removing = GROUP.replace(
        '        properties: {length: 8, salt: "salt-%index%"}\n',
        '        properties: {length: 8, salt: "salt-%index%"}\n'
        "      removal_policies: [{resource_list: ['1']}]\n",
    )
    h.update(sid, removing, parameters={"count": 2})
    done(h, sid, "UPDATE")
    out = h.outputs(sid)
    assert out["refs_map"] == {"0": first["0"], "2": first["2"]}
    assert out["removed"] == ["1"]
    assert sorted(rows(h, child_of(h, sid).id)) == ["0", "2"]
    # The skipped name is never reused: growing again adds 3, not 1.
    h.update(sid, removing, parameters={"count": 3})
    done(h, sid, "UPDATE")
    assert list(h.outputs(sid)["refs_map"]) == ["0", "2", "3"]  # type: ignore[arg-type]


BOX = """\
heat_template_version: 2021-04-16
parameters:
  label: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: label}}}
outputs:
  echoed: {value: {get_attr: [v, value]}}
"""
TEMPLATE_GROUP = """\
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      index_var: "@i@"
      resource_def:
        type: My::Box
        properties: {label: "box-@i@"}
outputs:
  echoed: {value: {get_attr: [group, echoed]}}
  first: {value: {get_attr: [group, resource.0.echoed]}}
  inner: {value: {get_attr: [group, resource.1.resource.v]}}
"""


def test_group_of_template_resources(h: Harness) -> None:
    env = {"resource_registry": {"My::Box": "box.yaml"}}
    sid = h.create(TEMPLATE_GROUP, files={"box.yaml": BOX}, environment=env)
    done(h, sid, "CREATE")
    out = h.outputs(sid)
    assert out["echoed"] == ["box-0", "box-1"]
    assert out["first"] == "box-0"
    assert isinstance(out["inner"], str) and out["inner"]  # the inner Value's physical id
    members = rows(h, child_of(h, sid).id)
    assert {r.type for r in members.values()} == {"My::Box"}


SUFFIXED = """\
heat_template_version: 2021-04-16
parameters:
  label: {type: string}
  suffix: {type: string}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {list_join: ["", [{get_param: label}, {get_param: suffix}]]}}
outputs:
  echoed: {value: {get_attr: [v, value]}}
"""


def test_members_inherit_parameter_defaults_and_their_registry_entries(h: Harness) -> None:
    env = {
        "parameter_defaults": {"suffix": "!"},
        "resource_registry": {
            "My::Box": "box.yaml",
            "resources": {"group": {"1": {"My::Box": "suffixed.yaml"}}},
        },
    }
    files = {"box.yaml": BOX, "suffixed.yaml": SUFFIXED}
    sid = h.create(TEMPLATE_GROUP, files=files, environment=env)
    done(h, sid, "CREATE")
    assert h.outputs(sid)["echoed"] == ["box-0", "box-1!"]


def test_removal_by_member_reference(h: Harness) -> None:
    sid = h.create(GROUP)
    done(h, sid, "CREATE")
    refs = h.outputs(sid)["refs_map"]
    assert isinstance(refs, dict)
    policy = f"      removal_policies: [{{resource_list: [{json.dumps(refs['0'])}]}}]\n"
    removing = GROUP.replace(
        "      count: {get_param: count}\n", "      count: {get_param: count}\n" + policy
    )
    h.update(sid, removing)
    done(h, sid, "UPDATE")
    out = h.outputs(sid)
    assert out["removed"] == ["0"]
    assert list(out["refs_map"]) == ["1", "2", "3"]  # type: ignore[call-overload]


CHAIN = """\
heat_template_version: 2021-04-16
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: [OS::Heat::Value, My::Alias, OS::Heat::Value]
      concurrent: CONCURRENT
      resource_properties: {value: shared}
outputs:
  values: {value: {get_attr: [chain, value]}}
  refs: {value: {get_attr: [chain, refs]}}
  last: {value: {get_attr: [chain, resource.2.value]}}
"""


@pytest.mark.parametrize("concurrent", [False, True])
def test_chain_of_three(h: Harness, concurrent: bool) -> None:
    env = {"resource_registry": {"My::Alias": "OS::Heat::Value"}}
    template = CHAIN.replace("CONCURRENT", str(concurrent).lower())
    sid = h.create(template, environment=env)
    done(h, sid, "CREATE")
    out = h.outputs(sid)
    assert out["values"] == ["shared"] * 3
    assert out["last"] == "shared"
    assert isinstance(out["refs"], list) and len(out["refs"]) == 3
    members = rows(h, child_of(h, sid).id)
    assert sorted(members) == ["0", "1", "2"]
    requires = {name: set(row.requires) for name, row in members.items()}
    if concurrent:
        assert requires == {"0": set(), "1": set(), "2": set()}
    else:
        assert requires == {"0": set(), "1": {members["0"].id}, "2": {members["1"].id}}


INNER = """\
heat_template_version: 2021-04-16
parameters:
  greeting: {type: string, default: hello}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: greeting}}}
outputs:
  said: {value: {get_attr: [v, value]}}
"""


def stack_template(context: str = "") -> str:
    inner = "\n".join("        " + line for line in INNER.splitlines())
    return f"""\
heat_template_version: 2021-04-16
parameters:
  greeting: {{type: string, default: hi}}
resources:
  nested:
    type: OS::Heat::Stack
    properties:
      {context}
      parameters: {{greeting: {{get_param: greeting}}}}
      timeout: 10
      template: |
{inner}
outputs:
  said: {{value: {{get_attr: [nested, outputs, said]}}}}
  all: {{value: {{get_attr: [nested, outputs]}}}}
  name: {{value: {{get_attr: [nested, stack_name]}}}}
  id: {{value: {{get_resource: nested}}}}
"""


def test_stack_from_a_template_string(h: Harness) -> None:
    sid = h.create(stack_template())
    done(h, sid, "CREATE")
    child = child_of(h, sid)
    out = h.outputs(sid)
    assert out["said"] == "hi"
    assert out["all"] == {"said": "hi"}
    assert out["name"] == child.name and out["id"] == child.id
    assert child.timeout_mins == 10
    h.update(sid, stack_template(), parameters={"greeting": "bye"})
    done(h, sid, "UPDATE")
    assert h.outputs(sid)["said"] == "bye"
    assert child_of(h, sid).id == child.id  # updated in place


def test_remote_stack_is_refused(h: Harness) -> None:
    with pytest.raises(KilnError, match="remote stacks are not supported"):
        h.create(stack_template("context: {region_name: RegionTwo}"))


def test_deleting_a_group_deletes_its_child(h: Harness) -> None:
    sid = h.create(GROUP)
    done(h, sid, "CREATE")
    child = child_of(h, sid)
    h.service.delete_stack(CALLER, sid)
    h.run()
    assert h.service.get_stack(sid).deleted_at is not None
    assert h.service.get_stack(child.id).deleted_at is not None


def test_member_failure_fails_the_group(h: Harness) -> None:
    failing = GROUP.replace(
        'type: OS::Heat::RandomString\n        properties: {length: 8, salt: "salt-%index%"}',
        "type: OS::Heat::TestResource\n        properties: {fail: true}",
    ).split("outputs:")[0]
    sid = h.create(failing)
    h.run()
    stack: Any = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "Nested stack CREATE failed" in stack.status_reason


NESTED_GROUPS = """\
heat_template_version: 2021-04-16
resources:
  outer:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          index_var: "@i@"
          resource_def:
            type: OS::Heat::Value
            properties: {value: "o%index%-i@i@"}
outputs:
  values: {value: {get_attr: [outer, value]}}
  one: {value: {get_attr: [outer, resource.1.resource.0.value]}}
"""


def test_a_group_of_groups(h: Harness) -> None:
    sid = h.create(NESTED_GROUPS)
    done(h, sid, "CREATE")
    out = h.outputs(sid)
    assert out["values"] == [["o0-i0", "o0-i1"], ["o1-i0", "o1-i1"]]
    assert out["one"] == "o1-i0"
    with dbe.read(h.deps.db) as conn:
        inner = sdb.list_children(conn, child_of(h, sid).id)
    assert sorted(c.parent_resource for c in inner) == ["0", "1"]
    assert {(c.nested_depth, c.root_id) for c in inner} == {(2, sid)}


BATCHED = """\
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    update_policy:
      batch_create: {max_batch_size: 2, pause_time: 5}
    properties:
      count: 5
      resource_def: {type: OS::Heat::Value, properties: {value: "v%index%"}}
outputs:
  values: {value: {get_attr: [group, value]}}
"""


def test_batch_create_grows_the_group_in_batches_with_pauses(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    start = h.clock.now()
    sid = h.create(BATCHED)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    assert h.outputs(sid)["values"] == ["v0", "v1", "v2", "v3", "v4"]
    (group,) = h.service.resources(sid)
    child = group.physical_id
    assert child is not None
    events = [e for e in h.service.events(child) if e.resource_type == "OS::Heat::Stack"]
    actions = [(e.action, e.status) for e in events if e.status == "COMPLETE"]
    assert actions == [("CREATE", "COMPLETE"), ("UPDATE", "COMPLETE"), ("UPDATE", "COMPLETE")]
    assert (h.clock.now() - start).total_seconds() >= 10  # two pauses of 5 s


ROLLING = """\
heat_template_version: 2021-04-16
parameters:
  prefix: {type: string, default: v}
  count: {type: number, default: 5}
resources:
  group:
    type: OS::Heat::ResourceGroup
    update_policy:
      rolling_update: {max_batch_size: 2, pause_time: 10, min_in_service: MIN}
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::Value
        properties: {value: {list_join: ["", [{get_param: prefix}, "%index%"]]}}
outputs:
  values: {value: {get_attr: [group, value]}}
"""


def batches_of(service: StackService, child: str) -> list[tuple[float, list[tuple[str, str]]]]:
    """The child's updates since its create: (start time, [(member, action)]) each.

    Times are seconds after the first update started; members are listed by
    their COMPLETE events (UPDATE, CREATE or DELETE), in order.
    """
    found: list[tuple[float, list[tuple[str, str]]]] = []
    start = None
    for e in service.events(child):
        if e.resource_type == "OS::Heat::Stack":
            if (e.action, e.status) == ("UPDATE", "IN_PROGRESS"):
                start = start or e.created_at
                found.append(((e.created_at - start).total_seconds(), []))
        elif found and e.status == "COMPLETE":
            found[-1][1].append((e.resource_name, e.action))
    return found


def test_rolling_update_moves_members_in_batches_with_pauses(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    template = ROLLING.replace("MIN", "0")
    sid = h.create(template)
    done(h, sid, "CREATE")
    child = child_of(h, sid).id
    started = h.clock.now()
    h.update(sid, template, parameters={"prefix": "w"})
    done(h, sid, "UPDATE")
    assert h.outputs(sid)["values"] == ["w0", "w1", "w2", "w3", "w4"]
    assert child_of(h, sid).id == child  # the same child, updated in place
    batches = batches_of(h.service, child)
    # Three child updates of at most two members, highest indexes first (reference),
    # each member updated once, in place.
    assert [sorted(members) for _, members in batches] == [
        [("3", "UPDATE"), ("4", "UPDATE")],
        [("1", "UPDATE"), ("2", "UPDATE")],
        [("0", "UPDATE")],
    ]
    # 10 s of the virtual clock between batches, none after the last.
    times = [at for at, _ in batches]
    assert all(later - earlier >= 10 for earlier, later in itertools.pairwise(times))
    assert 20 <= (h.clock.now() - started).total_seconds() < 30
    assert {r.name: r.properties["value"] for r in rows(h, child).values()} == {
        str(i): f"w{i}" for i in range(5)
    }


def test_rolling_update_keeps_min_in_service_by_growing_for_a_while(
    tmp_path: pathlib.Path,
) -> None:
    h = make_harness(tmp_path)
    template = ROLLING.replace("MIN", "4")
    sid = h.create(template)
    done(h, sid, "CREATE")
    child = child_of(h, sid).id
    h.update(sid, template, parameters={"prefix": "w"})
    done(h, sid, "UPDATE")
    assert h.outputs(sid)["values"] == ["w0", "w1", "w2", "w3", "w4"]
    # An extra member 5 keeps four in service while two change; it goes at the end.
    assert [sorted(members) for _, members in batches_of(h.service, child)] == [
        [("4", "UPDATE"), ("5", "CREATE")],
        [("2", "UPDATE"), ("3", "UPDATE")],
        [("0", "UPDATE"), ("1", "UPDATE")],
        [("5", "DELETE")],
    ]
    assert sorted(rows(h, child)) == ["0", "1", "2", "3", "4"]


def test_rolling_update_with_a_scale_up_creates_in_the_batches(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    template = ROLLING.replace("MIN", "0")
    sid = h.create(template, parameters={"count": 3})
    done(h, sid, "CREATE")
    child = child_of(h, sid).id
    h.update(sid, template, parameters={"prefix": "w", "count": 5})
    done(h, sid, "UPDATE")
    assert h.outputs(sid)["values"] == ["w0", "w1", "w2", "w3", "w4"]
    assert [sorted(members) for _, members in batches_of(h.service, child)] == [
        [("3", "CREATE"), ("4", "CREATE")],
        [("1", "UPDATE"), ("2", "UPDATE")],
        [("0", "UPDATE")],
    ]


def test_a_resize_alone_is_one_update_even_with_rolling_update(tmp_path: pathlib.Path) -> None:
    h = make_harness(tmp_path)
    template = ROLLING.replace("MIN", "0")
    sid = h.create(template, parameters={"count": 2})
    done(h, sid, "CREATE")
    child = child_of(h, sid).id
    h.update(sid, template, parameters={"count": 5})
    done(h, sid, "UPDATE")
    assert h.outputs(sid)["values"] == ["v0", "v1", "v2", "v3", "v4"]
    assert [sorted(members) for _, members in batches_of(h.service, child)] == [
        [("2", "CREATE"), ("3", "CREATE"), ("4", "CREATE")]
    ]


# Occurrences 1, 3 and 5 of before_outcome are the steps that sent a batch (1 with
# the handle): killed there, the batch was sent but not recorded.
@pytest.mark.parametrize(
    ("point", "occurrence"),
    [
        ("after_handle", 1),
        ("before_outcome", 1),
        ("before_outcome", 2),
        ("before_outcome", 3),
        ("before_outcome", 5),
    ],
)
def test_rolling_update_resumed_after_a_crash_updates_each_member_once(
    tmp_path: pathlib.Path, point: str, occurrence: int
) -> None:
    sc = Scenario(tmp_path, engines=2)
    template = ROLLING.replace("MIN", "0")
    sid = sc.create(template)
    sc.run()
    plan = sc.crash_at(point, resource="group", action="UPDATE", occurrence=occurrence)
    sc.update(sid, template, parameters={"prefix": "w"})
    sc.run()  # checks the convergence invariants too
    assert plan.fired_on is not None
    stack = sc.stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    with dbe.read(sc.db) as conn:
        (child,) = [c for c in sdb.list_children(conn, sid) if c.deleted_at is None]
    batches = [sorted(members) for _, members in batches_of(sc.service, child.id) if members]
    # A batch sent again after the crash changes no member: no member is updated twice.
    assert batches == [
        [("3", "UPDATE"), ("4", "UPDATE")],
        [("1", "UPDATE"), ("2", "UPDATE")],
        [("0", "UPDATE")],
    ]
