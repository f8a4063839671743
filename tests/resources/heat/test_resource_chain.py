"""OS::Heat::ResourceChain with a fake stacks client: the chain links and attributes."""

from __future__ import annotations

from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.resources.heat.resource_chain import ResourceChain, chain_members
from kiln.testing.plugin_context import FakeNestedStacks, decide, fake_resource, run_action

TYPES = ["OS::Heat::Value", "My::Alias", "OS::Heat::Value"]


def test_schema() -> None:
    assert table(ResourceChain.properties_schema) == {
        "resources": ("list", True, NO_DEFAULT, True, []),
        "concurrent": ("boolean", False, False, True, []),
        "resource_properties": ("map", False, {}, True, []),
    }
    assert ResourceChain.properties_schema["resources"].item_schema is not None
    assert list(ResourceChain.attributes_schema) == ["refs", "refs_map", "attributes"]
    assert ResourceChain.dynamic_attributes
    assert undocumented(ResourceChain) == []


def test_each_member_depends_on_the_previous_one() -> None:
    assert chain_members(TYPES, {"value": 1}, concurrent=False) == {
        "0": {"type": "OS::Heat::Value", "properties": {"value": 1}},
        "1": {"type": "My::Alias", "properties": {"value": 1}, "depends_on": ["0"]},
        "2": {"type": "OS::Heat::Value", "properties": {"value": 1}, "depends_on": ["1"]},
    }


def test_concurrent_members_and_no_properties() -> None:
    assert chain_members(TYPES[:2], {}, concurrent=True) == {
        "0": {"type": "OS::Heat::Value"},
        "1": {"type": "My::Alias"},
    }
    assert chain_members([], None, concurrent=False) == {}


def test_members_do_not_share_the_properties_object() -> None:
    members = chain_members(TYPES, {"value": {"k": [1]}}, concurrent=False)
    members["0"]["properties"]["value"]["k"].append(2)
    assert members["1"]["properties"] == {"value": {"k": [1]}}


def chain(properties: dict[str, Any]) -> tuple[ResourceChain, FakeNestedStacks, Any]:
    stacks = FakeNestedStacks(environment={"resource_registry": {"My::Alias": "OS::Heat::Value"}})
    res, ctx = fake_resource(ResourceChain, properties, clients={"stacks": stacks})
    return res, stacks, ctx


def test_create_and_attributes() -> None:
    res, stacks, ctx = chain({"resources": TYPES, "resource_properties": {"value": "x"}})
    run_action(res, "create")
    sid = ctx.physical_id
    child = stacks.children[sid]
    assert child.environment == {"resource_registry": {"My::Alias": "OS::Heat::Value"}}
    assert child.resources["2"]["depends_on"] == ["1"]
    assert res.get_attribute("value") == ["x", "x", "x"]
    assert res.get_attribute("refs") == [f"{sid}/{n}" for n in "012"]
    assert res.get_attribute("refs_map") == {n: f"{sid}/{n}" for n in "012"}
    assert res.get_attribute("attributes") == {"value": {"0": "x", "1": "x", "2": "x"}}
    assert res.get_attribute("resource.2.value") == "x"
    assert res.get_attribute("resource.0") == f"{sid}/0"


def test_update_changes_the_child_in_place() -> None:
    res, stacks, ctx = chain({"resources": TYPES})
    run_action(res, "create")
    run_action(res, "update", new_properties={"resources": TYPES[:1], "concurrent": True})
    child = stacks.children[ctx.physical_id]
    assert (child.action, list(child.resources)) == ("UPDATE", ["0"])


@pytest.mark.parametrize(
    "change",
    [{"resources": TYPES[:1]}, {"concurrent": True}, {"resource_properties": {"value": 2}}],
)
def test_every_property_updates_in_place(change: dict[str, Any]) -> None:
    res, _, _ = chain({"resources": TYPES})
    assert decide(res, {"resources": TYPES, **change}).kind == "update"


def test_an_empty_type_is_refused() -> None:
    (error,) = ResourceChain.validate(
        {"resources": ["A", ""], "concurrent": False, "resource_properties": {}}
    )
    assert isinstance(error, StackValidationFailed) and error.path == ("resources", 1)
    res, stacks, _ = chain({"resources": ["A", ""]})
    with pytest.raises(StackValidationFailed, match="must not be empty"):
        run_action(res, "create")
    assert stacks.children == {}
