"""OS::Nova::Flavor: a Nova flavor (admin only).

Create posts the flavor, then its extra specs, then, for a private flavor,
access for each project of ``tenants`` (or the stack's project when none).
``extra_specs`` and ``tenants`` update in place: every old spec is removed
before the new map is set; access is granted and revoked by difference (private
flavors only). Anything else replaces the flavor. ``tenants`` are passed on as
project ids. Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.nova._compute import compute, delete_ignoring_gone
from kiln.schema.constraints import CustomConstraint
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

T = PropertyType


def _specs(value: Mapping[str, Any] | None) -> dict[str, str]:
    """Extra specs as Nova stores them: string values."""
    return {str(k): v if isinstance(v, str) else str(v) for k, v in (value or {}).items()}


@resource_type("OS::Nova::Flavor")
class Flavor(Resource):
    """A flavor; ``get_resource`` gives its id."""

    properties_schema = {
        "tenants": PropertySchema(
            T.LIST,
            "Projects with access to the flavor when it is private.",
            default=[],
            update_allowed=True,
            schema=PropertySchema(
                T.STRING,
                "A project name or id.",
                constraints=(CustomConstraint(name="keystone.project"),),
            ),
        ),
        "flavorid": PropertySchema(T.STRING, "Id of the flavor (default: generated)."),
        "name": PropertySchema(T.STRING, "Name of the flavor."),
        "ram": PropertySchema(T.INTEGER, "Memory in MB.", required=True),
        "vcpus": PropertySchema(T.INTEGER, "Number of virtual CPUs.", required=True),
        "disk": PropertySchema(T.INTEGER, "Root disk size in GB.", default=0),
        "swap": PropertySchema(T.INTEGER, "Swap size in MB.", default=0),
        "ephemeral": PropertySchema(T.INTEGER, "Ephemeral disk size in GB.", default=0),
        "rxtx_factor": PropertySchema(T.NUMBER, "Network bandwidth factor.", default=1.0),
        "extra_specs": PropertySchema(
            T.MAP, "Extra specs of the flavor (key-value pairs).", update_allowed=True
        ),
        "is_public": PropertySchema(
            T.BOOLEAN, "Whether every project may use the flavor.", default=True
        ),
    }
    attributes_schema = {
        "is_public": AttributeSchema("Whether the flavor is public.", type=T.BOOLEAN),
        "extra_specs": AttributeSchema("Extra specs of the flavor.", type=T.MAP),
    }

    def _name(self) -> str:
        return self.properties.get("name") or self.ctx.physical_resource_name()

    def _tenants(self, tenants: list[str] | None) -> list[str]:
        return list(tenants or []) or [self.ctx.project_id]

    def find_existing(self) -> str | None:
        api = compute(self.ctx)
        flavor_id = self.properties.get("flavorid")
        try:
            if flavor_id:
                return api.get_flavor(flavor_id).id
            return api.find_flavor(self._name()).id
        except NotFound:
            return None

    def handle_create(self) -> Cookie:
        props = self.properties
        api = compute(self.ctx)
        body = {
            "name": self._name(),
            "ram": props["ram"],
            "vcpus": props["vcpus"],
            "disk": props["disk"],
            "id": props.get("flavorid") or "auto",
            "swap": props["swap"],
            "OS-FLV-EXT-DATA:ephemeral": props["ephemeral"],
            "rxtx_factor": props["rxtx_factor"],
            "os-flavor-access:is_public": props["is_public"],
        }
        created = api.create_flavor(body)
        self.ctx.set_physical_id(created.id)
        if props.get("extra_specs"):
            api.set_flavor_extra_specs(created.id, _specs(props["extra_specs"]))
        if not props["is_public"]:
            for project in self._tenants(props["tenants"]):
                api.add_flavor_access(created.id, project)
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        flavor_id = self.ctx.physical_id
        if not flavor_id:
            raise ResourceFailure(f"Flavor {self.ctx.name} was never created")
        api = compute(self.ctx)
        if "extra_specs" in changed:
            for key in api.get_flavor_extra_specs(flavor_id):
                api.delete_flavor_extra_spec(flavor_id, key)
            if new_properties.get("extra_specs"):
                api.set_flavor_extra_specs(flavor_id, _specs(new_properties["extra_specs"]))
        if "tenants" in changed and not new_properties["is_public"]:
            wanted = set(self._tenants(new_properties["tenants"]))
            current = set(api.get_flavor_access(flavor_id))
            for project in sorted(wanted - current):
                api.add_flavor_access(flavor_id, project)
            for project in sorted(current - wanted):
                api.remove_flavor_access(flavor_id, project)
        return None

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            api, flavor_id = compute(self.ctx), self.ctx.physical_id
            delete_ignoring_gone(lambda: api.delete_flavor(flavor_id))
        return None

    def get_attribute(self, name: str) -> Any:
        if name in ("is_public", "extra_specs") and not self.ctx.physical_id:
            return None
        if name == "is_public":
            return compute(self.ctx).get_flavor(str(self.ctx.physical_id)).is_public
        if name == "extra_specs":
            return compute(self.ctx).get_flavor_extra_specs(str(self.ctx.physical_id))
        return super().get_attribute(name)

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        return compute(self.ctx).get_flavor(self.ctx.physical_id).show()
