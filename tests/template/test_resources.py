"""Resource entries: every structural rule of reference 4.2 (and 1.6 for CFN keys), checked
directly with check_resource_entry and end to end through build_stack."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed
from kiln.core.paths import render_path
from kiln.template.inputs import build_stack
from kiln.template.resources import (
    ResourceDefinition,
    canonical_deletion_policy,
    check_resource_entry,
)
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY, TemplateVersion, get_version
from kiln.testing.heat_types import HEAT_TEST_TYPES

LATEST = get_version("2021-04-16")
OLD = get_version("2016-04-08")
AWS = get_version("2010-09-09", AWS_KEY)
HEAT_CFN = get_version("2012-12-12", HEAT_CFN_KEY)


def problems(
    body: Any, name: Any = "a", version: TemplateVersion = LATEST
) -> list[tuple[str, str]]:
    """(rendered path, message) of every structural error of one entry."""
    key = "Resources" if version.is_cfn else "resources"
    entry, errors = check_resource_entry(name, body, version, key)
    assert all(isinstance(e, StackValidationFailed) for e in errors)
    assert (entry is None) == bool(errors)
    return [(render_path(e.path), e.message) for e in errors]


# -- valid entries -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "version"),
    [
        ({"type": "OS::Heat::None"}, LATEST),
        (
            {
                "type": "T",
                "properties": {"a": 1},
                "metadata": {"m": 1},
                "depends_on": ["x", "y"],
                "update_policy": {},
                "deletion_policy": "Retain",
                "description": "text",
                "external_id": "abc",
                "condition": "c",
            },
            LATEST,
        ),
        ({"type": "T", "depends_on": "x"}, LATEST),
        ({"type": "T", "depends_on": []}, LATEST),
        ({"type": "T", "depends_on": None}, LATEST),
        ({"type": "T", "condition": True}, LATEST),
        ({"type": "T", "condition": {"not": "c"}}, LATEST),  # inline expression
        ({"type": {"get_param": "t"}}, LATEST),  # type may be computed
        ({"type": "T", "properties": {"get_param": "p"}}, LATEST),
        ({"type": "T", "description": None}, LATEST),
        (
            {
                "Type": "T",
                "Properties": {},
                "Metadata": {},
                "DependsOn": "x",
                "DeletionPolicy": "Retain",
                "UpdatePolicy": {},
                "Description": "d",
                "Condition": "c",
            },
            AWS,
        ),
        ({"Type": "T", "DependsOn": ["x"]}, HEAT_CFN),
    ],
)
def test_valid_entries(body: dict[str, Any], version: TemplateVersion) -> None:
    assert problems(body, version=version) == []


def test_entry_fields_under_canonical_names() -> None:
    body = {"Type": "T", "Properties": {"p": 1}, "DependsOn": "x", "Condition": "c"}
    entry, errors = check_resource_entry("a", body, AWS, "Resources")
    assert errors == [] and entry is not None
    assert entry.name == "a"
    assert entry.path == ("Resources", "a")
    assert entry.fields == {
        "type": "T",
        "properties": {"p": 1},
        "depends_on": "x",
        "condition": "c",
    }
    assert entry.keys["depends_on"] == "DependsOn"
    # paths keep the template's own spelling, so errors point at the real key
    assert entry.field_path("properties") == ("Resources", "a", "Properties")
    assert entry.field_path("metadata") == ("Resources", "a", "metadata")


@pytest.mark.parametrize(
    ("depends_on", "names"),
    [(None, []), ("x", ["x"]), (["x", "y", "x"], ["x", "y", "x"]), ([], [])],
)
def test_entry_depends_on_is_always_a_list(depends_on: Any, names: list[str]) -> None:
    body: dict[str, Any] = {"type": "T"}
    if depends_on is not None:
        body["depends_on"] = depends_on
    entry, _ = check_resource_entry("a", body, LATEST, "resources")
    assert entry is not None and entry.depends_on == names


# -- structural errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # missing or empty body, missing type
        (None, [("resources.a", "Each resource must contain a type key.")]),
        ({}, [("resources.a", "Each resource must contain a type key.")]),
        ({"properties": {}}, [("resources.a", "Each resource must contain a type key.")]),
        # empty type: Heat's other capitalisation
        ({"type": ""}, [("resources.a.type", "Each Resource must contain a Type key.")]),
        # a body that is not a map
        (
            ["OS::Heat::None"],
            [
                (
                    "resources.a",
                    '"resources" must contain a map of resource maps. Found a [list] instead',
                )
            ],
        ),
        (
            "OS::Heat::None",
            [
                (
                    "resources.a",
                    '"resources" must contain a map of resource maps. Found a [str] instead',
                )
            ],
        ),
        # unknown keys, including CFN spellings (R04)
        (
            {"type": "T", "Properties": {}},
            [
                (
                    "resources.a.Properties",
                    '"Properties" is not a valid keyword inside a resource definition',
                )
            ],
        ),
        (
            {"type": "T", "DependsOn": "b", "colour": 1},
            [
                (
                    "resources.a.DependsOn",
                    '"DependsOn" is not a valid keyword inside a resource definition',
                ),
                (
                    "resources.a.colour",
                    '"colour" is not a valid keyword inside a resource definition',
                ),
            ],
        ),
        # field types
        (
            {"type": "T", "depends_on": {"get_resource": "b"}},
            [("resources.a.depends_on", "Resource a depends_on type must be list or string")],
        ),
        (
            {"type": "T", "depends_on": 5},
            [("resources.a.depends_on", "Resource a depends_on type must be list or string")],
        ),
        (
            {"type": "T", "depends_on": ["b", 1]},
            [("resources.a.depends_on", "Resource a depends_on must be a list of strings")],
        ),
        (
            {"type": "T", "depends_on": [["b"]]},
            [("resources.a.depends_on", "Resource a depends_on must be a list of strings")],
        ),
        (
            {"type": "T", "description": 5},
            [("resources.a.description", "Resource a description type must be string")],
        ),
        (
            {"type": "T", "condition": 5},
            [("resources.a.condition", "Resource a condition type must be string_or_boolean")],
        ),
        (
            {"type": "T", "condition": 1.5},
            [("resources.a.condition", "Resource a condition type must be string_or_boolean")],
        ),
        # every problem of one entry is reported, not only the first
        (
            {"Type": "T", "depends_on": 5},
            [
                ("resources.a.Type", '"Type" is not a valid keyword inside a resource definition'),
                ("resources.a", "Each resource must contain a type key."),
                ("resources.a.depends_on", "Resource a depends_on type must be list or string"),
            ],
        ),
    ],
)
def test_structural_errors(body: Any, expected: list[tuple[str, str]]) -> None:
    assert problems(body) == expected


@pytest.mark.parametrize("key", ["condition", "external_id"])
def test_keys_of_2016_10_14_are_unknown_before_it(key: str) -> None:
    # Quirk 21, Rec: the same message as any other unknown key.
    assert problems({"type": "T", key: "x"}, version=OLD) == [
        (f"resources.a.{key}", f'"{key}" is not a valid keyword inside a resource definition')
    ]
    assert problems({"type": "T", key: "x"}, version=get_version("2016-10-14")) == []


@pytest.mark.parametrize("name", ["a/b", "/", "net/"])
def test_slash_in_name(name: str) -> None:
    assert problems({"type": "T"}, name=name) == [
        (f"resources.{name}", 'Resource name may not contain "/"')
    ]


def test_slash_in_name_and_bad_body_are_both_reported() -> None:
    assert problems(None, name="a/b") == [
        ("resources.a/b", 'Resource name may not contain "/"'),
        ("resources.a/b", "Each resource must contain a type key."),
    ]


def test_non_string_name() -> None:
    _, errors = check_resource_entry(1, {"type": "T"}, LATEST, "resources")
    assert [e.message for e in errors] == ["Resource name 1 must be a string"]


# -- CFN -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [AWS, HEAT_CFN], ids=["aws", "heat-cfn"])
def test_cfn_ignores_unknown_keys(version: TemplateVersion) -> None:
    # Quirk 1, kept: HOT spellings and made-up keys are silently dropped in CFN.
    entry, errors = check_resource_entry(
        "a", {"Type": "T", "properties": {"x": 1}, "Colour": "red"}, version, "Resources"
    )
    assert errors == [] and entry is not None
    assert entry.fields == {"type": "T"}


def test_condition_is_an_unknown_and_ignored_key_in_heat_cfn() -> None:
    entry, errors = check_resource_entry(
        "a", {"Type": "T", "Condition": "c"}, HEAT_CFN, "Resources"
    )
    assert errors == [] and entry is not None
    assert "condition" not in entry.fields


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"Properties": {}}, [("Resources.a", "Each resource must contain a type key.")]),
        ({"type": "T"}, [("Resources.a", "Each resource must contain a type key.")]),
        ({"Type": ""}, [("Resources.a.Type", "Each Resource must contain a Type key.")]),
        (
            {"Type": "T", "DependsOn": {"x": 1}},
            [("Resources.a.DependsOn", "Resource a depends_on type must be list or string")],
        ),
        (
            {"Type": "T", "DependsOn": [1]},
            [("Resources.a.DependsOn", "Resource a depends_on must be a list of strings")],
        ),
    ],
)
def test_cfn_structural_errors(body: Any, expected: list[tuple[str, str]]) -> None:
    assert problems(body, version=AWS) == expected


# -- end to end: rules that need parsing -----------------------------------------------------------


def stack_problems(text: str, **kwargs: Any) -> list[tuple[str, str]]:
    stack = build_stack(text, types=HEAT_TEST_TYPES, **kwargs)
    return [(render_path(e.path), e.message) for e in stack.errors]


HOT = "heat_template_version: 2021-04-16\n"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("resources: [a, b]\n", "Found a [list] instead"),  # quirk 21, Rec: no crash
        ("resources: text\n", "Found a [str] instead"),
        ("resources: 5\n", "Found a [int] instead"),
    ],
)
def test_resources_section_not_a_map(section: str, message: str) -> None:
    assert stack_problems(HOT + section) == [
        ("resources", f'"resources" must contain a map of resource maps. {message}')
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{type: 5}", ("resources.a.type", "Resource a type type must be string")),
        ("{type: [x]}", ("resources.a.type", "Resource a type type must be string")),
        (
            "{type: {get_param: n}}",
            ("resources.a.type", "Resource a type type must be string"),
        ),
        (
            "{type: OS::Heat::None, properties: [1]}",
            ("resources.a.properties", "Resource a properties type must be object"),
        ),
        (
            "{type: OS::Heat::None, properties: {get_param: l}}",
            ("resources.a.properties", "Resource a properties type must be object"),
        ),
        (
            "{type: OS::Heat::None, external_id: 5}",
            ("resources.a.external_id", "Resource a external_id type must be string"),
        ),
    ],
)
def test_field_types_after_parsing(body: str, expected: tuple[str, str]) -> None:
    params = "parameters:\n  n: {type: number, default: 5}\n  l: {type: json, default: [1]}\n"
    assert stack_problems(HOT + params + f"resources:\n  a: {body}\n") == [expected]


def test_type_computed_by_get_param() -> None:
    stack = build_stack(
        HOT
        + "parameters:\n  t: {type: string, default: OS::Heat::None}\n"
        + "resources:\n  a: {type: {get_param: t}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert stack.errors == []
    assert stack.resources["a"].type == "OS::Heat::None"
    assert stack.typed["a"].implementation == "NoneResource"


@pytest.mark.parametrize("field", ["metadata", "update_policy"])
@pytest.mark.parametrize("value", ["[1]", "text", "5"])
def test_metadata_and_update_policy_must_be_objects(field: str, value: str) -> None:
    assert stack_problems(
        HOT + f"resources:\n  a: {{type: OS::Heat::None, {field}: {value}}}\n"
    ) == [(f"resources.a.{field}", f"Resource a {field} type must be object")]


@pytest.mark.parametrize("value", ["[c]", "{a: 1}"])
def test_condition_list_or_plain_map_is_a_type_error(value: str) -> None:
    text = (
        HOT
        + f"conditions:\n  c: true\nresources:\n  a: {{type: OS::Heat::None, condition: {value}}}\n"
    )
    assert stack_problems(text) == [
        ("resources.a.condition", "Resource a condition type must be string_or_boolean")
    ]


def test_null_condition_means_enabled() -> None:
    stack = build_stack(HOT + "resources:\n  a: {type: OS::Heat::None, condition: null}\n")
    assert stack.errors == []
    assert list(stack.resources) == ["a"]


def test_bad_entries_do_not_cascade_into_reference_errors() -> None:
    # A structurally broken resource is still a name others may refer to.
    text = HOT + "resources:\n  a: {Type: x}\n  b: {type: OS::Heat::None, depends_on: a}\n"
    assert stack_problems(text) == [
        ("resources.a.Type", '"Type" is not a valid keyword inside a resource definition'),
        ("resources.a", "Each resource must contain a type key."),
    ]


def test_depends_on_string_list_and_duplicates() -> None:
    stack = build_stack(
        HOT
        + "resources:\n"
        + "  a: {type: OS::Heat::None}\n"
        + "  b: {type: OS::Heat::None, depends_on: a}\n"
        + "  c: {type: OS::Heat::None, depends_on: [a, b, a]}\n"
    )
    assert stack.errors == []
    assert stack.resources["b"].requires == {"a"}
    assert stack.resources["c"].requires == {"a", "b"}
    assert stack.creation_order() == ["a", "b", "c"]


def test_cfn_depends_on_and_ignored_keys_end_to_end() -> None:
    stack = build_stack(
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        "Resources:\n"
        "  A: {Type: OS::Heat::None, Colour: red}\n"
        "  B: {Type: OS::Heat::None, DependsOn: A, depends_on: ignored}\n"
    )
    assert stack.errors == []
    assert stack.resources["B"].depends_on == ("A",)
    assert stack.resources["B"].path == ("Resources", "B")


def test_structural_errors_carry_locations() -> None:
    stack = build_stack(HOT + "resources:\n  a:\n    type: OS::Heat::None\n    Properties: {}\n")
    [err] = stack.errors
    assert err.location is not None
    assert (err.location.line, err.location.column) == (5, 5)


# -- definitions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("Delete", "Delete"),
        ("retain", "Retain"),
        ("snapshot", "Snapshot"),
        ("Retain", "Retain"),
    ],
)
def test_canonical_deletion_policy(value: str, canonical: str) -> None:
    assert canonical_deletion_policy(value) == canonical


@pytest.mark.parametrize(
    ("definition", "snippet"),
    [
        (ResourceDefinition(name="a", type="T"), {"type": "T"}),
        (
            ResourceDefinition(
                name="a",
                type="T",
                properties={"p": 1},
                metadata={"m": 2},
                depends_on=("b", "c"),
                deletion_policy="Retain",
                update_policy={"u": 3},
                description="not part of the snippet",
                external_id="abc",
            ),
            {
                "type": "T",
                "properties": {"p": 1},
                "metadata": {"m": 2},
                "depends_on": ["b", "c"],
                "deletion_policy": "Retain",
                "update_policy": {"u": 3},
                "external_id": "abc",
            },
        ),
    ],
)
def test_snippet(definition: ResourceDefinition, snippet: dict[str, Any]) -> None:
    assert definition.snippet() == snippet


def test_errors_next_to_a_resource_reference_are_found_at_validation() -> None:
    text = (
        HOT
        + "resources:\n"
        + "  a: {type: OS::Heat::Value, properties: {value: 1}}\n"
        + "  b:\n"
        + "    type: OS::Heat::Value\n"
        + "    properties:\n"
        + "      value: [{get_attr: [a, value]}, {str_split: [',', 'a,b', 5]}]\n"
    )
    assert stack_problems(text) == [
        (
            "resources.b.properties.value",
            'Incorrect index to "str_split" should be between 0 and 1',
        )
    ]
