"""OS::Heat::ResourceGroup with a fake stacks client: members, skip list, attributes."""

from __future__ import annotations

from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, allowed, in_range, table, undocumented

from kiln.plugin import PluginRegistry, ResourceFailure
from kiln.resources.heat._child_stack import CHILD_VERSION
from kiln.resources.heat.resource_group import (
    SKIPLIST_KEY,
    ResourceGroup,
    member_definition,
    member_names,
    replace_index,
    resolve_skiplist,
)
from kiln.schema.custom import CustomConstraints
from kiln.testing.plugin_context import FakeNestedStacks, decide, fake_resource, run_action

VALUE_DEF = {"type": "OS::Heat::Value", "properties": {"value": "v-%index%"}}


def test_schema_matches_the_reference() -> None:
    assert table(ResourceGroup.properties_schema) == {
        "count": ("integer", False, 1, True, [in_range(0, None)]),
        "index_var": ("string", False, "%index%", False, [{"length": {"min": 3}}]),
        "resource_def": ("map", True, NO_DEFAULT, True, []),
        "resource_def.type": ("string", True, NO_DEFAULT, False, []),
        "resource_def.properties": ("map", False, NO_DEFAULT, False, []),
        "resource_def.metadata": ("map", False, NO_DEFAULT, False, []),
        "removal_policies": ("list", False, [], True, []),
        "removal_policies[].resource_list": ("list", False, [], False, []),
        "removal_policies_mode": ("string", False, "append", True, [allowed("append", "update")]),
    }
    assert table(ResourceGroup.update_policy_schema) == {
        "rolling_update": ("map", False, NO_DEFAULT, False, []),
        "rolling_update.min_in_service": ("integer", False, 0, False, [in_range(0, None)]),
        "rolling_update.max_batch_size": ("integer", False, 1, False, [in_range(1, None)]),
        "rolling_update.pause_time": ("number", False, 0, False, [in_range(0, None)]),
        "batch_create": ("map", False, NO_DEFAULT, False, []),
        "batch_create.max_batch_size": ("integer", False, 1, False, [in_range(1, None)]),
        "batch_create.pause_time": ("number", False, 0, False, [in_range(0, None)]),
    }
    assert list(ResourceGroup.attributes_schema) == [
        "refs",
        "refs_map",
        "attributes",
        "removed_rsrc_list",
    ]
    assert ResourceGroup.dynamic_attributes
    assert undocumented(ResourceGroup) == []


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"count": -1, "resource_def": VALUE_DEF}, "out of range"),
        ({"index_var": "%i", "resource_def": VALUE_DEF}, "length (2) is out of range"),
        ({"removal_policies_mode": "merge", "resource_def": VALUE_DEF}, "merge"),
        ({"resource_def": {"properties": {}}}, "type"),
        ({}, "resource_def"),
    ],
)
def test_the_registry_refuses_bad_properties(properties: dict[str, Any], message: str) -> None:
    plugin_type = PluginRegistry([ResourceGroup]).get("OS::Heat::ResourceGroup")
    assert plugin_type is not None
    errors = plugin_type.validate_properties(properties, [], CustomConstraints.offline())
    assert errors and message in errors[0].full_message


@pytest.mark.parametrize(
    ("count", "skip", "names"),
    [
        (3, [], ["0", "1", "2"]),
        (3, ["1"], ["0", "2", "3"]),
        (2, ["0", "1"], ["2", "3"]),
        (0, ["0"], []),
        (2, ["x", "5"], ["0", "1"]),
    ],
)
def test_member_names_skip_the_skip_list(count: int, skip: list[str], names: list[str]) -> None:
    assert member_names(count, skip) == names


def test_index_var_is_replaced_in_every_property_string_but_not_in_keys() -> None:
    value = {"a": "x-%i%-%i%", "b": ["%i%", 3, {"%i%": "%i%"}], "c": None, "d": True}
    assert replace_index(value, "%i%", "7") == {
        "a": "x-7-7",
        "b": ["7", 3, {"%i%": "7"}],
        "c": None,
        "d": True,
    }


def test_member_definition_drops_null_properties_and_keeps_metadata_as_is() -> None:
    definition = {
        "type": "T",
        "properties": {"name": "n-%index%", "gone": None},
        "metadata": {"m": "%index%"},
    }
    assert member_definition(definition, "%index%", "2") == {
        "type": "T",
        "properties": {"name": "n-2"},
        "metadata": {"m": "%index%"},
    }
    assert member_definition({"type": "T", "properties": None}, "%index%", "0") == {"type": "T"}


def policies(*entries: Any, mode: str = "append") -> dict[str, Any]:
    return {"removal_policies": [{"resource_list": list(entries)}], "removal_policies_mode": mode}


REFS = {"0": "ref-a", "1": "ref-b", "2": "ref-c"}


@pytest.mark.parametrize(
    ("properties", "current", "created", "expected"),
    [
        (policies("1", 2), set(), True, {"1", "2"}),  # names, as strings or integers
        (policies("ref-b"), set(), True, {"1"}),  # a member reference
        (policies("nope", 9), set(), True, set()),  # neither: ignored
        (policies("ref-b"), set(), False, {"ref-b"}),  # no child yet: every entry is a name
        (policies("2"), {"5"}, True, {"2", "5"}),  # append keeps the old list
        (policies("2", mode="update"), {"5"}, True, {"2"}),  # update replaces it
        (policies("5", mode="update"), {"5"}, True, {"5"}),  # an already skipped name
        (policies(mode="update"), {"5"}, True, set()),
    ],
)
def test_removal_policies_resolve_to_names(
    properties: dict[str, Any], current: set[str], created: bool, expected: set[str]
) -> None:
    assert resolve_skiplist(properties, current, REFS, created) == expected


def group(
    properties: dict[str, Any] | None = None, **kw: Any
) -> tuple[ResourceGroup, FakeNestedStacks, Any]:
    stacks = FakeNestedStacks(
        environment={"resource_registry": {"My::T": "t.yaml"}}, files={"t.yaml": "text"}
    )
    props = {"count": 3, "resource_def": VALUE_DEF, **(properties or {})}
    res, ctx = fake_resource(ResourceGroup, props, clients={"stacks": stacks}, **kw)
    return res, stacks, ctx


def test_create_starts_a_child_with_the_members_and_the_parent_environment() -> None:
    res, stacks, ctx = group()
    assert run_action(res, "create") == 1
    child = stacks.children[ctx.physical_id]
    assert child.template == {
        "heat_template_version": CHILD_VERSION,
        "resources": {
            n: {"type": "OS::Heat::Value", "properties": {"value": f"v-{n}"}} for n in "012"
        },
        "outputs": {
            "refs_map": {"value": {n: {"get_resource": n} for n in "012"}},
            "attributes": {"value": {n: {"get_attr": [n]} for n in "012"}},
        },
    }
    assert child.environment == {"resource_registry": {"My::T": "t.yaml"}}
    assert child.files == {"t.yaml": "text"}
    assert child.parameters == {} and child.timeout_mins is None
    assert (child.action, child.status) == ("CREATE", "COMPLETE")


def test_attributes_read_the_members() -> None:
    res, _, ctx = group()
    assert res.get_attribute("refs") is None and res.reference_id() == "resource"
    run_action(res, "create")
    sid = ctx.physical_id
    refs = {n: f"{sid}/{n}" for n in "012"}
    assert res.reference_id() == sid
    assert res.get_attribute("refs") == list(refs.values())
    assert res.get_attribute("refs_map") == refs
    assert res.get_attribute("value") == ["v-0", "v-1", "v-2"]  # aggregated
    assert res.get_attribute("nothing") == [None, None, None]
    assert res.get_attribute("attributes") == {"value": {"0": "v-0", "1": "v-1", "2": "v-2"}}
    assert res.get_attribute("resource.1") == refs["1"]
    assert res.get_attribute("resource.1.value") == "v-1"
    assert res.get_attribute("resource.7") is None
    assert res.get_attribute("removed_rsrc_list") == []
    assert res.get_attribute("show") is None


def test_scaling_updates_the_child_in_place_and_removal_never_reuses_names() -> None:
    res, stacks, ctx = group({"removal_policies": [{"resource_list": ["1"]}]})
    run_action(res, "create")
    sid = ctx.physical_id
    assert list(stacks.children[sid].resources) == ["0", "2", "3"]
    assert ctx.data[SKIPLIST_KEY] == "1"
    assert run_action(res, "update", new_properties={"count": 5, "resource_def": VALUE_DEF}) == 1
    assert ctx.physical_id == sid and len(stacks.children) == 1
    assert list(stacks.children[sid].resources) == ["0", "2", "3", "4", "5"]
    # A member named by its reference is removed too, and the list accumulates.
    by_ref = {"count": 2, "resource_def": VALUE_DEF}
    by_ref["removal_policies"] = [{"resource_list": [f"{sid}/3"]}]
    run_action(res, "update", new_properties=by_ref)
    assert list(stacks.children[sid].resources) == ["0", "2"]
    assert res.get_attribute("removed_rsrc_list") == ["1", "3"]
    assert stacks.children[sid].action == "UPDATE"


def test_mode_update_replaces_the_skip_list() -> None:
    res, stacks, ctx = group({"removal_policies": [{"resource_list": ["0"]}]})
    run_action(res, "create")
    props = {"count": 3, "resource_def": VALUE_DEF, "removal_policies_mode": "update"}
    run_action(res, "update", new_properties=props)
    assert list(stacks.children[ctx.physical_id].resources) == ["0", "1", "2"]
    assert res.get_attribute("removed_rsrc_list") == []


def test_count_zero_is_an_empty_child() -> None:
    res, stacks, ctx = group({"count": 0})
    run_action(res, "create")
    assert stacks.children[ctx.physical_id].resources == {}
    assert res.get_attribute("refs") == [] and res.get_attribute("value") == []


def test_polls_until_the_child_is_done() -> None:
    res, stacks, _ = group()
    stacks.polls = 3
    assert run_action(res, "create") == 3


def test_a_failed_child_fails_the_action_with_its_reason() -> None:
    res, stacks, _ = group()
    stacks.fail_reason = "Resource CREATE failed: boom"
    with pytest.raises(ResourceFailure, match="Nested stack CREATE failed: Resource CREATE"):
        run_action(res, "create")


def test_update_without_a_child_creates_one() -> None:
    res, stacks, ctx = group()
    run_action(res, "update", new_properties={"count": 1, "resource_def": VALUE_DEF})
    assert list(stacks.children[ctx.physical_id].resources) == ["0"]
    assert stacks.children[ctx.physical_id].action == "CREATE"


def test_delete_removes_the_child() -> None:
    res, stacks, ctx = group()
    run_action(res, "create")
    sid = ctx.physical_id
    assert run_action(res, "delete") == 1
    assert stacks.state(sid) is None and stacks.children[sid].deleted
    never, _, _ = group()
    assert run_action(never, "delete") == 1


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"count": 4}, "update"),
        ({"resource_def": {"type": "OS::Heat::None"}}, "update"),
        ({"removal_policies": [{"resource_list": ["0"]}]}, "update"),
        ({"removal_policies_mode": "update"}, "update"),
        ({"index_var": "%idx%"}, "replace"),
        ({}, "unchanged"),
    ],
)
def test_update_decisions(change: dict[str, Any], kind: str) -> None:
    res, _, _ = group()
    assert decide(res, {"count": 3, "resource_def": VALUE_DEF, **change}).kind == kind
