"""OS::Heat::Value: a value computed in the template, exposed as attribute ``value``.

``type`` (a parameter type name) types the value: it is checked and converted
as a string, number, list, map or boolean. Both properties update in place; the
update does nothing, the attribute simply reads the current definition. The
physical id is the physical name. Imports: kiln.plugin, kiln.schema, kiln.core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, raise_all
from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, coerce_value

# The ``type`` names, and the property type each one checks the value as.
VALUE_TYPES: Mapping[str, PropertySchema] = {
    "string": PropertySchema(PropertyType.STRING),
    "number": PropertySchema(PropertyType.NUMBER),
    "comma_delimited_list": PropertySchema(PropertyType.LIST),
    "json": PropertySchema(PropertyType.MAP),
    "boolean": PropertySchema(PropertyType.BOOLEAN),
}


def typed_value(properties: Mapping[str, Any]) -> tuple[Any, list[KilnError]]:
    """The ``value`` property converted to ``type`` (as it is when unset), with errors."""
    value, kind = properties.get("value"), properties.get("type")
    if value is None or kind is None:
        return value, []
    typed, errors = coerce_value(VALUE_TYPES[kind], value)
    return typed, [e.within("value") for e in errors]


@resource_type("OS::Heat::Value")
class Value(Resource):
    """Exposes a value (typed by ``type`` when given) as the attribute ``value``."""

    properties_schema = {
        "value": PropertySchema(
            PropertyType.ANY,
            "The value to expose as the attribute value.",
            required=True,
            update_allowed=True,
        ),
        "type": PropertySchema(
            PropertyType.STRING,
            "The type of the value: it is checked and converted like a parameter of this type.",
            update_allowed=True,
            constraints=(AllowedValues(tuple(VALUE_TYPES)),),
        ),
    }
    attributes_schema = {"value": AttributeSchema("The value, converted to type when given.")}

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        return typed_value(properties)[1]

    def get_attribute(self, name: str) -> Any:
        if name != "value":
            return super().get_attribute(name)
        typed, errors = typed_value(self.properties)
        raise_all(errors)
        return typed

    def handle_create(self) -> Cookie:
        raise_all(self.validate(self.properties))
        self.ctx.set_physical_id(self.ctx.physical_resource_name())
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        # Nothing to change: the attribute reads the definition the engine stores.
        raise_all(self.validate(new_properties))
        return None
