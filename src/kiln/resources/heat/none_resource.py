"""OS::Heat::None: a placeholder that accepts anything and does nothing.

Typical use: ``resource_registry: {OS::Nova::Server: OS::Heat::None}`` to stub a
type out. Any properties are accepted unvalidated, any attribute is null, and a
changed definition never updates nor replaces it (``ignores_changes``). The file
is not ``none.py`` because ``none`` reads as Python's None.
Imports: kiln.plugin, kiln.resources.heat._common.
"""

from __future__ import annotations

from typing import Any

from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.heat._common import random_uuid


@resource_type("OS::Heat::None")
class NoneResource(Resource):
    """Stands in for any resource: no properties checked, no attributes, no effect."""

    accepts_any_properties = True
    dynamic_attributes = True
    ignores_changes = True

    def get_attribute(self, name: str) -> Any:
        return None

    def handle_create(self) -> Cookie:
        self.ctx.data_set("is_placeholder", True)
        self.ctx.set_physical_id(random_uuid(self.ctx.random))
        return None
