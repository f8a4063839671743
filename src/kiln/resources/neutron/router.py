"""OS::Neutron::Router: a router, optionally with a gateway on an external network.

``external_gateway_info.network`` and ``external_fixed_ips[].subnet`` are resolved to
ids and sent as ``network_id`` / ``subnet_id``; on update the whole gateway is resent
(removing it sends null, which removes the gateway). ``distributed``, ``ha`` and
``tenant_id`` replace on change. The hidden ``l3_agent_id`` is one more entry of
``l3_agent_ids``; L3 agent scheduling (admin only) has no call in the network client,
so a template asking for it fails with a clear message rather than being ignored.
Reference resource-types.md section 2, OS::Neutron::Router.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import (
    NeutronResource,
    custom,
    drop_none,
    hidden,
    name_schema,
    tags_schema,
    tenant_id_schema,
    value_specs_schema,
)
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _BOOLEAN, _LIST, _MAP = (
    PropertyType.STRING,
    PropertyType.BOOLEAN,
    PropertyType.LIST,
    PropertyType.MAP,
)

NO_AGENT_SCHEDULING = (
    "Scheduling routers on L3 agents (l3_agent_ids) is not supported by this cloud client"
)


def agent_ids(properties: Mapping[str, Any]) -> list[str]:
    """``l3_agent_ids``, with the hidden ``l3_agent_id`` appended."""
    agents = list(properties.get("l3_agent_ids") or [])
    if properties.get("l3_agent_id"):
        agents.append(properties["l3_agent_id"])
    return agents


@resource_type("OS::Neutron::Router")
class Router(NeutronResource):
    """A router; ``get_resource`` gives its id."""

    entity = "router"
    collection = "routers"
    plural = "routers"
    body_keys = {
        "admin_state_up": "admin_state_up",
        "distributed": "distributed",
        "ha": "ha",
        "tenant_id": "tenant_id",
        "availability_zone_hints": "availability_zone_hints",
    }

    properties_schema = {
        "name": name_schema("router"),
        "external_gateway_info": PropertySchema(
            _MAP,
            "The router's gateway on an external network.",
            update_allowed=True,
            schema={
                "network": PropertySchema(
                    _STRING,
                    "The external network (name or id).",
                    required=True,
                    update_allowed=True,
                ),
                "enable_snat": PropertySchema(
                    _BOOLEAN,
                    "Whether the gateway does source NAT (admin policy).",
                    update_allowed=True,
                ),
                "external_fixed_ips": PropertySchema(
                    _LIST,
                    "Addresses of the gateway on the external network.",
                    update_allowed=True,
                    schema={
                        "ip_address": PropertySchema(
                            _STRING, "An external address.", constraints=custom("ip_addr")
                        ),
                        "subnet": PropertySchema(
                            _STRING,
                            "The external subnet (name or id).",
                            constraints=custom("neutron.subnet"),
                        ),
                    },
                ),
            },
        ),
        "value_specs": value_specs_schema(),
        "admin_state_up": PropertySchema(
            _BOOLEAN,
            "The administrative state of the router.",
            default=True,
            update_allowed=True,
        ),
        "l3_agent_id": PropertySchema(
            _STRING,
            "The L3 agent of the router (use l3_agent_ids).",
            update_allowed=True,
            support_status=hidden("l3_agent_ids"),
        ),
        "l3_agent_ids": PropertySchema(
            _LIST,
            "The L3 agents to schedule the router on (admin only).",
            update_allowed=True,
            schema=PropertySchema(_STRING, "An L3 agent id."),
        ),
        "distributed": PropertySchema(
            _BOOLEAN, "Whether the router is distributed (DVR; replaces on change)."
        ),
        "ha": PropertySchema(
            _BOOLEAN, "Whether the router is highly available (replaces on change)."
        ),
        "availability_zone_hints": PropertySchema(
            _LIST, "Availability zones candidate for the router.", update_allowed=True
        ),
        "tags": tags_schema("router"),
        "tenant_id": tenant_id_schema("router"),
    }
    attributes_schema = {
        "status": AttributeSchema("The status of the router.", type=_STRING),
        "external_gateway_info": AttributeSchema(
            "The gateway: network_id, enable_snat, external_fixed_ips.", type=_MAP
        ),
        "name": AttributeSchema("The name of the router.", type=_STRING),
        "admin_state_up": AttributeSchema("The administrative state.", type=_BOOLEAN),
        "tenant_id": AttributeSchema("The project owning the router.", type=_STRING),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        if properties.get("l3_agent_id") and properties.get("l3_agent_ids"):
            errors.append(
                StackValidationFailed(
                    "Cannot define the following properties at the same time: "
                    "l3_agent_id, l3_agent_ids"
                )
            )
        agents = agent_ids(properties)
        if properties.get("distributed"):
            if agents:
                errors.append(
                    StackValidationFailed(
                        "distributed can not be used with l3_agent_ids", path=("distributed",)
                    )
                )
            if properties.get("ha"):
                errors.append(
                    StackValidationFailed(
                        "distributed can not be used with ha", path=("distributed",)
                    )
                )
        if len(agents) > 1 and not properties.get("ha"):
            errors.append(
                StackValidationFailed(
                    "Non HA routers can only have one L3 agent.", path=("l3_agent_ids",)
                )
            )
        return errors

    def gateway_body(self, info: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """``external_gateway_info`` with names resolved to ids, as Neutron takes it."""
        if not info:
            return None
        body: dict[str, Any] = {"network_id": self.network.find_network(info["network"]).id}
        if info.get("enable_snat") is not None:
            body["enable_snat"] = info["enable_snat"]
        if info.get("external_fixed_ips") is not None:
            body["external_fixed_ips"] = [
                drop_none(
                    {
                        "ip_address": item.get("ip_address"),
                        "subnet_id": self.network.find_subnet(item["subnet"]).id
                        if item.get("subnet")
                        else None,
                    }
                )
                for item in info["external_fixed_ips"]
            ]
        return body

    def handle_create(self) -> Cookie:
        self.check_valid()
        if agent_ids(self.properties):
            raise ResourceFailure(NO_AGENT_SCHEDULING)
        body = self.base_body()
        gateway = self.gateway_body(self.properties.get("external_gateway_info"))
        if gateway is not None:
            body["external_gateway_info"] = gateway
        created = self.network.create_router(body)
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, self.properties.get("tags"))
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if ("l3_agent_ids" in changed or "l3_agent_id" in changed) and agent_ids(new_properties):
            raise ResourceFailure(NO_AGENT_SCHEDULING)
        router_id = self.ctx.physical_id or ""
        body = self.base_update_body(changed)
        if "availability_zone_hints" in changed:
            body["availability_zone_hints"] = list(changed["availability_zone_hints"] or [])
        if "external_gateway_info" in changed:
            body["external_gateway_info"] = self.gateway_body(changed["external_gateway_info"])
        if body:
            self.network.update_router(router_id, body)
        if "tags" in changed:
            self.apply_tags(router_id, changed["tags"])
        return None
