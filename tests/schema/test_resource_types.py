"""The seam to resource types: SchemaType (declarative properties and attributes), the
UncheckedTypes stand-in and a fixed TypeCatalogue."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.paths import render_path
from kiln.schema.constraints import Range
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import AttributeSchema, PropertySchema
from kiln.schema.resource_types import SchemaType, TypeCatalogue, UncheckedType, UncheckedTypes
from kiln.template.inputs import build_stack
from kiln.testing.heat_types import HEAT_TEST_TYPES

CUSTOM = CustomConstraints.offline()

SERVER = SchemaType(
    name="Test::Server",
    implementation="Server",
    properties={
        "name": PropertySchema("String", required=True),
        "size": PropertySchema("Integer", default=1, constraints=(Range(min=1, max=8),)),
        "tags": PropertySchema("List", schema=PropertySchema("String")),
        "net": PropertySchema("Map", schema={"port": PropertySchema("Integer", required=True)}),
    },
    attributes={"address": AttributeSchema("The address.")},
)
ANYTHING = SchemaType(name="Test::Anything", implementation="Anything")


def problems(
    values: dict[str, Any], unknown: tuple[str, ...] = (), type_: SchemaType = SERVER
) -> list[tuple[str, str]]:
    errors = type_.validate_properties(values, unknown, CUSTOM)
    return [(render_path(e.path), e.message) for e in errors]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"name": "web"}, []),
        ({"name": "web", "size": 8, "tags": ["a"], "net": {"port": 80}}, []),
        ({}, [("", "Property name not assigned")]),
        ({"name": None}, [("", "Property name not assigned")]),  # null is not given
        ({"name": "web", "colour": "red"}, [("", "Unknown Property colour")]),
        ({"name": "web", "size": 9}, [("size", "9 is out of range (min: 1, max: 8)")]),
        ({"name": "web", "net": {}}, [("net", "Property port not assigned")]),
        (
            {"size": 0, "colour": 1},
            [
                ("", "Unknown Property colour"),
                ("", "Property name not assigned"),
                ("size", "0 is out of range (min: 1, max: 8)"),
            ],
        ),
    ],
)
def test_validate_properties(values: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert problems(values) == expected


@pytest.mark.parametrize(
    ("values", "unknown", "expected"),
    [
        # an unknown (not yet computable) value counts as given ...
        ({}, ("name",), []),
        ({"size": 2}, ("name",), []),
        # ... and is not checked
        ({"name": 5, "size": 100}, ("name", "size"), []),
        ({"name": "web", "net": "not a map"}, ("net",), []),
        # the known ones still are
        ({"size": 100}, ("name",), [("size", "100 is out of range (min: 1, max: 8)")]),
        ({}, ("size",), [("", "Property name not assigned")]),
    ],
)
def test_unknown_values_count_as_given(
    values: dict[str, Any], unknown: tuple[str, ...], expected: list[tuple[str, str]]
) -> None:
    assert problems(values, unknown) == expected


def test_an_undeclared_property_with_an_unknown_value_is_still_unknown() -> None:
    assert problems({"name": "web"}, ("colour",)) == [("", "Unknown Property colour")]
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  a: {type: OS::Heat::None}\n"
        "  v: {type: OS::Heat::Value, properties: {value: 1, colour: {get_resource: a}}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert [e.message for e in stack.errors] == ["Unknown Property colour"]


def test_errors_carry_the_property_error_category() -> None:
    errors = SERVER.validate_properties({"colour": 1, "name": "x"}, (), CUSTOM)
    assert [e.category for e in errors] == ["Property error"]


@pytest.mark.parametrize("values", [{}, {"anything": [1, {"x": None}]}, {"a": 1, "b": 2}])
def test_a_type_without_property_schemas_accepts_anything(values: dict[str, Any]) -> None:
    assert problems(values, type_=ANYTHING) == []


@pytest.mark.parametrize(
    ("type_", "attribute", "known"),
    [
        (SERVER, "address", True),
        (SERVER, "show", True),  # every type has "show"
        (SERVER, "nosuch", False),
        (SERVER, "Address", False),
        (ANYTHING, "whatever", True),  # attributes computed dynamically
        (ANYTHING, "show", True),
    ],
)
def test_has_attribute(type_: SchemaType, attribute: str, known: bool) -> None:
    assert type_.has_attribute(attribute) is known


def test_schema_type_exposes_its_schemas() -> None:
    assert SERVER.property_schemas is SERVER.properties
    assert SERVER.attribute_schemas is SERVER.attributes
    assert ANYTHING.property_schemas is None
    assert ANYTHING.attribute_schemas is None
    assert SERVER.supports_snapshot is False


# -- the stand-ins -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["OS::Nova::Server", "My::Anything", ""])
def test_unchecked_types_accept_every_type(name: str) -> None:
    types = UncheckedTypes()
    assert types.checked is False
    found = types.get(name)
    assert found == UncheckedType(name)
    assert found is not None
    assert (found.name, found.implementation) == (name, "Unchecked")
    assert found.validate_properties({"x": object()}, ("y",), CUSTOM) == []
    assert found.has_attribute("anything") and found.has_attribute("show")
    assert found.supports_snapshot is True
    assert found.property_schemas is None and found.attribute_schemas is None


def test_type_catalogue() -> None:
    catalogue = TypeCatalogue({SERVER.name: SERVER})
    assert catalogue.checked is True
    assert catalogue.get("Test::Server") is SERVER
    assert catalogue.get("Test::server") is None
    assert catalogue.get("OS::Heat::None") is None
    assert TypeCatalogue().get("Test::Server") is None


def test_unchecked_types_are_the_default_of_a_stack() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  a: {type: Made::Up, properties: {anything: 1}}\n"
        "outputs:\n  o: {value: {get_attr: [a, whatever]}}\n"
    )
    assert stack.errors == []
    assert stack.typed["a"].implementation == "Unchecked"


def test_a_checked_catalogue_rejects_unknown_types() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  a: {type: Made::Up}\n",
        types=TypeCatalogue({SERVER.name: SERVER}),
    )
    assert [e.message for e in stack.errors] == ["The Resource Type (Made::Up) could not be found."]


def test_schema_type_in_a_stack() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  s: {type: Test::Server, properties: {size: 0, colour: red}}\n"
        "outputs:\n  o: {value: {get_attr: [s, nosuch]}}\n",
        types=TypeCatalogue({SERVER.name: SERVER}),
    )
    assert sorted(e.full_message for e in stack.errors) == [
        "Property error: resources.s.properties.size: 0 is out of range (min: 1, max: 8)",
        "Property error: resources.s.properties: Property name not assigned",
        "Property error: resources.s.properties: Unknown Property colour",
        "outputs.o.value.get_attr: The Referenced Attribute (s nosuch) is incorrect.",
    ]
