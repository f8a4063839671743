"""OS::Heat::ResourceChain: one member of each listed type, in a child stack.

Not in the reference; Heat's documented semantics: ``resources`` lists type names
(registry aliases and template types resolve in the child, which inherits the
parent's environment and files); member ``i`` is named ``"i"``, gets
``resource_properties`` as its properties and depends on member ``i-1`` unless
``concurrent``. Every property updates in place: a child update (a changed
``concurrent`` only changes the child's dependencies). Attributes as ResourceGroup's:
``refs``, ``refs_map``, ``attributes``, ``resource.<n>[.<attr>]`` and any other name
as the list over the members (kiln.resources.heat._child_stack).
Imports: kiln.plugin, kiln.schema, kiln.core.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.resources.heat._child_stack import MemberStackResource
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType


def chain_members(
    types: list[str], properties: Mapping[str, Any] | None, concurrent: bool
) -> dict[str, dict[str, Any]]:
    """Member name -> definition: ``type``, the shared properties, and the chain link."""
    members: dict[str, dict[str, Any]] = {}
    for index, type_name in enumerate(types):
        definition: dict[str, Any] = {"type": type_name}
        if properties:
            definition["properties"] = copy.deepcopy(dict(properties))
        if index and not concurrent:
            definition["depends_on"] = [str(index - 1)]
        members[str(index)] = definition
    return members


@resource_type("OS::Heat::ResourceChain")
class ResourceChain(MemberStackResource):
    """Members of the listed types, each after the previous one unless concurrent."""

    properties_schema = {
        "resources": PropertySchema(
            PropertyType.LIST,
            "The types of the members, in order (type names or registry aliases).",
            required=True,
            update_allowed=True,
            schema=PropertySchema(PropertyType.STRING, "A resource type."),
        ),
        "concurrent": PropertySchema(
            PropertyType.BOOLEAN,
            "Create the members at once instead of each after the previous one.",
            default=False,
            update_allowed=True,
        ),
        "resource_properties": PropertySchema(
            PropertyType.MAP,
            "The properties given to every member.",
            default={},
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "refs": AttributeSchema(
            "The reference ids of the members, in chain order.", type=PropertyType.LIST
        ),
        "refs_map": AttributeSchema("Member name -> reference id.", type=PropertyType.MAP),
        "attributes": AttributeSchema(
            "Member name -> value of an attribute (get_attr: [chain, attributes, NAME]).",
            type=PropertyType.MAP,
        ),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        return [
            StackValidationFailed("A resource type must not be empty", path=("resources", i))
            for i, type_name in enumerate(properties["resources"])
            if not type_name
        ]

    def members(self, properties: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return chain_members(
            list(properties["resources"]),
            properties.get("resource_properties"),
            bool(properties["concurrent"]),
        )
