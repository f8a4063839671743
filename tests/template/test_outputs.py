"""The outputs section (reference 4.3): structure errors, conditions, per-output values and
errors, CFN ``Outputs``."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.paths import render_path
from kiln.template.inputs import build_stack
from kiln.template.outputs import CATEGORY, OutputDefinition, OutputValue, resolve_output
from kiln.template.stack import StackDefinition
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState

HOT = "heat_template_version: 2021-04-16\n"
AWS = "AWSTemplateFormatVersion: '2010-09-09'\n"


def stack_of(text: str, **kwargs: Any) -> StackDefinition:
    return build_stack(text, types=HEAT_TEST_TYPES, **kwargs)


def problems(text: str) -> list[tuple[str | None, str, str]]:
    return [(e.category, render_path(e.path), e.message) for e in stack_of(text).errors]


def values(stack: StackDefinition) -> dict[str, Any]:
    return {k: v.to_dict() for k, v in stack.output_values().items()}


# -- structure -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind"),
    [("5", "int"), ("[1]", "list"), ("text", "str"), ("", "NoneType")],
)
def test_output_body_must_be_a_map(body: str, kind: str) -> None:
    assert problems(HOT + f"outputs:\n  o: {body}\n") == [
        (CATEGORY, "outputs.o", f"Output definitions must be a map. Found a {kind} instead")
    ]


def test_output_needs_a_value_key() -> None:
    assert problems(HOT + "outputs:\n  o: {description: nothing}\n") == [
        (CATEGORY, "outputs.o", "Each output definition must contain a value key.")
    ]


@pytest.mark.parametrize(
    ("header", "body", "key"),
    [
        (HOT, "{value: 1, Description: x}", "Description"),  # quirk 22, Rec: rejected
        (HOT, "{value: 1, Value: 2}", "Value"),
        (HOT, "{value: 1, colour: red}", "colour"),
        ("heat_template_version: 2016-04-08\n", "{value: 1, condition: true}", "condition"),
        (AWS, "{Value: 1, value: 2}", "value"),
        (AWS, "{Value: 1, description: x}", "description"),
        ("HeatTemplateFormatVersion: '2012-12-12'\n", "{Value: 1, Condition: true}", "Condition"),
    ],
)
def test_unknown_output_keys_are_rejected(header: str, body: str, key: str) -> None:
    section = "outputs" if header.startswith("heat_template_version") else "Outputs"
    assert problems(header + f"{section}:\n  o: {body}\n") == [
        (
            CATEGORY,
            f"{section}.o.{key}",
            f'"{key}" is not a valid keyword inside a output definition',
        )
    ]


def test_outputs_section_not_a_map() -> None:
    assert problems(HOT + "outputs: [o]\n") == [
        (None, "outputs", '"outputs" must contain a map of output maps. Found a [list] instead')
    ]


def test_every_broken_output_is_reported_and_good_ones_kept() -> None:
    stack = stack_of(HOT + "outputs:\n  a: 5\n  b: {description: x}\n  c: {value: fine}\n")
    assert [render_path(e.path) for e in stack.errors] == ["outputs.a", "outputs.b"]
    assert list(stack.outputs) == ["c"]
    assert stack.output_values()["c"].value == "fine"


def test_structure_errors_carry_locations() -> None:
    stack = stack_of(HOT + "outputs:\n  o:\n    description: x\n")
    [err] = stack.errors
    assert err.location is not None
    assert (err.location.line, err.location.column) == (3, 3)


# -- values ------------------------------------------------------------------------------------


def test_output_values_are_validated() -> None:
    assert problems(HOT + "outputs:\n  o: {value: {get_attr: [r, x]}}\n") == [
        (
            None,
            "outputs.o.value.get_attr",
            'The specified reference "r" (in unknown) is incorrect.',
        )
    ]


def test_output_value_shape_errors_drop_the_output() -> None:
    stack = stack_of(HOT + "outputs:\n  a: {value: {str_split: x}}\n  b: {value: ok}\n")
    assert [render_path(e.path) for e in stack.errors] == ["outputs.a.value.str_split"]
    assert list(stack.outputs) == ["b"]


def test_outputs_never_create_dependencies() -> None:
    stack = stack_of(
        HOT
        + "resources:\n"
        + "  a: {type: OS::Heat::Value, properties: {value: 1}}\n"
        + "  b: {type: OS::Heat::Value, properties: {value: 2}}\n"
        + "outputs:\n"
        + "  o: {value: [{get_attr: [a, value]}, {get_resource: b}]}\n"
    )
    assert stack.errors == []
    assert stack.resources["a"].requires == frozenset()
    assert stack.resources["b"].requires == frozenset()


def test_each_output_keeps_its_own_error() -> None:
    stack = stack_of(
        HOT
        + "outputs:\n"
        + "  bad: {value: {str_split: [',', 'a,b', 7]}, description: index}\n"
        + "  good: {value: {list_join: ['-', [a, b]]}}\n"
        + "  also_bad: {value: {map_replace: [{a: 1, b: 2}, {keys: {a: b}}]}}\n"
    )
    assert stack.errors == []
    out = values(stack)
    assert out["good"] == {
        "output_key": "good",
        "description": "No description given",
        "output_value": "a-b",
    }
    assert out["bad"]["output_value"] is None
    assert out["bad"]["description"] == "index"
    assert out["bad"]["output_error"] == (
        'outputs.bad.value.str_split: Incorrect index to "str_split" should be between 0 and 1'
    )
    assert "collides with a key in the input map" in out["also_bad"]["output_error"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("null", None),
        ("{if: [false, x]}", None),  # absent at top level is null (K08)
        ("[a, {if: [false, b]}]", ["a"]),
        ("{get_param: OS::stack_name}", "stack"),
        ("{equals: [1, 1]}", {"equals": [1, 1]}),  # not a condition context (K10)
    ],
)
def test_output_value(value: str, expected: Any) -> None:
    stack = stack_of(HOT + f"outputs:\n  o: {{value: {value}}}\n")
    assert stack.errors == []
    out = stack.output_values()["o"]
    assert (out.value, out.error) == (expected, None)


def test_outputs_see_created_resources() -> None:
    stack = stack_of(
        HOT
        + "resources:\n  v: {type: OS::Heat::Value, properties: {value: {k: [1, 2]}}}\n"
        + "outputs:\n  o: {value: {get_attr: [v, value, k, 1]}}\n"
    )
    assert stack.output_values()["o"].value is None  # not created yet
    CreatedState().create_all(stack)
    assert stack.output_values()["o"].value == 2


@pytest.mark.parametrize(
    ("description", "shown"),
    [("'text'", "text"), ("''", "No description given"), ("5", "No description given")],
)
def test_description_shown(description: str, shown: str) -> None:
    stack = stack_of(HOT + f"outputs:\n  o: {{value: 1, description: {description}}}\n")
    assert stack.output_values()["o"].description == shown


# -- conditions ----------------------------------------------------------------------------------

CONDITIONED = (
    "heat_template_version: 2016-10-14\n"
    "conditions:\n  never: false\n  always: true\n"
    "resources:\n  a: {type: OS::Heat::None, condition: never}\n"
    "outputs:\n"
    "  by_name: {value: {get_resource: a}, condition: never, description: kept}\n"
    "  literal: {value: {get_resource: ghost}, condition: false}\n"
    "  inline: {value: {str_split: 5}, condition: {not: always}}\n"
    "  unparsable: {value: {if: [nosuch, x, y]}, condition: never}\n"
    "  shown: {value: {get_param: OS::stack_name}, condition: always}\n"
)


def test_false_condition_keeps_description_and_nulls_the_value_unparsed() -> None:
    stack = stack_of(CONDITIONED)
    # The values refer to a disabled resource, a missing one, have a bad shape or an
    # undefined condition: none of it is parsed, so none of it is an error.
    assert stack.errors == []
    assert stack.outputs["by_name"] == OutputDefinition(
        name="by_name", value=None, description="kept", enabled=False
    )
    assert values(stack) == {
        "by_name": {"output_key": "by_name", "description": "kept", "output_value": None},
        "literal": {
            "output_key": "literal",
            "description": "No description given",
            "output_value": None,
        },
        "inline": {
            "output_key": "inline",
            "description": "No description given",
            "output_value": None,
        },
        "unparsable": {
            "output_key": "unparsable",
            "description": "No description given",
            "output_value": None,
        },
        "shown": {
            "output_key": "shown",
            "description": "No description given",
            "output_value": "stack",
        },
    }


def test_condition_of_an_output_with_an_undefined_name() -> None:
    assert problems(HOT + "outputs:\n  o: {value: 1, condition: nosuch}\n") == [
        (None, "outputs.o.condition", 'Invalid condition "nosuch"')
    ]


def test_condition_context_of_an_output() -> None:
    text = HOT + "resources:\n  r: {type: OS::Heat::None}\n"
    text += "outputs:\n  o: {value: 1, condition: {equals: [{get_resource: r}, r]}}\n"
    assert problems(text) == [
        (
            None,
            "outputs.o.condition.equals[0].get_resource",
            'The function "get_resource" is invalid in this context',
        )
    ]


# -- CFN -----------------------------------------------------------------------------------------


def test_cfn_outputs() -> None:
    stack = stack_of(
        AWS
        + "Parameters:\n  P: {Type: String, Default: v}\n"
        + "Conditions:\n  Never: {'Fn::Equals': [a, b]}\n"
        + "Resources:\n  R: {Type: 'OS::Heat::Value', Properties: {value: 7}}\n"
        + "Outputs:\n"
        + "  A: {Value: {Ref: P}, Description: the parameter}\n"
        + "  B: {Value: {'Fn::GetAtt': [R, value]}, Condition: Never, Description: unused}\n"
        + "  C: {Value: {'Fn::GetAtt': [R, value]}}\n"
    )
    assert stack.errors == []
    CreatedState().create_all(stack)
    assert values(stack) == {
        "A": {"output_key": "A", "description": "the parameter", "output_value": "v"},
        "B": {"output_key": "B", "description": "unused", "output_value": None},
        "C": {"output_key": "C", "description": "No description given", "output_value": 7},
    }


def test_cfn_output_needs_value() -> None:
    assert problems(AWS + "Outputs:\n  O: {Description: only}\n") == [
        (CATEGORY, "Outputs.O", "Each output definition must contain a value key.")
    ]


# -- the API shape -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            OutputValue("o", [1], "d"),
            {"output_key": "o", "description": "d", "output_value": [1]},
        ),
        (
            OutputValue("o", None, "d", "boom"),
            {"output_key": "o", "description": "d", "output_value": None, "output_error": "boom"},
        ),
    ],
)
def test_output_value_to_dict(value: OutputValue, expected: dict[str, Any]) -> None:
    assert value.to_dict() == expected


def test_resolve_output_of_a_disabled_output_resolves_nothing() -> None:
    stack = stack_of(HOT)
    out = resolve_output(stack, OutputDefinition("o", value=None, description=None, enabled=False))
    assert out == OutputValue("o", None, "No description given")
