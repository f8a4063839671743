"""OS::Heat::CloudConfig: a cloud-init ``#cloud-config`` document as a software config.

The ``cloud_config`` map is dumped as YAML after the ``#cloud-config`` line and
stored as an ungrouped software config (usable as a server's ``user_data``).
Any change replaces it. Imports: kiln.plugin, kiln.schema, PyYAML and the
SoftwareConfig plugin it extends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from kiln.plugin import resource_type
from kiln.resources.heat.software_config import UNGROUPED, SoftwareConfig
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType


def cloud_config_text(cloud_config: Mapping[str, Any] | None) -> str:
    """``#cloud-config`` then the map as block YAML (an unset map dumps as ``{}``)."""
    body = yaml.safe_dump(dict(cloud_config or {}), default_flow_style=False)
    return f"#cloud-config\n{body}"


@resource_type("OS::Heat::CloudConfig")
class CloudConfig(SoftwareConfig):
    """A cloud-init cloud-config document, stored as a software config."""

    properties_schema = {
        "cloud_config": PropertySchema(
            PropertyType.MAP, "Map to render as a cloud-config YAML document."
        ),
    }
    attributes_schema = {
        "config": AttributeSchema("The cloud-config document.", type=PropertyType.STRING),
    }

    def config_fields(self) -> dict[str, Any]:
        return {
            "group": UNGROUPED,
            "config": cloud_config_text(self.properties["cloud_config"]),
            "options": {},
            "inputs": [],
            "outputs": [],
        }
