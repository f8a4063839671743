"""OS::Heat::Value: a value typed by ``type``, exposed as attribute ``value``."""

from __future__ import annotations

from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, allowed, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.plugin import PluginRegistry
from kiln.plugin.names import physical_resource_name
from kiln.resources.heat.value import Value
from kiln.schema.custom import CustomConstraints
from kiln.testing.plugin_context import decide, fake_resource, run_action

TYPES = allowed("string", "number", "comma_delimited_list", "json", "boolean")


def test_schema_matches_the_reference() -> None:
    assert table(Value.properties_schema) == {
        "value": ("any", True, NO_DEFAULT, True, []),
        "type": ("string", False, NO_DEFAULT, True, [TYPES]),
    }
    assert list(Value.attributes_schema) == ["value"]
    assert undocumented(Value) == []


def test_create_names_the_resource_and_exposes_the_value() -> None:
    res, ctx = fake_resource(Value, {"value": {"a": [1, 2]}}, name="v", stack_name="s")
    assert run_action(res, "create") == 1
    expected = physical_resource_name("s", "v", ctx.resource_uuid)
    assert ctx.physical_id == expected
    assert res.reference_id() == expected
    assert res.get_attribute("value") == {"a": [1, 2]}


@pytest.mark.parametrize(
    ("kind", "raw", "typed"),
    [
        ("string", 5, "5"),
        ("number", "5", 5),
        ("number", "2.5", 2.5),
        ("boolean", "yes", True),
        ("boolean", False, False),
        ("comma_delimited_list", ["a", "b"], ["a", "b"]),
        ("json", {"k": [1]}, {"k": [1]}),
    ],
)
def test_value_is_typed_by_type(kind: str, raw: Any, typed: Any) -> None:
    res, _ = fake_resource(Value, {"value": raw, "type": kind})
    assert Value.validate(res.properties) == []
    run_action(res, "create")
    assert res.get_attribute("value") == typed


@pytest.mark.parametrize(
    ("kind", "raw", "message"),
    [
        ("number", "abc", "Value 'abc' is not a number"),
        ("boolean", "maybe", '"maybe" is not a valid boolean'),
        ("json", [1, 2], '"[1, 2]" is not a map'),
        ("comma_delimited_list", {"a": 1}, "is not a list"),
    ],
)
def test_a_value_not_of_its_type_is_rejected(kind: str, raw: Any, message: str) -> None:
    res, _ = fake_resource(Value, {"value": raw, "type": kind})
    errors = Value.validate(res.properties)
    assert [e.path for e in errors] == [("value",)]
    assert message in errors[0].message
    with pytest.raises(StackValidationFailed, match="is not"):
        run_action(res, "create")


def test_stack_validation_runs_the_type_check_once_values_are_known() -> None:
    described = PluginRegistry([Value]).get("OS::Heat::Value")
    assert described is not None
    custom = CustomConstraints.builtin()
    errors = described.validate_properties({"value": "abc", "type": "number"}, (), custom)
    assert [(e.path, e.message) for e in errors] == [(("value",), "Value 'abc' is not a number")]
    assert (
        described.validate_properties({"value": "abc", "type": "number"}, ["value"], custom) == []
    )


def test_value_is_required_and_type_is_checked() -> None:
    with pytest.raises(StackValidationFailed, match="Property value not assigned"):
        fake_resource(Value, {})
    with pytest.raises(StackValidationFailed, match='"float" is not an allowed value'):
        fake_resource(Value, {"value": 1, "type": "float"})


@pytest.mark.parametrize(
    ("new", "kind"),
    [
        ({"value": "b"}, "update"),
        ({"value": "a", "type": "string"}, "update"),
        ({"value": "a"}, "unchanged"),
    ],
)
def test_both_properties_update_in_place(new: dict[str, Any], kind: str) -> None:
    res, _ = fake_resource(Value, {"value": "a"})
    assert decide(res, new).kind == kind


def test_metadata_change_alone_is_an_update() -> None:
    res, _ = fake_resource(Value, {"value": "a"})
    assert decide(res, {"value": "a"}, {"m": 1}).kind == "update"


def test_update_changes_the_attribute_and_keeps_the_id() -> None:
    res, ctx = fake_resource(Value, {"value": "1"})
    run_action(res, "create")
    physical_id = ctx.physical_id
    assert run_action(res, "update", new_properties={"value": "2", "type": "number"}) == 1
    assert res.get_attribute("value") == 2
    assert ctx.physical_id == physical_id


def test_update_to_a_value_not_of_its_type_fails() -> None:
    res, _ = fake_resource(Value, {"value": "1"})
    run_action(res, "create")
    with pytest.raises(StackValidationFailed, match="is not a number"):
        run_action(res, "update", new_properties={"value": "x", "type": "number"})
