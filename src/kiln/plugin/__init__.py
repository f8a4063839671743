"""What a resource plugin author uses: the Resource base class, the context a
plugin acts through, the registry, and the pure update decision.

Imports: kiln.core, kiln.schema, kiln.template (for the type seam only).
"""

from kiln.plugin.context import ResourceContext
from kiln.plugin.decisions import UpdateDecision, decide_resource_update, decide_update
from kiln.plugin.registry import PluginRegistry, resource_type
from kiln.plugin.resource import Resource, ResourceFailure, UpdateReplace

__all__ = [
    "PluginRegistry",
    "Resource",
    "ResourceContext",
    "ResourceFailure",
    "UpdateDecision",
    "UpdateReplace",
    "decide_resource_update",
    "decide_update",
    "resource_type",
]
