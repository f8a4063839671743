"""OS::Heat::StructuredConfig: a software config whose ``config`` is a map.

Like OS::Heat::SoftwareConfig (same store, same replacement on any change),
but the config is a structured document for tools that take one; attribute
``config`` gives the map back. Imports: kiln.plugin, kiln.schema and the
SoftwareConfig plugin it extends.
"""

from __future__ import annotations

from typing import Any

from kiln.plugin import resource_type
from kiln.resources.heat.software_config import (
    GROUP,
    INPUTS,
    OPTIONS,
    OUTPUTS,
    SoftwareConfig,
)
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType


@resource_type("OS::Heat::StructuredConfig")
class StructuredConfig(SoftwareConfig):
    """A software config holding a map, e.g. for configuration-management tools."""

    properties_schema = {
        "group": GROUP,
        "options": OPTIONS,
        "inputs": INPUTS,
        "outputs": OUTPUTS,
        "config": PropertySchema(PropertyType.MAP, "The configuration document."),
    }
    attributes_schema = {
        "config": AttributeSchema("The stored configuration map.", type=PropertyType.MAP),
    }
    empty_config = {}

    def config_fields(self) -> dict[str, Any]:
        fields = super().config_fields()
        fields["config"] = self.properties["config"] or {}
        return fields
