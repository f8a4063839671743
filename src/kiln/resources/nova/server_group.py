"""OS::Nova::ServerGroup: a Nova server group with an (anti-)affinity policy.

From compute microversion 2.64 Nova takes one ``policy`` plus ``rules``; below,
a ``policies`` list. Soft policies need 2.15 and ``rules`` 2.64. Nothing
updates in place; a change replaces the group. Imports: kiln.plugin,
kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.nova._compute import (
    GROUP_POLICY,
    SOFT_POLICIES,
    compute,
    delete_ignoring_gone,
    require,
    supports,
)
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import PropertySchema, PropertyType

T = PropertyType

POLICIES = ("anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity")


@resource_type("OS::Nova::ServerGroup")
class ServerGroup(Resource):
    """A server group; servers join it through the scheduler hint ``group``."""

    properties_schema = {
        "name": PropertySchema(T.STRING, "Name of the server group."),
        "policies": PropertySchema(
            T.LIST,
            "Placement policy of the group (only the first one is used from 2.64).",
            default=["anti-affinity"],
            schema=PropertySchema(
                T.STRING, "A placement policy.", constraints=(AllowedValues(POLICIES),)
            ),
        ),
        "rules": PropertySchema(
            T.MAP,
            "Rules of the policy (compute API 2.64).",
            schema={
                "max_server_per_host": PropertySchema(
                    T.NUMBER, "Most servers of the group on one host (anti-affinity)."
                ),
            },
        ),
    }
    # No attributes but the base attribute show (reference: "No attributes besides show").

    def _name(self) -> str:
        return self.properties.get("name") or self.ctx.physical_resource_name()

    def find_existing(self) -> str | None:
        name = self._name()
        for group in compute(self.ctx).list_server_groups():
            if group.name == name:
                return group.id
        return None

    def _body(self) -> dict[str, Any]:
        api = compute(self.ctx)
        policies = list(self.properties["policies"] or [])
        if any(p.startswith("soft-") for p in policies):
            require(api, SOFT_POLICIES, "Soft (anti-)affinity policies")
        rules = {k: v for k, v in (self.properties.get("rules") or {}).items() if v is not None}
        body: dict[str, Any] = {"name": self._name()}
        if supports(api, GROUP_POLICY):
            if not policies:
                raise ResourceFailure("A server group needs a policy")
            body["policy"] = policies[0]
            if rules:
                body["rules"] = rules
        else:
            if rules:
                require(api, GROUP_POLICY, "Server group rules")
            body["policies"] = policies
        return body

    def handle_create(self) -> Cookie:
        created = compute(self.ctx).create_server_group(self._body())
        self.ctx.set_physical_id(created.id)
        return None

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            api, group_id = compute(self.ctx), self.ctx.physical_id
            delete_ignoring_gone(lambda: api.delete_server_group(group_id))
        return None

    def handle_check(self) -> Cookie:
        if not self.ctx.physical_id:
            raise ResourceFailure(f"Server group {self.ctx.name} was never created")
        compute(self.ctx).get_server_group(self.ctx.physical_id)
        return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return compute(self.ctx).get_server_group(self.ctx.physical_id).show()
        except NotFound:
            return None
