"""The template a stack snapshot is restored with (Heat's ``handle_restore``).

A snapshot keeps the stack's template, environment and files, and for each resource
what its ``handle_snapshot`` stored (a volume's backup id, a server's image id).
Restoring converges the stack back to that template, each resource's properties as
its plugin restores them (``Resource.properties_from_snapshot``): a volume from its
backup, a server from its image, the others from their properties (reference
resource-types.md 0.3). Properties are rewritten in the template itself, functions
left as they are. Nested stacks are restored from their template only (Heat restores
their snapshots too; not built).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kiln.plugin.registry import PluginRegistry
from kiln.plugin.resource import Resource
from kiln.schema.custom import CustomConstraints
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition, StackIdentity
from kiln.template.stack_resources import BuiltinResource


def restored_template(
    snapshot: Mapping[str, Any],
    registry: PluginRegistry,
    custom: CustomConstraints,
    identity: StackIdentity,
) -> dict[str, Any]:
    """The snapshot's template with each resource's restored properties."""
    template: dict[str, Any] = copy.deepcopy(dict(snapshot["template"]))
    kept: Mapping[str, Any] = snapshot.get("resources") or {}
    if not kept:
        return template
    definition = build_stack(
        copy.deepcopy(template),
        environment=snapshot.get("environment"),
        files=snapshot.get("files"),
        identity=identity,
        types=registry,
        custom=custom,
        check_values=False,
    )
    for name, resource in definition.resources.items():
        plugin_cls = _plugin(definition, registry, name)
        if name not in kept or plugin_cls is None or len(resource.path) < 2:
            continue
        section, key = resource.path[0], resource.path[1]
        entry = template.get(str(section), {}).get(key)
        if not isinstance(entry, dict):
            continue
        field = "Properties" if section == "Resources" else "properties"
        properties = entry.get(field) or {}
        if not isinstance(properties, Mapping):
            continue  # a function makes the whole map: nothing to rewrite
        restored = plugin_cls.properties_from_snapshot(properties, kept[name])
        if restored != properties:
            entry[field] = restored
    return template


def _plugin(
    definition: StackDefinition, registry: PluginRegistry, name: str
) -> type[Resource] | None:
    """The plugin of a resource (after the environment's mappings); None for templates."""
    typed = definition.typed.get(name)
    if isinstance(typed, BuiltinResource):
        return registry.plugin(typed.type.name)
    return None
