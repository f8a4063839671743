"""Parameter value conversion (reference 3.3), display, provider properties, pseudo parameters."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed
from kiln.schema.constraints import AllowedValues, Length, Range
from kiln.schema.properties import PropertyType, coerce_properties
from kiln.template.parameter_types import (
    PSEUDO_PARAMETER_NAMES,
    ParameterSchema,
    convert_value,
    display_value,
    parameter_property_schema,
    pseudo_parameter_values,
)
from kiln.template.versions import AWS_KEY, get_version

CONVERSIONS = [
    ("string", "abc", "abc"),
    ("string", 42, "42"),
    ("string", True, "True"),
    ("string", 2.5, "2.5"),
    ("number", 7, 7),
    ("number", "7", 7),
    ("number", "2.5", 2.5),
    ("number", 2.5, 2.5),
    ("number", "-3", -3),
    ("boolean", True, True),
    ("boolean", "on", True),
    ("boolean", "Yes", True),
    ("boolean", "t", True),
    ("boolean", 1, True),
    ("boolean", "0", False),
    ("boolean", "off", False),
    ("boolean", "N", False),
    ("comma_delimited_list", "x, y", ["x", " y"]),
    ("comma_delimited_list", "a,b,,c", ["a", "b", "", "c"]),
    ("comma_delimited_list", "", []),
    ("comma_delimited_list", ["a", 1, True], ["a", "1", "True"]),
    ("json", {"k": [1]}, {"k": [1]}),
    ("json", [1, {"a": 2}], [1, {"a": 2}]),
    ("json", '{"k": [1]}', {"k": [1]}),
    ("json", "[1, 2]", [1, 2]),
    ("json", "", ""),
]


@pytest.mark.parametrize(("type_", "raw", "typed"), CONVERSIONS)
def test_conversions(type_: str, raw: Any, typed: Any) -> None:
    value = convert_value(ParameterSchema("p", type_), raw)
    assert value == typed
    assert type(value) is type(typed)


CONVERSION_ERRORS = [
    ("number", "abc", "could not convert string to float: 'abc'"),
    ("number", [1], "float() argument must be a string or a real number, not 'list'"),
    ("boolean", "maybe", "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', "
     "'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"),
    ("boolean", 2, "Unrecognized value '2'"),
    ("comma_delimited_list", 5, "Value must be a comma-delimited list string: 5"),
    ("comma_delimited_list", {"a": 1}, 'Value must be a comma-delimited list string: {"a": 1}'),
    ("json", "{nope", "Value must be valid JSON: Expecting property name enclosed in double"),
    ("json", {1, 2}, "Value must be valid JSON: "),
    # evaluator fuzz findings: RecursionError escaped, or deep values reached the evaluator
    ("json", "[" * 5000 + "]" * 5000, "Value must be valid JSON: nesting depth exceeds maximum "
     "allowed depth (100)"),
    ("json", "[" * 500 + "]" * 500, "Value must be valid JSON: nesting depth exceeds"),
    ("json", {"k": json.loads("[" * 500 + "]" * 500)}, "Value must be valid JSON: nesting depth"),
    ("string", ["a"], 'Value must be a string; got ["a"]'),
]  # fmt: skip


@pytest.mark.parametrize(("type_", "raw", "message"), CONVERSION_ERRORS)
def test_conversion_errors(type_: str, raw: Any, message: str) -> None:
    with pytest.raises(StackValidationFailed) as info:
        convert_value(ParameterSchema("p", type_), raw)
    assert info.value.message.startswith("Parameter 'p' is invalid: " + message)
    assert info.value.path == ("parameters", "p")


def test_cfn_errors_use_the_cfn_section() -> None:
    schema = ParameterSchema("Size", "number", section="Parameters")
    with pytest.raises(StackValidationFailed) as info:
        convert_value(schema, "big")
    assert info.value.path == ("Parameters", "Size")
    assert schema.cfn_type == "Number"


@pytest.mark.parametrize(
    ("schema", "value", "text"),
    [
        (ParameterSchema("p", "string"), "abc", "abc"),
        (ParameterSchema("p", "string", hidden=True), "secret", "******"),
        (ParameterSchema("p", "comma_delimited_list", hidden=True), ["a"], "******"),
        (ParameterSchema("p", "number"), 2, "2"),
        (ParameterSchema("p", "number"), 2.5, "2.5"),
        (ParameterSchema("p", "boolean"), True, "True"),
        (ParameterSchema("p", "comma_delimited_list"), ["a", "b"], "a,b"),
        (ParameterSchema("p", "comma_delimited_list"), [], ""),
        (ParameterSchema("p", "json"), {"k": [1]}, '{"k": [1]}'),
        (ParameterSchema("p", "json"), "", ""),
    ],
)
def test_display_value(schema: ParameterSchema, value: Any, text: str) -> None:
    assert display_value(schema, value) == text


@pytest.mark.parametrize(
    ("type_", "property_type"),
    [
        ("string", PropertyType.STRING),
        ("number", PropertyType.NUMBER),
        ("comma_delimited_list", PropertyType.LIST),
        ("json", PropertyType.MAP),
        ("boolean", PropertyType.BOOLEAN),
    ],
)
def test_property_type_mapping(type_: str, property_type: PropertyType) -> None:
    prop = parameter_property_schema(ParameterSchema("p", type_, description="d"))
    assert prop.type is property_type
    assert prop.description == "d"
    assert prop.required
    assert prop.update_allowed
    assert not prop.has_default


def test_property_required_iff_no_default() -> None:
    with_default = ParameterSchema("p", "number", default=3)
    assert not parameter_property_schema(with_default).required
    without = ParameterSchema("p", "number")
    assert not parameter_property_schema(without, has_env_default=True).required
    assert parameter_property_schema(without).required


def test_property_carries_constraints_and_accepts_lenient_input() -> None:
    schemas = {
        "size": parameter_property_schema(
            ParameterSchema("size", "number", constraints=(Range(min=1, max=10),))
        ),
        "zones": parameter_property_schema(
            ParameterSchema("zones", "comma_delimited_list", constraints=(AllowedValues(["a"]),))
        ),
        "data": parameter_property_schema(
            ParameterSchema("data", "json", default={}, constraints=(Length(max=5),))
        ),
    }
    values, errors = coerce_properties(schemas, {"size": "11", "zones": "a,b", "data": [{"x": 1}]})
    assert values == {"size": 11, "zones": ["a", "b"], "data": '[{"x": 1}]'}
    assert [(e.path, e.message) for e in errors] == [
        (("size",), "11 is out of range (min: 1, max: 10)"),
        (("zones",), '"b" is not an allowed value ["a"]'),
    ]


def test_pseudo_parameters() -> None:
    assert set(PSEUDO_PARAMETER_NAMES) == {
        "OS::stack_name",
        "OS::stack_id",
        "OS::project_id",
        "AWS::StackId",
        "AWS::StackName",
        "AWS::Region",
    }
    hot = pseudo_parameter_values(
        get_version("2021-04-16"), stack_name="web", stack_id=None, project_id="p1"
    )
    assert hot == {"OS::stack_name": "web", "OS::stack_id": "None", "OS::project_id": "p1"}
    cfn = pseudo_parameter_values(
        get_version("2010-09-09", AWS_KEY), stack_name="web", stack_id="s1", project_id="p1"
    )
    assert cfn == {
        "AWS::StackId": "arn:openstack:heat::p1:stacks/web/s1",
        "AWS::StackName": "web",
        "AWS::Region": "ap-southeast-1",
    }
