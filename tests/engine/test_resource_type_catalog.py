"""kiln.engine.resource_type_catalog: schemas and generated templates of plugin types."""

from __future__ import annotations

from kiln.engine.resource_type_catalog import generate_template, list_types, schema_document
from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry
from kiln.schema.constraints import (
    AllowedPattern,
    AllowedValues,
    CustomConstraint,
    Length,
    Modulo,
)
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, SupportStatus

T = PropertyType


@resource_type("Test::Widget")
class Widget(Resource):
    """A widget with every kind of property."""

    properties_schema = {
        "name": PropertySchema(
            T.STRING,
            "Its name.",
            required=True,
            constraints=(
                Length(1, 20, description="short"),
                AllowedPattern("[a-z]+", description="lower case"),
                CustomConstraint("nova.flavor"),
            ),
        ),
        "size": PropertySchema(
            T.INTEGER,
            "How big.",
            default=2,
            constraints=(AllowedValues((1, 2, 4)), Modulo(2, 0)),
            update_allowed=True,
        ),
        "tags": PropertySchema(T.LIST, "Labels.", schema=PropertySchema(T.STRING)),
        "rules": PropertySchema(T.LIST, "Rules.", schema={"port": PropertySchema(T.INTEGER)}),
        "extra": PropertySchema(T.MAP, "More."),
        "anything": PropertySchema(T.ANY, "Whatever."),
        "old": PropertySchema(T.STRING, "Gone.", support_status=SupportStatus("HIDDEN")),
    }
    attributes_schema = {
        "address": AttributeSchema("Where it is.", T.STRING),
        "legacy": AttributeSchema("Old.", support_status=SupportStatus("HIDDEN")),
    }


REGISTRY = PluginRegistry([Widget])


def test_schema_leaves_hidden_parts_out_and_adds_show():
    doc = schema_document(REGISTRY, "Test::Widget", with_description=True)
    assert "old" not in doc["properties"]
    assert set(doc["attributes"]) == {"address", "show"}
    assert doc["properties"]["tags"]["schema"] == {
        "*": {"type": "string", "required": False, "update_allowed": False, "immutable": False}
    }
    assert doc["properties"]["size"]["update_allowed"] is True
    assert doc["description"] == "A widget with every kind of property."


def test_cfn_parameters_spell_constraints_the_cfn_way():
    params = generate_template(REGISTRY, "Test::Widget", "cfn")["Parameters"]
    assert params["name"] == {
        "Type": "String",
        "Description": "Its name.",
        "MinLength": 1,
        "MaxLength": 20,
        "AllowedPattern": "[a-z]+",
        "ConstraintDescription": "short lower case",
    }
    assert params["size"] == {
        "Type": "Number",
        "Description": "How big.",
        "Default": 2,
        "AllowedValues": [1, 2, 4],
    }
    types = {name: p["Type"] for name, p in params.items()}
    assert types == {
        "name": "String",
        "size": "Number",
        "tags": "CommaDelimitedList",
        "rules": "Json",
        "extra": "Json",
        "anything": "Json",
    }


def test_hot_parameters_keep_constraints_but_modulo():
    tmpl = generate_template(REGISTRY, "Test::Widget", "hot")
    assert tmpl["parameters"]["size"]["constraints"] == [{"allowed_values": [1, 2, 4]}]
    assert tmpl["parameters"]["name"]["constraints"][2] == {"custom_constraint": "nova.flavor"}
    assert tmpl["parameters"]["tags"]["type"] == "comma_delimited_list"
    assert tmpl["outputs"]["address"] == {
        "description": "Where it is.",
        "value": {"get_attr": ["Widget", "address"]},
    }
    assert "legacy" not in tmpl["outputs"]


def test_list_gives_each_types_own_docstring():
    assert list_types(REGISTRY) == [("Test::Widget", "A widget with every kind of property.")]
