"""Constraints: building them, where they apply, and their failure messages (reference 3.4)."""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest

from kiln.core.errors import InvalidSchemaError
from kiln.schema.constraints import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Modulo,
    Range,
    first_failure,
)
from kiln.schema.custom import CustomConstraints


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: Length(),
            "A length constraint must have a min value and/or a max value specified.",
        ),
        (lambda: Length(min=cast(Any, 1.5)), "min/max length must be integral"),
        (lambda: Length(max=True), "min/max length must be integral"),
        (
            lambda: Range(),
            "A range constraint must have a min value and/or a max value specified.",
        ),
        (lambda: Range(min=cast(Any, "a")), "min/max must be numeric"),
        (
            lambda: Modulo(step=2),
            "A modulo constraint must have a step value and an offset value specified.",
        ),
        (lambda: Modulo(step=cast(Any, 2.0), offset=1), "step/offset must be integer"),
        (lambda: Modulo(step=0, offset=0), "step cannot be 0."),
        (lambda: Modulo(step=2, offset=2), "offset must be smaller (by absolute value) than step."),
        (lambda: Modulo(step=-3, offset=-3), "offset must be smaller (by absolute value)"),
        (lambda: Modulo(step=3, offset=-1), "step and offset must be both positive or both"),
        (lambda: AllowedValues("abc"), "AllowedValues must be a list"),
        (lambda: AllowedPattern(cast(Any, 5)), "AllowedPattern must be a string"),
        (lambda: AllowedPattern("[a-"), 'AllowedPattern "[a-" is not a valid regular expression'),
        # evaluator fuzz findings: OverflowError and RecursionError escaped
        (lambda: AllowedPattern("a{99999999999999999999}"), "the repetition number is too large"),
        (lambda: AllowedPattern("(" * 2000 + ")" * 2000), "groups are nested too deeply"),
        (lambda: CustomConstraint(cast(Any, 3)), "CustomConstraint must be a string"),
    ],
)
def test_bad_arguments_are_schema_errors(build: Any, message: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        build()
    assert message in info.value.message


@pytest.mark.parametrize(
    ("constraint", "value", "message"),
    [
        (Length(min=2, max=3), "a", "length (1) is out of range (min: 2, max: 3)"),
        (Length(max=1), ["a", "b"], "length (2) is out of range (min: None, max: 1)"),
        (Length(min=1), {}, "length (0) is out of range (min: 1, max: None)"),
        (Range(min=1, max=10), 11, "11 is out of range (min: 1, max: 10)"),
        (Range(max=0.5), 0.75, "0.75 is out of range (min: None, max: 0.5)"),
        (Range(min=1), "abc", "could not convert string to float: 'abc'"),
        (Modulo(step=2, offset=1), 4, "4 is not a multiple of 2 with an offset of 1"),
        (AllowedValues(["a", "b"]), "c", '"c" is not an allowed value ["a", "b"]'),
        (AllowedValues([1, 2]), 3, "3 is not an allowed value [1, 2]"),
        (AllowedValues(["a", "b"]), ["a", "d"], '"d" is not an allowed value ["a", "b"]'),
        (AllowedPattern("[a-c]"), "abc", '"abc" does not match pattern "[a-c]"'),
        (AllowedPattern("[a-z]+"), "ABC", '"ABC" does not match pattern "[a-z]+"'),
        # The first match must reach the end: Heat does not use fullmatch.
        (AllowedPattern("a|ab"), "ab", '"ab" does not match pattern "a|ab"'),
    ],
)
def test_failure_messages(constraint: Constraint, value: Any, message: str) -> None:
    assert constraint.check(value) == message


@pytest.mark.parametrize(
    ("constraint", "value"),
    [
        (Length(min=2, max=3), "abc"),
        (Length(min=0, max=0), []),
        (Range(min=1, max=10), 10),
        (Range(min=1, max=10), "2.5"),
        (Modulo(step=2, offset=1), 7),
        (Modulo(step=2, offset=1), -1),  # mathematical modulo: -1 % 2 == 1
        (Modulo(step=-2, offset=-1), -3),
        (Modulo(step=3, offset=0), 0),
        (AllowedValues(["a", "b"]), ["a", "b", "a"]),
        (AllowedValues([1, 2]), ["1", "2"]),
        (AllowedPattern("[a-z]+"), "abc"),
        (AllowedPattern("a|ab"), "a"),
    ],
)
def test_values_that_pass(constraint: Constraint, value: Any) -> None:
    assert constraint.check(value) is None


@pytest.mark.parametrize(
    ("allowed", "value", "value_type", "ok"),
    [
        ([1, 2, 3], "3", "number", True),
        (["1", "2"], 2, "Integer", True),
        ([1, 2], "4", "number", False),
        ([True], "yes", "boolean", True),
        (["false"], False, "Boolean", True),
        ([1, 2], "1", "string", True),
        ([True], 1, None, False),  # a bool never equals a number
        (["a"], "a", "String", True),
    ],
)
def test_allowed_values_compare_in_the_value_type(
    allowed: list[Any], value: Any, value_type: str | None, ok: bool
) -> None:
    result = AllowedValues(allowed).check(value, value_type=value_type)
    assert (result is None) is ok


def test_description_replaces_the_default_message() -> None:
    constraint = AllowedPattern("[a-z]+", description="lower-case letters only")
    assert constraint.check("ABC") == "lower-case letters only"
    assert constraint.check("abc") is None


@pytest.mark.parametrize(
    ("constraint", "applicable", "not_applicable"),
    [
        (Length(min=1), ["string", "comma_delimited_list", "json", "String", "List", "Map"],
         ["number", "boolean", "Integer", "Any"]),
        (Range(min=1), ["number", "Number", "Integer"], ["string", "json", "Boolean"]),
        (Modulo(step=2, offset=0), ["number", "Integer"], ["string", "comma_delimited_list"]),
        (AllowedValues([1]), ["string", "number", "boolean", "comma_delimited_list", "List"],
         ["json", "Map", "Any"]),
        (AllowedPattern("x"), ["string", "String"], ["number", "comma_delimited_list", "List"]),
        (CustomConstraint("ip_addr"), ["string", "number", "boolean", "comma_delimited_list"],
         ["json", "Map"]),
    ],
)  # fmt: skip
def test_applicability(
    constraint: Constraint, applicable: list[str], not_applicable: list[str]
) -> None:
    for type_name in applicable:
        assert constraint.applies_to(type_name), type_name
        assert constraint.applicability_error(type_name) is None
    for type_name in not_applicable:
        assert not constraint.applies_to(type_name), type_name
        assert constraint.applicability_error(type_name) == (
            f"{constraint.kind} constraint invalid for {type_name}"
        )


def test_custom_constraint_needs_a_registry_to_fail() -> None:
    constraint = CustomConstraint("ip_addr")
    assert constraint.check("nope") is None
    registry = CustomConstraints.builtin()
    assert constraint.check("nope", registry) == "Error validating value 'nope': Invalid IP address"
    assert constraint.check("10.0.0.1", registry) is None


def test_custom_constraint_checks_list_items_one_by_one() -> None:
    registry = CustomConstraints.builtin()
    constraint = CustomConstraint("ip_addr")
    assert constraint.check(["10.0.0.1", "::1"], registry) is None
    assert constraint.check(["10.0.0.1", "x"], registry) == (
        "Error validating value 'x': Invalid IP address"
    )


def test_unregistered_custom_constraint() -> None:
    message = CustomConstraint("nova.flavor").check("m1.tiny", CustomConstraints())
    assert message == '"m1.tiny" does not validate nova.flavor (constraint not found)'


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        (Length(min=1), {"length": {"min": 1}}),
        (Range(min=1, max=512), {"range": {"min": 1, "max": 512}}),
        (Modulo(step=2, offset=1, description="odd"),
         {"modulo": {"step": 2, "offset": 1}, "description": "odd"}),
        (AllowedValues(("a", "b")), {"allowed_values": ["a", "b"]}),
        (AllowedPattern("[a-z]+"), {"allowed_pattern": "[a-z]+"}),
        (CustomConstraint("nova.flavor"), {"custom_constraint": "nova.flavor"}),
    ],
)  # fmt: skip
def test_schema_form(constraint: Constraint, expected: dict[str, Any]) -> None:
    assert constraint.to_dict() == expected


def test_first_failure_is_in_declaration_order_and_can_skip_custom() -> None:
    constraints = [CustomConstraint("ip_addr"), Length(max=2)]
    registry = CustomConstraints.builtin()
    assert first_failure(constraints, "abc", registry) == (
        "Error validating value 'abc': Invalid IP address"
    )
    assert first_failure(constraints, "abc", registry, skip_custom=True) == (
        "length (3) is out of range (min: None, max: 2)"
    )
    assert first_failure(constraints, "10.0.0.1", registry, skip_custom=True) == (
        "length (8) is out of range (min: None, max: 2)"
    )


def test_a_pattern_python_warns_about_still_compiles_without_a_warning() -> None:
    # Evaluator fuzz finding: "[[a]" made re emit FutureWarning ("Possible nested
    # set"), an exception where warnings are errors, noise in a service's log otherwise.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        constraint = AllowedPattern("[[a]x")
    assert constraint.check("ax") is None
    assert constraint.check("b") == '"b" does not match pattern "[[a]x"'


@pytest.mark.timeout(60)  # a hang fails here; the speed itself is not asserted
def test_catastrophic_allowed_pattern_is_stopped_not_hung() -> None:
    constraint = AllowedPattern("(a|aa)+$")
    message = constraint.check("a" * 40 + "!")
    assert message is not None
    assert "could not be matched" in message and "took too long" in message
    assert constraint.check("aaaa") is None
