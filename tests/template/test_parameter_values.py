"""Parameter values: sources, checks, validate-API output and immutability (3.2-3.5)."""

from __future__ import annotations

from typing import Any

import pytest

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
from kiln.template.parameter_types import ParameterSchema
from kiln.template.parameter_values import (
    check_immutable,
    resolve_parameter_values,
    validate_document_parameters,
)
from kiln.template.parameters import parse_parameter_schemas
from kiln.template.versions import AWS_KEY, get_version


def described(errors: list[KilnError]) -> list[tuple[str, str, str]]:
    return [(e.kind, render_path(e.path), e.message) for e in errors]


def schemas_of(*items: ParameterSchema) -> dict[str, ParameterSchema]:
    return {s.name: s for s in items}


def test_priority_user_then_environment_then_template() -> None:
    schemas = schemas_of(
        ParameterSchema("a", "string", default="tmpl"),
        ParameterSchema("b", "string", default="tmpl"),
        ParameterSchema("c", "string", default="tmpl"),
        ParameterSchema("d", "string", default="tmpl"),
    )
    values, errors = resolve_parameter_values(
        schemas,
        {"c": "user", "d": None},
        {"b": "pd", "c": "pd", "d": None, "zzz": "ignored"},
        check_values=True,
    )
    assert errors == []
    assert values == {"a": "tmpl", "b": "pd", "c": "user", "d": "tmpl"}


def test_missing_values() -> None:
    schemas = schemas_of(ParameterSchema("a", "string"), ParameterSchema("b", "number"))
    values, errors = resolve_parameter_values(schemas, {"b": "3"}, {}, check_values=True)
    assert values == {"b": 3}
    assert described(errors) == [
        ("UserParameterMissing", "parameters.a", "The Parameter (a) was not provided.")
    ]
    # the template-validate API tolerates them
    values, errors = resolve_parameter_values(schemas, {}, {}, check_values=False)
    assert (values, errors) == ({}, [])


def test_unknown_user_parameters_and_pseudo_names() -> None:
    schemas = schemas_of(ParameterSchema("a", "string", default="x"))
    _, errors = resolve_parameter_values(
        schemas, {"b": 1, "OS::stack_name": "s"}, {"c": 2}, check_values=False
    )
    assert described(errors) == [
        ("UnknownUserParameter", "parameters.b", "The Parameter (b) was not defined in template."),
        (
            "UnknownUserParameter",
            "parameters.OS::stack_name",
            "The Parameter (OS::stack_name) was not defined in template.",
        ),
    ]


def test_conversion_errors_are_reported_even_without_value_checks() -> None:
    schemas = schemas_of(
        ParameterSchema("b", "boolean", default="maybe"),
        ParameterSchema("n", "number"),
    )
    values, errors = resolve_parameter_values(schemas, {"n": "x"}, {}, check_values=False)
    assert values == {}
    assert [(k, p) for k, p, _ in described(errors)] == [
        ("StackValidationFailed", "parameters.b.default"),
        ("StackValidationFailed", "parameters.n"),
    ]
    assert errors[1].message == ("Parameter 'n' is invalid: could not convert string to float: 'x'")


LIST_OF_IPS = ParameterSchema(
    "ips", "comma_delimited_list", constraints=(Length(max=2), CustomConstraint("ip_addr"))
)


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (ParameterSchema("n", "number", constraints=(Range(min=1, max=10),)), "11",
         "11 is out of range (min: 1, max: 10)"),
        (ParameterSchema("n", "number", constraints=(Modulo(step=2, offset=0),)), 3,
         "3 is not a multiple of 2 with an offset of 0"),
        (ParameterSchema("s", "string", constraints=(AllowedPattern("[a-z]+"),)), "ABC",
         '"ABC" does not match pattern "[a-z]+"'),
        (ParameterSchema("s", "string", constraints=(Length(min=8, description="too short"),)),
         "abc", "too short"),
        (ParameterSchema("b", "boolean", constraints=(AllowedValues([True]),)), "no",
         "false is not an allowed value [true]"),
        (LIST_OF_IPS, "10.0.0.1,10.0.0.2,10.0.0.3",
         "length (3) is out of range (min: None, max: 2)"),
        (LIST_OF_IPS, "10.0.0.1,x", "Error validating value 'x': Invalid IP address"),
        (ParameterSchema("k", "string", constraints=(CustomConstraint("nova.keypair"),)), "k",
         '"k" does not validate nova.keypair (constraint not found)'),
    ],
)  # fmt: skip
def test_values_checked_against_constraints(
    schema: ParameterSchema, value: Any, message: str
) -> None:
    values, errors = resolve_parameter_values(
        {schema.name: schema},
        {schema.name: value},
        {},
        check_values=True,
        custom=CustomConstraints.builtin(),
    )
    name = schema.name
    assert described(errors) == [
        ("StackValidationFailed", f"parameters.{name}", f"Parameter '{name}' is invalid: {message}")
    ]
    assert schema.name in values  # the value is still there for evaluation


def test_environment_defaults_checked_like_user_values() -> None:
    schema = ParameterSchema("n", "number", constraints=(Range(max=5),))
    _, errors = resolve_parameter_values({"n": schema}, {}, {"n": 6}, check_values=True)
    assert [e.message for e in errors] == [
        "Parameter 'n' is invalid: 6 is out of range (min: None, max: 5)"
    ]


def test_template_defaults_only_rechecked_against_custom_constraints() -> None:
    # Their other constraints are checked (once) when the declaration is parsed.
    schema = ParameterSchema(
        "s", "string", default="x", constraints=(Length(min=5), CustomConstraint("ip_addr"))
    )
    _, errors = resolve_parameter_values(
        {"s": schema}, {}, {}, check_values=True, custom=CustomConstraints.builtin()
    )
    assert [e.message for e in errors] == [
        "Parameter 's' is invalid: Error validating value 'x': Invalid IP address"
    ]


def test_no_value_checks_without_check_values_or_registry() -> None:
    schema = ParameterSchema("s", "string", constraints=(CustomConstraint("ip_addr"),))
    for check, custom in ((False, CustomConstraints.builtin()), (True, None)):
        values, errors = resolve_parameter_values(
            {"s": schema}, {"s": "x"}, {}, check_values=check, custom=custom
        )
        assert (values, errors) == ({"s": "x"}, [])


# -- template-validate output ---------------------------------------------------------
def test_validate_document_parameters_hot() -> None:
    schemas, errors = parse_parameter_schemas(
        {
            "flavor": {
                "type": "string",
                "label": "Flavor",
                "description": "Nova flavor for the server",
                "default": "m1.small",
                "constraints": [{"custom_constraint": "nova.flavor"}],
            },
            "replicas": {
                "type": "number",
                "default": 2,
                "constraints": [
                    {"range": {"min": 1, "max": 10}, "description": "between one and ten"},
                    {"modulo": {"step": 1, "offset": 0}},
                ],
            },
            "db_password": {
                "type": "string",
                "hidden": True,
                "description": "Database password",
                "constraints": [{"length": {"min": 8}}, {"allowed_pattern": "[a-z0-9]*"}],
            },
            "zones": {
                "type": "comma_delimited_list",
                "tags": ["placement"],
                "constraints": [{"allowed_values": ["az1", "az2"], "description": "known"}],
            },
            "extra": {"type": "json"},
        },
        get_version("2021-04-16"),
    )
    assert errors == []
    result = validate_document_parameters(
        schemas, {"zones": "az1", "extra": None}, {"replicas": 3, "db_password": "x"}
    )
    assert result == {
        "flavor": {
            "Type": "String",
            "Description": "Nova flavor for the server",
            "Label": "Flavor",
            "NoEcho": "false",
            "Default": "m1.small",
            "CustomConstraint": "nova.flavor",
        },
        "replicas": {
            "Type": "Number",
            "Description": "",
            "Label": "replicas",
            "NoEcho": "false",
            "Default": 3,
            "MinValue": 1,
            "MaxValue": 10,
            "Step": 1,
            "Offset": 0,
            "ConstraintDescription": "between one and ten",
        },
        "db_password": {
            "Type": "String",
            "Description": "Database password",
            "Label": "db_password",
            "NoEcho": "true",
            "Default": "x",
            "MinLength": 8,
            "AllowedPattern": "[a-z0-9]*",
        },
        "zones": {
            "Type": "CommaDelimitedList",
            "Description": "",
            "Label": "zones",
            "NoEcho": "false",
            "Value": "az1",
            "Tags": ["placement"],
            "AllowedValues": ["az1", "az2"],
            "ConstraintDescription": "known",
        },
        "extra": {"Type": "Json", "Description": "", "Label": "extra", "NoEcho": "false"},
    }


def test_validate_document_parameters_cfn() -> None:
    schemas, _ = parse_parameter_schemas(
        {
            "Name": {
                "Type": "String",
                "MinLength": 2,
                "MaxLength": 5,
                "AllowedValues": ["ab", "abc"],
                "ConstraintDescription": "pick one",
                "NoEcho": "true",
            }
        },
        get_version("2010-09-09", AWS_KEY),
    )
    assert validate_document_parameters(schemas, {}, {}) == {
        "Name": {
            "Type": "String",
            "Description": "",
            "Label": "Name",
            "NoEcho": "true",
            "MinLength": 2,
            "MaxLength": 5,
            "AllowedValues": ["ab", "abc"],
            "ConstraintDescription": "pick one",
        }
    }


def test_validate_document_parameters_excludes_pseudo_parameters() -> None:
    schemas = schemas_of(ParameterSchema("OS::stack_name", "string"), ParameterSchema("a", "json"))
    assert list(validate_document_parameters(schemas, {}, {})) == ["a"]


# -- immutable parameters ---------------------------------------------------------------
def test_immutable_compares_typed_values() -> None:
    old = schemas_of(
        ParameterSchema("n", "number", immutable=True),
        ParameterSchema("l", "comma_delimited_list", immutable=True),
        ParameterSchema("s", "string", immutable=True),
        ParameterSchema("free", "string"),
    )
    old_values = {"n": 5, "l": ["a", "b"], "s": "x", "free": "y"}
    # the same values, spelled differently, are not modifications (quirk 18)
    assert check_immutable(old, old_values, old, {"n": "5", "l": "a,b", "s": "x"}) == []
    errors = check_immutable(old, old_values, old, {"n": "6", "l": "a", "s": "x", "free": "z"})
    assert described(errors) == [
        (
            "ImmutableParameterModified",
            "",
            "The following parameters are immutable and may not be updated: n, l",
        )
    ]


def test_immutable_flag_is_read_from_the_new_template() -> None:
    mutable = schemas_of(ParameterSchema("p", "string"))
    immutable = schemas_of(ParameterSchema("p", "string", immutable=True))
    assert check_immutable(immutable, {"p": "a"}, mutable, {"p": "b"}) == []
    assert len(check_immutable(mutable, {"p": "a"}, immutable, {"p": "b"})) == 1


def test_immutable_ignores_new_or_unsupplied_parameters() -> None:
    new = schemas_of(ParameterSchema("p", "string", immutable=True))
    assert check_immutable({}, {}, new, {"p": "b"}) == []
    assert check_immutable(new, {"p": "a"}, new, {}) == []
    assert check_immutable(new, {"p": "a"}, new, {"p": None}) == []
