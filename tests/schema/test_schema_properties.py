"""Property schemas and coercion of property values."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import InvalidSchemaError, KilnError, StackValidationFailed
from kiln.core.paths import render_path
from kiln.schema.constraints import AllowedValues, CustomConstraint, Length, Range
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import (
    AttributeSchema,
    PropertySchema,
    PropertyType,
    SupportStatus,
    coerce_properties,
    coerce_value,
    custom_constraint_names,
)
from kiln.schema.types import NO_DEFAULT

T = PropertyType


def errors_of(errors: list[KilnError]) -> list[tuple[str, str]]:
    return [(render_path(e.path), e.message) for e in errors]


@pytest.mark.parametrize(
    ("type_", "raw", "typed"),
    [
        (T.STRING, "abc", "abc"),
        (T.STRING, 42, "42"),
        (T.STRING, 2.5, "2.5"),
        (T.STRING, True, "True"),
        (T.INTEGER, 5, 5),
        (T.INTEGER, "5", 5),
        (T.INTEGER, 5.0, 5),
        (T.NUMBER, "7", 7),
        (T.NUMBER, "2.5", 2.5),
        (T.NUMBER, 1.5, 1.5),
        (T.BOOLEAN, True, True),
        (T.BOOLEAN, "true", True),
        (T.BOOLEAN, "False", False),
        (T.BOOLEAN, "yes", True),
        (T.BOOLEAN, "0", False),
        (T.BOOLEAN, 1, True),
        (T.LIST, ["a", 1], ["a", 1]),
        (T.LIST, ("a",), ["a"]),
        (T.MAP, {"a": 1}, {"a": 1}),
        (T.ANY, {"x": [1]}, {"x": [1]}),
        (T.ANY, "x", "x"),
    ],
)
def test_lenient_types(type_: PropertyType, raw: Any, typed: Any) -> None:
    value, errors = coerce_value(PropertySchema(type_), raw)
    assert errors == []
    assert value == typed
    assert type(value) is type(typed)


@pytest.mark.parametrize(
    ("type_", "raw", "message"),
    [
        (T.STRING, ["a"], "Value must be a string; got ['a']"),
        (T.STRING, {"a": 1}, "Value must be a string; got {'a': 1}"),
        (T.INTEGER, "5.5", "Value '5.5' is not an integer"),
        (T.INTEGER, 2.5, "Value '2.5' is not an integer"),
        (T.INTEGER, True, "Value 'True' is not an integer"),
        (T.NUMBER, "abc", "Value 'abc' is not a number"),
        (T.NUMBER, [1], "Value '[1]' is not a number"),
        (T.BOOLEAN, "maybe", '"maybe" is not a valid boolean'),
        (T.BOOLEAN, 2, '"2" is not a valid boolean'),
        (T.LIST, "a,b", '"a,b" is not a list'),
        (T.LIST, {"a": 1}, "\"{'a': 1}\" is not a list"),
        (T.MAP, "x", '"x" is not a map'),
        (T.MAP, [1], '"[1]" is not a map'),
    ],
)
def test_type_errors(type_: PropertyType, raw: Any, message: str) -> None:
    _, errors = coerce_value(PropertySchema(type_), raw)
    assert [e.message for e in errors] == [message]
    assert isinstance(errors[0], StackValidationFailed)


def test_conversion_for_template_resource_properties() -> None:
    as_list = PropertySchema(T.LIST, allow_conversion=True)
    as_map = PropertySchema(T.MAP, allow_conversion=True)
    assert coerce_value(as_list, "a, b")[0] == ["a", " b"]
    assert coerce_value(as_list, "")[0] == []
    assert coerce_value(as_map, '{"a": 1}')[0] == '{"a": 1}'
    assert coerce_value(as_map, [{"a": 1}])[0] == '[{"a": 1}]'


SERVER = {
    "name": PropertySchema(T.STRING, default="srv"),
    "flavor": PropertySchema(
        T.STRING, required=True, constraints=(CustomConstraint("nova.flavor"),)
    ),
    "count": PropertySchema(T.INTEGER, default=1, constraints=(Range(min=1, max=5),)),
    "networks": PropertySchema(
        T.LIST,
        schema={
            "port": PropertySchema(T.STRING),
            "fixed_ip": PropertySchema(T.STRING, constraints=(CustomConstraint("ip_addr"),)),
            "tag": PropertySchema(T.STRING, required=True),
        },
    ),
    "metadata": PropertySchema(
        T.MAP, schema={"role": PropertySchema(T.STRING, constraints=(AllowedValues(["web"]),))}
    ),
    "tags": PropertySchema(T.LIST, schema=PropertySchema(T.STRING, constraints=(Length(max=3),))),
}  # fmt: skip


def test_defaults_apply_and_unset_properties_are_none() -> None:
    values, errors = coerce_properties(SERVER, {"flavor": "m1.small", "name": None})
    assert errors == []
    assert values == {
        "name": "srv",
        "flavor": "m1.small",
        "count": 1,
        "networks": None,
        "metadata": None,
        "tags": None,
    }


def test_every_error_is_collected_with_its_path() -> None:
    values, errors = coerce_properties(
        SERVER,
        {
            "bogus": 1,
            "count": "9",
            "networks": [{"port": "p1", "fixed_ip": "x", "extra": 1}, {"tag": "t"}, None],
            "metadata": {"role": "db"},
            "tags": ["ok", "toolong"],
        },
        CustomConstraints.offline(),
    )
    assert errors_of(errors) == [
        ("", "Unknown Property bogus"),
        ("", "Property flavor not assigned"),
        ("count", "9 is out of range (min: 1, max: 5)"),
        ("networks[0]", "Unknown Property extra"),
        ("networks[0].fixed_ip", "Error validating value 'x': Invalid IP address"),
        ("networks[0]", "Property tag not assigned"),
        ("metadata.role", '"db" is not an allowed value ["web"]'),
        ("tags[1]", "length (7) is out of range (min: None, max: 3)"),
    ]
    assert all(e.category == "Property error" for e in errors)
    assert values["count"] == 9
    assert values["networks"][1] == {"port": None, "fixed_ip": None, "tag": "t"}
    assert values["networks"][2] is None


def test_callers_prefix_the_path() -> None:
    _, errors = coerce_properties(SERVER, {"count": "x", "flavor": "f"})
    err = errors[0].within("resources", "web", "properties")
    assert err.full_message == (
        "Property error: resources.web.properties.count: Value 'x' is not an integer"
    )


def test_custom_constraints_only_checked_with_a_registry() -> None:
    values = {"flavor": "m1.huge"}
    assert coerce_properties(SERVER, values)[1] == []
    registry = CustomConstraints()
    registry.register("nova.flavor", lambda v: "not found")
    _, errors = coerce_properties(SERVER, values, registry)
    assert errors_of(errors) == [("flavor", "Error validating value 'm1.huge': not found")]


def test_properties_must_be_a_map() -> None:
    values, errors = coerce_properties({"a": PropertySchema(T.STRING)}, ["x"])  # type: ignore[arg-type]
    assert values == {"a": None}
    assert errors_of(errors) == [("", "\"['x']\" is not a map")]


def test_none_properties_map_means_empty() -> None:
    values, errors = coerce_properties(SERVER, None)
    assert errors_of(errors) == [("", "Property flavor not assigned")]
    assert values["name"] == "srv"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: PropertySchema("Strng"), "Unknown property type Strng"),
        (lambda: PropertySchema(T.STRING, constraints=(Range(min=1),)),
         "Range constraint invalid for String"),
        (lambda: PropertySchema(T.INTEGER, default=9, constraints=(Range(max=5),)),
         "Invalid default 9 (9 is out of range (min: None, max: 5))"),
        (lambda: PropertySchema(T.INTEGER, default="x"),
         "Invalid default x (Value 'x' is not an integer)"),
        (lambda: PropertySchema(T.STRING, schema=PropertySchema(T.STRING)),
         "Schema valid only for List or Map, not String"),
        (lambda: PropertySchema(T.MAP, schema=PropertySchema(T.STRING)),
         "A Map schema must map keys to property schemas"),
        (lambda: AttributeSchema("x", type="Thing"), "Unknown attribute type Thing"),
        (lambda: SupportStatus("GONE"), "Unknown support status GONE"),
    ],
)  # fmt: skip
def test_bad_schemas(build: Any, message: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        build()
    assert info.value.message == message


def test_schema_normalisation() -> None:
    schema = PropertySchema("List", default=None, constraints=[Length(max=2)])  # type: ignore[arg-type]
    assert schema.type is T.LIST
    assert schema.default is NO_DEFAULT and not schema.has_default
    assert schema.constraints == (Length(max=2),)
    listed = PropertySchema(T.LIST, schema={"a": PropertySchema(T.STRING)})
    assert listed.item_schema is not None and listed.item_schema.type is T.MAP
    assert listed.key_schemas is None


def test_resource_type_schema_form() -> None:
    length = PropertySchema(
        T.INTEGER,
        description="How many characters to produce.",
        default=32,
        constraints=(Range(min=1, max=512),),
    )
    assert length.to_dict() == {
        "type": "integer",
        "description": "How many characters to produce.",
        "default": 32,
        "required": False,
        "update_allowed": False,
        "immutable": False,
        "constraints": [{"range": {"min": 1, "max": 512}}],
    }
    nested = PropertySchema(T.LIST, schema=PropertySchema(T.STRING), update_allowed=True)
    assert nested.to_dict()["schema"] == {
        "*": {"type": "string", "required": False, "update_allowed": False, "immutable": False}
    }
    assert AttributeSchema("All attributes.", type=T.MAP).to_dict() == {
        "description": "All attributes.",
        "type": "map",
    }
    status = SupportStatus("DEPRECATED", "2016.1", "use x", SupportStatus(version="2014.1"))
    assert status.to_dict() == {
        "status": "DEPRECATED",
        "version": "2016.1",
        "message": "use x",
        "previous_status": {
            "status": "SUPPORTED",
            "version": "2014.1",
            "message": None,
            "previous_status": None,
        },
    }


def test_custom_constraint_names_includes_nested_ones() -> None:
    assert custom_constraint_names(SERVER) == {"nova.flavor", "ip_addr"}
