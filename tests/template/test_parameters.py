"""Parameter declarations (reference 3.1, 3.4, 1.6) and cases P01-P13 of section 9.4."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kiln.core.errors import KilnError
from kiln.core.paths import render_path
from kiln.schema.constraints import (
    AllowedPattern,
    AllowedValues,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from kiln.schema.custom import CustomConstraints
from kiln.template.parameter_groups import validate_parameter_groups
from kiln.template.parameters import (
    NO_DEFAULT,
    ParameterSchema,
    parse_parameter_schemas,
    resolve_parameter_values,
)
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY, get_version

LATEST = get_version("2021-04-16")
AWS = get_version("2010-09-09", AWS_KEY)


def parse(section: Any, version: str = "2021-04-16") -> tuple[dict[str, ParameterSchema], Any]:
    schemas, errors = parse_parameter_schemas(section, get_version(version))
    return schemas, [(e.kind, render_path(e.path), e.message) for e in errors]


def one_error(section: Any, version: str = "2021-04-16") -> tuple[str, str, str]:
    _, errors = parse(section, version)
    assert len(errors) == 1, errors
    return errors[0]  # type: ignore[no-any-return]


# -- declarations -------------------------------------------------------------------
def test_full_hot_declaration() -> None:
    schemas, errors = parse(
        {
            "flavor": {
                "type": "string",
                "label": "Flavor",
                "description": "Nova flavor",
                "default": "m1.small",
                "hidden": True,
                "immutable": "true",
                "constraints": [
                    {"length": {"min": 1, "max": "20"}, "description": "short"},
                    {"allowed_values": ["m1.small", "m1.large"]},
                    {"allowed_pattern": "m1\\..*"},
                    {"custom_constraint": "nova.flavor"},
                ],
                "tags": ["compute", 1],
                "schema": {"ignored": True},
            }
        }
    )
    assert errors == []
    assert schemas["flavor"] == ParameterSchema(
        name="flavor",
        type="string",
        label="Flavor",
        description="Nova flavor",
        default="m1.small",
        hidden=True,
        immutable=True,
        constraints=(
            Length(min=1, max=20, description="short"),
            AllowedValues(("m1.small", "m1.large")),
            AllowedPattern("m1\\..*"),
            CustomConstraint("nova.flavor"),
        ),
        tags=("compute", "1"),
    )
    assert schemas["flavor"].path == ("parameters", "flavor")


def test_minimal_declaration_and_null_section() -> None:
    schemas, errors = parse({"n": {"type": "number", "default": None}})
    assert errors == []
    n = schemas["n"]
    assert (n.label, n.description, n.default, n.hidden, n.immutable) == (
        None,
        "",
        NO_DEFAULT,
        False,
        False,
    )
    assert (n.constraints, n.tags) == ((), None)
    assert parse(None) == ({}, [])
    assert parse({}) == ({}, [])


def test_modulo_from_2017_02_24() -> None:
    decl = {"n": {"type": "number", "constraints": [{"modulo": {"step": 2, "offset": 1}}]}}
    schemas, errors = parse(decl, "2017-02-24")
    assert errors == []
    assert schemas["n"].constraints == (Modulo(step=2, offset=1),)
    assert one_error(decl, "2016-10-14") == (
        "InvalidSchemaError",
        "parameters.n.constraints[0]",
        "No constraint expressed",
    )


def test_tags_from_2018_03_02() -> None:
    decl = {"s": {"type": "string", "tags": ["net"]}}
    assert parse(decl, "queens")[0]["s"].tags == ("net",)
    assert parse(decl, "2018-08-31")[1] == []
    assert one_error(decl, "2017-09-01") == (
        "InvalidSchemaError",
        "parameters.s.tags",
        "Invalid key 'tags' for parameter (s)",
    )


HOT_ERRORS = [
    ({"p": "x"}, "parameters.p", "Invalid parameter (p), expected a mapping"),
    ({"p": None}, "parameters.p", "Invalid parameter (p), expected a mapping"),
    ({"p": {"type": "string", "Default": 1}}, "parameters.p.Default",
     "Invalid key 'Default' for parameter (p)"),
    ({"p": {"default": 1}}, "parameters.p", "Missing parameter type for parameter: p"),
    ({"p": {"type": "String"}}, "parameters.p.type", "Invalid type (String)"),
    ({"p": {"type": ["string"]}}, "parameters.p.type", "Invalid type (['string'])"),
    ({"p": {"type": "string", "tags": "net"}}, "parameters.p.tags",
     "Tags property should be a list for parameter: p"),
    ({"p": {"type": "string", "hidden": "maybe"}}, "parameters.p.hidden",
     "Invalid hidden value (maybe) for parameter (p), expected a boolean"),
    ({"p": {"type": "string", "constraints": {"length": {"min": 1}}}}, "parameters.p.constraints",
     "Invalid parameter constraints for parameter p, expected a list"),
    ({"p": {"type": "string", "constraints": ["x"]}}, "parameters.p.constraints[0]",
     "Invalid parameter constraints, expected a mapping"),
    ({"p": {"type": "string", "constraints": [{"lenght": {"min": 1}}]}},
     "parameters.p.constraints[0].lenght", "Invalid key 'lenght' for parameter constraints"),
    ({"p": {"type": "string", "constraints": [{"description": "x"}]}},
     "parameters.p.constraints[0]", "No constraint expressed"),
    ({"p": {"type": "string", "constraints": [{"length": {"min": 1}, "allowed_pattern": "x"}]}},
     "parameters.p.constraints[0]",
     "Only one constraint may be expressed in a constraint map, found: length, allowed_pattern"),
    ({"p": {"type": "string", "constraints": [{"length": 5}]}},
     "parameters.p.constraints[0].length", "Invalid length constraint, expected a mapping"),
    ({"p": {"type": "string", "constraints": [{"length": {"least": 1}}]}},
     "parameters.p.constraints[0].length.least", "Invalid key 'least' for length constraint"),
    ({"p": {"type": "string", "constraints": [{"length": {}}]}},
     "parameters.p.constraints[0].length",
     "A length constraint must have a min value and/or a max value specified."),
    ({"p": {"type": "string", "constraints": [{"length": {"min": 1.5}}]}},
     "parameters.p.constraints[0].length", "min/max length must be integral"),
    ({"p": {"type": "string", "constraints": [{"length": {"min": "x"}}]}},
     "parameters.p.constraints[0].length.min", "min/max length must be integral"),
    ({"p": {"type": "number", "constraints": [{"range": {"max": "ten"}}]}},
     "parameters.p.constraints[0].range.max", "min/max must be numeric"),
    ({"p": {"type": "number", "constraints": [{"range": {}}]}},
     "parameters.p.constraints[0].range",
     "A range constraint must have a min value and/or a max value specified."),
    ({"p": {"type": "number", "constraints": [{"range": {"min": 1, "step": 2}}]}},
     "parameters.p.constraints[0].range.step", "Invalid key 'step' for range constraint"),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": 2}}]}},
     "parameters.p.constraints[0].modulo",
     "A modulo constraint must have a step value and an offset value specified."),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": 2.5, "offset": 1}}]}},
     "parameters.p.constraints[0].modulo", "step/offset must be integer"),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": 0, "offset": 0}}]}},
     "parameters.p.constraints[0].modulo", "step cannot be 0."),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": 2, "offset": 3}}]}},
     "parameters.p.constraints[0].modulo", "offset must be smaller (by absolute value) than step."),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": -2, "offset": 1}}]}},
     "parameters.p.constraints[0].modulo",
     "step and offset must be both positive or both negative."),
    ({"p": {"type": "number", "constraints": [{"modulo": {"step": 2, "offset": 1, "x": 0}}]}},
     "parameters.p.constraints[0].modulo.x", "Invalid key 'x' for modulo constraint"),
    ({"p": {"type": "string", "constraints": [{"allowed_values": "a,b"}]}},
     "parameters.p.constraints[0].allowed_values", "AllowedValues must be a list"),
    ({"p": {"type": "string", "constraints": [{"allowed_pattern": ["a"]}]}},
     "parameters.p.constraints[0].allowed_pattern", "AllowedPattern must be a string"),
]  # fmt: skip


@pytest.mark.parametrize(("section", "path", "message"), HOT_ERRORS)
def test_hot_declaration_errors(section: Any, path: str, message: str) -> None:
    assert one_error(section) == ("InvalidSchemaError", path, message)


@pytest.mark.parametrize(
    ("type_", "constraint", "kind"),
    [
        ("string", {"range": {"min": 1}}, "Range"),
        ("string", {"modulo": {"step": 2, "offset": 0}}, "Modulo"),
        ("number", {"length": {"min": 1}}, "Length"),
        ("boolean", {"length": {"min": 1}}, "Length"),
        ("json", {"allowed_values": [1]}, "AllowedValues"),
        ("number", {"allowed_pattern": "[0-9]"}, "AllowedPattern"),
        ("comma_delimited_list", {"allowed_pattern": "x"}, "AllowedPattern"),
        ("json", {"custom_constraint": "x"}, "CustomConstraint"),
    ],
)
def test_constraint_not_applicable_to_type(type_: str, constraint: Any, kind: str) -> None:
    section = {"p": {"type": type_, "constraints": [{"allowed_values": [1]}, constraint]}}
    if type_ == "json":
        section["p"]["constraints"] = [{"length": {"max": 9}}, constraint]
    schemas, errors = parse(section)
    assert errors == [
        (
            "InvalidSchemaError",
            "parameters.p.constraints[1]",
            f"Parameter 'p' is invalid: {kind} constraint invalid for {type_}",
        )
    ]
    # the inapplicable constraint is dropped, the other kept
    assert len(schemas["p"].constraints) == 1


def test_errors_are_collected_across_parameters() -> None:
    schemas, errors = parse(
        {
            "a": {"type": "nope"},
            "b": {"type": "string", "bad": 1, "constraints": [{"length": {}}, {"range": 5}]},
            "c": {"type": "number", "default": 11, "constraints": [{"range": {"max": 10}}]},
            "d": {"type": "string"},
            "e": {"type": "number", "default": 0, "x": 1, "constraints": [{"range": {"min": 1}}]},
        }
    )
    assert [e[1] for e in errors] == [
        "parameters.a.type",
        "parameters.b.bad",
        "parameters.b.constraints[0].length",
        "parameters.b.constraints[1].range",
        "parameters.c.default",
        "parameters.e.x",
        "parameters.e.default",
    ]
    # unusable declarations are left out; others are kept
    assert sorted(schemas) == ["b", "c", "d", "e"]


def test_section_must_be_a_map() -> None:
    schemas, errors = parse(["a"])
    assert schemas == {}
    assert errors == [
        (
            "StackValidationFailed",
            "parameters",
            '"parameters" must contain a map of parameter maps. Found a [list] instead',
        )
    ]


@pytest.mark.parametrize(
    ("type_", "default", "constraint", "message"),
    [
        ("number", 11, {"range": {"min": 1, "max": 10}},
         "Invalid default 11 (11 is out of range (min: 1, max: 10))"),
        ("number", "4", {"modulo": {"step": 2, "offset": 1}},
         "Invalid default 4 (4 is not a multiple of 2 with an offset of 1)"),
        ("string", "abcd", {"length": {"max": 3}},
         "Invalid default abcd (length (4) is out of range (min: None, max: 3))"),
        ("json", '{"a": 1, "b": 2}', {"length": {"max": 1}},
         "Invalid default {\"a\": 1, \"b\": 2} (length (2) is out of range (min: None, max: 1))"),
        ("boolean", "on", {"allowed_values": [False]},
         "Invalid default on (true is not an allowed value [false])"),
        ("string", "x", {"allowed_pattern": "y", "description": "must be y"},
         "Invalid default x (must be y)"),
    ],
)  # fmt: skip
def test_default_checked_against_constraints(
    type_: str, default: Any, constraint: Any, message: str
) -> None:
    decl = {"p": {"type": type_, "default": default, "constraints": [constraint]}}
    assert one_error(decl) == (
        "InvalidSchemaError",
        "parameters.p.default",
        f"Parameter 'p' is invalid: {message}",
    )


def test_default_not_checked_against_custom_constraints() -> None:
    decl = {
        "p": {"type": "string", "default": "x", "constraints": [{"custom_constraint": "ip_addr"}]}
    }
    assert parse(decl)[1] == []


# -- CFN ----------------------------------------------------------------------------
def test_cfn_declaration() -> None:
    section = {
        "Size": {
            "Type": "Number",
            "Default": "2",
            "MinValue": "1",
            "MaxValue": 10,
            "ConstraintDescription": "between one and ten",
            "Description": "How many",
            "Label": "Size",
        },
        "Password": {
            "Type": "String",
            "NoEcho": "TRUE",
            "MinLength": 8,
            "AllowedPattern": "[a-z0-9]*",
        },
        "Zones": {"Type": "CommaDelimitedList", "AllowedValues": ["a", "b"]},
        "Data": {"Type": "Json", "Default": {"k": 1}},
        "Flag": {"Type": "Boolean", "NoEcho": "false"},
    }
    for version in (AWS, get_version("2012-12-12", HEAT_CFN_KEY)):
        schemas, errors = parse_parameter_schemas(section, version)
        assert errors == []
        size = schemas["Size"]
        assert size.type == "number" and size.default == "2" and size.label == "Size"
        assert size.constraints == (Range(min=1, max=10, description="between one and ten"),)
        assert size.path == ("Parameters", "Size")
        password = schemas["Password"]
        assert password.hidden and password.type == "string"
        assert password.constraints == (Length(min=8), AllowedPattern("[a-z0-9]*"))
        assert schemas["Zones"].type == "comma_delimited_list"
        assert schemas["Data"].type == "json"
        assert not schemas["Flag"].hidden
        assert schemas["Size"].immutable is False and schemas["Size"].tags is None


def test_cfn_constraint_description_is_every_constraints_message() -> None:
    section = {
        "Name": {
            "Type": "String",
            "MinLength": 2,
            "AllowedValues": ["ab", "abc"],
            "ConstraintDescription": "pick ab or abc",
        }
    }
    schemas, _ = parse_parameter_schemas(section, AWS)
    constraints = schemas["Name"].constraints
    assert [c.description for c in constraints] == ["pick ab or abc"] * 2
    assert [c.check(v) for c, v in zip(constraints, ["a", "x"])] == ["pick ab or abc"] * 2


@pytest.mark.parametrize(
    ("section", "path", "message"),
    [
        ({"P": {"Type": "String", "Hidden": True}}, "Parameters.P.Hidden",
         "Invalid key 'Hidden' for parameter (P)"),
        ({"P": {"Type": "String", "type": "x"}}, "Parameters.P.type",
         "Invalid key 'type' for parameter (P)"),
        ({"P": {"Default": "x"}}, "Parameters.P", "Missing parameter type for parameter: P"),
        ({"P": {"Type": "string"}}, "Parameters.P.Type", "Invalid type (string)"),
        ({"P": {"Type": "List"}}, "Parameters.P.Type", "Invalid type (List)"),
        ({"P": "x"}, "Parameters.P", "Invalid parameter (P), expected a mapping"),
        ({"P": {"Type": "String", "MinLength": "x"}}, "Parameters.P.MinLength",
         "min/max length must be integral"),
        ({"P": {"Type": "Number", "MaxValue": "x"}}, "Parameters.P.MaxValue",
         "min/max must be numeric"),
        ({"P": {"Type": "String", "AllowedValues": "a"}}, "Parameters.P.AllowedValues",
         "AllowedValues must be a list"),
        ({"P": {"Type": "Number", "MinLength": 1}}, "Parameters.P.MinLength",
         "Parameter 'P' is invalid: Length constraint invalid for Number"),
        ({"P": {"Type": "Number", "Default": 0, "MinValue": 1}}, "Parameters.P.Default",
         "Parameter 'P' is invalid: Invalid default 0 (0 is out of range (min: 1, max: None))"),
    ],
)  # fmt: skip
def test_cfn_declaration_errors(section: Any, path: str, message: str) -> None:
    _, errors = parse_parameter_schemas(section, AWS)
    assert [(render_path(e.path), e.message) for e in errors] == [(path, message)]


# -- conformance cases P01-P13 (section 9.4), at unit level ------------------------------
def validate(
    text: str, user: dict[str, Any] | None = None, env: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[KilnError]]:
    """Stack validation with value checking, as the conformance 'validate' mode does."""
    template = yaml.safe_load(text)
    version = get_version(str(template["heat_template_version"]))
    schemas, errors = parse_parameter_schemas(template.get("parameters"), version)
    values, value_errors = resolve_parameter_values(
        schemas,
        user or {},
        env or {},
        check_values=True,
        custom=CustomConstraints.offline(),
    )
    errors += value_errors
    errors += validate_parameter_groups(template.get("parameter_groups"), list(schemas))
    return values, errors


def test_p01_precedence() -> None:
    values, errors = validate(
        """
        heat_template_version: 2021-04-16
        parameters:
          a: {type: string, default: tmpl}
          b: {type: string, default: tmpl}
          c: {type: string, default: tmpl}
        """,
        user={"c": "user"},
        env={"b": "pd", "c": "pd", "zzz": "ignored"},
    )
    assert errors == []
    assert values == {"a": "tmpl", "b": "pd", "c": "user"}


def test_p03_type_conversions() -> None:
    values, errors = validate(
        """
        heat_template_version: 2021-04-16
        parameters:
          n: {type: number}
          f: {type: number, default: "2.5"}
          b: {type: boolean, default: "on"}
          l: {type: comma_delimited_list, default: "x, y"}
          j: {type: json, default: '{"k": [1]}'}
          s: {type: string, default: 42}
        """,
        user={"n": "7"},
    )
    assert errors == []
    assert values == {"n": 7, "f": 2.5, "b": True, "l": ["x", " y"], "j": {"k": [1]}, "s": "42"}


P_CASES = [
    ("P02", """
        heat_template_version: 2021-04-16
        parameters:
          a: {type: string, default: x}
        """, {"b": 1}, "UnknownUserParameter", "The Parameter (b) was not defined in template."),
    ("P04", """
        heat_template_version: 2021-04-16
        parameters:
          b: {type: boolean, default: maybe}
        """, {}, "StackValidationFailed", "Unrecognized value 'maybe'"),
    ("P05", """
        heat_template_version: 2021-04-16
        parameters:
          n: {type: number, default: 11, constraints: [{range: {min: 1, max: 10}}]}
        """, {}, "InvalidSchemaError",
        "Invalid default 11 (11 is out of range (min: 1, max: 10))"),
    ("P06", """
        heat_template_version: 2021-04-16
        parameters:
          s:
            type: string
            constraints:
              - allowed_pattern: "[a-z]+"
                description: lower-case letters only
        """, {"s": "ABC"}, "StackValidationFailed",
        "Parameter 's' is invalid: lower-case letters only"),
    ("P07", """
        heat_template_version: 2021-04-16
        parameters:
          s: {type: string, default: abc, constraints: [{allowed_pattern: "[a-c]"}]}
        """, {}, "InvalidSchemaError", '"abc" does not match pattern "[a-c]"'),
    ("P08", """
        heat_template_version: 2021-04-16
        parameters:
          s: {type: string, default: x, constraints: [{range: {min: 1}}]}
        """, {}, "InvalidSchemaError", "Range constraint invalid for string"),
    ("P09", """
        heat_template_version: 2016-10-14
        parameters:
          n: {type: number, default: 3, constraints: [{modulo: {step: 2, offset: 1}}]}
        """, {}, "InvalidSchemaError", "No constraint expressed"),
    ("P10", """
        heat_template_version: 2017-09-01
        parameters:
          s: {type: string, default: x, tags: [net]}
        """, {}, "InvalidSchemaError", "Invalid key 'tags' for parameter (s)"),
    ("P11", """
        heat_template_version: 2021-04-16
        parameter_groups:
          - label: net
            parameters: [a, b]
        parameters:
          a: {type: string, default: x}
        """, {}, "StackValidationFailed",
        "The grouped parameter b does not reference a valid parameter."),
    ("P12", """
        heat_template_version: 2021-04-16
        parameter_groups:
          - {label: g1, parameters: [a]}
          - {label: g2, parameters: [a]}
        parameters:
          a: {type: string, default: x}
        """, {}, "StackValidationFailed",
        "The a parameter must be assigned to one parameter group only."),
    ("P13", """
        heat_template_version: 2021-04-16
        parameters:
          l:
            type: comma_delimited_list
            default: "a,d"
            constraints: [{allowed_values: [a, b, c]}]
        """, {}, "InvalidSchemaError", "is not an allowed value"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "text", "user", "kind", "fragment"), P_CASES)
def test_p_cases(case: str, text: str, user: dict[str, Any], kind: str, fragment: str) -> None:
    _, errors = validate(text, user=user)
    assert len(errors) == 1, (case, errors)
    assert errors[0].kind == kind
    assert fragment in errors[0].full_message
