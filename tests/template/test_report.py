"""What validation and offline resolution report: Heat's validate document (reference 8.5,
3.3, 3.6), partially resolved values, resources in creation order and outputs."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.template.inputs import build_stack
from kiln.template.report import (
    partial_resolve,
    resolved_outputs,
    resolved_resources,
    validate_document,
)
from kiln.template.stack import StackDefinition
from kiln.testing.heat_types import HEAT_TEST_TYPES

HOT = "heat_template_version: 2021-04-16\n"


def stack_of(text: str, **kwargs: Any) -> StackDefinition:
    stack = build_stack(text, types=HEAT_TEST_TYPES, **kwargs)
    assert stack.errors == [], [e.full_message for e in stack.errors]
    return stack


# -- validate_document ---------------------------------------------------------------------------


def test_validate_document_keys_and_values() -> None:
    stack = stack_of(
        HOT
        + "description: Web tier\n"
        + "parameter_groups:\n  - {label: g, description: grouped, parameters: [p]}\n"
        + "parameters:\n"
        + "  p: {type: string, default: x, description: the p, label: P}\n"
        + "  q: {type: number, hidden: true}\n",
        environment={
            "parameters": {"q": 3},
            "parameter_defaults": {"p": "pd"},
            "resource_registry": {"My::T": "OS::Heat::None"},
        },
    )
    doc = validate_document(stack)
    assert list(doc) == ["Description", "Parameters", "ParameterGroups", "Environment"]
    assert doc["Description"] == "Web tier"
    assert doc["Parameters"] == {
        "p": {
            "Type": "String",
            "Description": "the p",
            "Label": "P",
            "NoEcho": "false",
            "Default": "pd",  # the environment default wins over the template's
        },
        "q": {"Type": "Number", "Description": "", "Label": "q", "NoEcho": "true", "Value": 3},
    }
    # groups are returned unchanged
    assert doc["ParameterGroups"] == [{"label": "g", "description": "grouped", "parameters": ["p"]}]
    assert doc["Environment"] == {
        "parameters": {"q": 3},
        "parameter_defaults": {"p": "pd"},
        "resource_registry": {"My::T": "OS::Heat::None", "resources": {}},
        "event_sinks": [],
    }


@pytest.mark.parametrize(
    "text",
    [
        HOT + "parameters:\n  p: {type: string, default: x}\n",
        "AWSTemplateFormatVersion: '2010-09-09'\nParameters:\n  P: {Type: String, Default: x}\n",
    ],
)
def test_parameter_groups_only_when_present(text: str) -> None:
    doc = validate_document(stack_of(text))
    assert "ParameterGroups" not in doc
    assert list(doc) == ["Description", "Parameters", "Environment"]


def test_environment_shape_hides_internal_sections() -> None:
    stack = stack_of(
        HOT + "parameters:\n  p: {type: string, hidden: true}\n",
        environment={
            "parameters": {"p": "secret"},
            "encrypted_param_names": ["p"],
            "event_sinks": [{"type": "zaqar-queue", "target": "q"}],
        },
    )
    env = validate_document(stack)["Environment"]
    assert set(env) == {"parameters", "parameter_defaults", "resource_registry", "event_sinks"}
    assert env["event_sinks"] == [{"type": "zaqar-queue", "target": "q"}]


def test_validate_document_of_cfn() -> None:
    stack = stack_of(
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        "Description: CFN\n"
        "Parameters:\n  P: {Type: String, Default: x, NoEcho: 'TRUE'}\n"
    )
    doc = validate_document(stack)
    assert doc["Description"] == "CFN"
    assert doc["Parameters"]["P"]["NoEcho"] == "true"
    assert "AWS::StackName" not in doc["Parameters"]  # pseudo parameters are left out


def test_missing_description_is_reported_as_no_description() -> None:
    assert validate_document(stack_of(HOT))["Description"] == "No description"


# -- partial_resolve -----------------------------------------------------------------------------

PARTIAL = (
    HOT
    + "parameters:\n  p: {type: string, default: x}\n  late: {type: string}\n"
    + "resources:\n  a: {type: OS::Heat::Value, properties: {value: 1}}\n"
    + "  b:\n    type: OS::Heat::Value\n    properties:\n      value: {get_param: p}\n"
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("plain", "plain"),
        ({"get_param": "p"}, "x"),
        ({"str_replace": {"template": "$v!", "params": {"$v": {"get_param": "p"}}}}, "x!"),
        ({"get_resource": "a"}, {"get_resource": "a"}),
        ({"get_attr": ["a", "value"]}, {"get_attr": ["a", "value"]}),
        # the arguments of a kept call are themselves resolved
        ({"get_attr": ["a", "value", {"get_param": "p"}]}, {"get_attr": ["a", "value", "x"]}),
        # a call over something unknown is kept, its other arguments resolved
        (
            {"list_join": ["-", [{"get_param": "p"}, {"get_attr": ["a", "value"]}]]},
            {"list_join": ["-", ["x", {"get_attr": ["a", "value"]}]]},
        ),
        (
            {"k": [{"get_param": "p"}, {"get_resource": "a"}]},
            {"k": ["x", {"get_resource": "a"}]},
        ),
        # absent values vanish from containers and are null at the top
        ([1, {"if": [False, 2]}], [1]),
        ({"x": {"if": [False, 2]}, "y": 1}, {"y": 1}),
        ({"if": [True, {"get_resource": "a"}, "no"]}, {"get_resource": "a"}),
        # a parameter without a value (allow_missing) is unknown too
        ({"get_param": "late"}, {"get_param": "late"}),
        # an error is reported in place, the rest still resolves
        (
            [{"str_split": [",", "a,b", 5]}, {"get_param": "p"}],
            [{"<error>": 'Incorrect index to "str_split" should be between 0 and 1'}, "x"],
        ),
    ],
)
def test_partial_resolve(data: Any, expected: Any) -> None:
    stack = build_stack(PARTIAL, types=HEAT_TEST_TYPES, allow_missing=True)
    parsed = stack.parser.parse(data, ("outputs", "o", "value"))
    assert partial_resolve(parsed, stack) == expected


def test_absent_at_top_level_is_null() -> None:
    stack = stack_of(
        HOT
        + "resources:\n  v: {type: OS::Heat::None, metadata: {if: [false, {a: 1}]}}\n"
        + "outputs:\n  o: {value: {if: [false, x]}}\n"
    )
    parsed = stack.parser.parse({"if": [False, 2]}, ("outputs", "p", "value"))
    assert partial_resolve(parsed, stack) is None
    assert resolved_outputs(stack)[0]["output_value"] is None
    assert resolved_resources(stack)[0].get("metadata") is None


# -- resolved_resources / resolved_outputs -------------------------------------------------------

ORDERED = (
    HOT
    + "parameters:\n  p: {type: string, default: x}\n"
    + "resources:\n"
    + "  web:\n"
    + "    type: OS::Heat::Value\n"
    + "    properties: {value: {get_attr: [db, value]}}\n"
    + "    metadata: {port: {get_resource: net}}\n"
    + "    update_policy: {max: 1}\n"
    + "    deletion_policy: retain\n"
    + "  db: {type: OS::Heat::Value, properties: {value: {get_param: p}}, depends_on: net}\n"
    + "  net: {type: OS::Heat::None, external_id: abc}\n"
    + "  box: {type: box.yaml}\n"
    + "  unused: {type: OS::Heat::None, condition: false}\n"
    + "outputs:\n"
    + "  url:\n"
    + "    value: {str_replace: {template: 'http://H/', params: {H: {get_attr: [web, value]}}}}\n"
    + "  name: {value: {get_param: p}, description: the p}\n"
    + "  hidden: {value: {get_param: p}, condition: false, description: kept}\n"
)
BOX = (
    HOT
    + "resources:\n"
    + "  inner: {type: OS::Heat::Value, properties: {value: {get_resource: first}}}\n"
    + "  first: {type: OS::Heat::None}\n"
)


def test_resources_in_creation_order_with_what_is_known() -> None:
    stack = stack_of(ORDERED, files={"box.yaml": BOX})
    resources = resolved_resources(stack)
    names = [r["name"] for r in resources]
    assert names == stack.creation_order()
    assert names.index("net") < names.index("db") < names.index("web")
    by_name = {r["name"]: r for r in resources}
    assert "unused" not in by_name  # disabled resources are not part of the stack
    assert by_name["web"] == {
        "name": "web",
        "type": "OS::Heat::Value",
        "implementation": "Value",
        "requires": ["db", "net"],
        "properties": {"value": {"get_attr": ["db", "value"]}},
        "metadata": {"port": {"get_resource": "net"}},
        "update_policy": {"max": 1},
        "deletion_policy": "Retain",
    }
    assert by_name["db"] == {
        "name": "db",
        "type": "OS::Heat::Value",
        "implementation": "Value",
        "requires": ["net"],
        "properties": {"value": "x"},
    }
    assert by_name["net"] == {
        "name": "net",
        "type": "OS::Heat::None",
        "implementation": "NoneResource",
        "requires": [],
        "external_id": "abc",
    }


def test_template_resources_list_their_nested_resources() -> None:
    stack = stack_of(ORDERED, files={"box.yaml": BOX})
    box = next(r for r in resolved_resources(stack) if r["name"] == "box")
    assert box["implementation"] == "TemplateResource"
    assert box["nested"] == [
        {
            "name": "first",
            "type": "OS::Heat::None",
            "implementation": "NoneResource",
            "requires": [],
        },
        {
            "name": "inner",
            "type": "OS::Heat::Value",
            "implementation": "Value",
            "requires": ["first"],
            "properties": {"value": {"get_resource": "first"}},
        },
    ]


def test_a_cycle_falls_back_to_template_order() -> None:
    stack = build_stack(
        HOT
        + "resources:\n"
        + "  b: {type: OS::Heat::None, depends_on: a}\n"
        + "  a: {type: OS::Heat::None, depends_on: b}\n"
    )
    assert [e.kind for e in stack.errors] == ["CircularDependencyException"]
    assert [r["name"] for r in resolved_resources(stack)] == ["b", "a"]


def test_unknown_type_has_no_implementation() -> None:
    stack = build_stack(HOT + "resources:\n  a: {type: My::Missing}\n", types=HEAT_TEST_TYPES)
    assert resolved_resources(stack) == [
        {"name": "a", "type": "My::Missing", "implementation": None, "requires": []}
    ]


def test_resolved_outputs() -> None:
    stack = stack_of(ORDERED, files={"box.yaml": BOX})
    assert resolved_outputs(stack) == [
        {
            "output_key": "url",
            "description": "No description given",
            "output_value": {
                "str_replace": {
                    "template": "http://H/",
                    "params": {"H": {"get_attr": ["web", "value"]}},
                }
            },
        },
        {"output_key": "name", "description": "the p", "output_value": "x"},
        {"output_key": "hidden", "description": "kept", "output_value": None},
    ]
