"""OS::Neutron::Net: a Neutron network.

Everything updates in place except ``tenant_id`` and ``availability_zone_hints``.
``qos_policy`` is sent as ``qos_policy_id`` (an id: the network client has no QoS
lookup; removing it clears the policy). When the
template leaves ``port_security_enabled`` unset, the cloud's value after create is
remembered, so that removing the property later restores it. DHCP agent scheduling
(``dhcp_agent_ids``, admin only) has no call in the network client, so a template
that asks for it fails with a clear message instead of being silently ignored.
Reference resource-types.md section 2, OS::Neutron::Net.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.plugin import ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import (
    NeutronResource,
    custom,
    is_built,
    name_schema,
    tags_schema,
    tenant_id_schema,
    value_specs_schema,
)
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _BOOLEAN, _LIST = PropertyType.STRING, PropertyType.BOOLEAN, PropertyType.LIST

#: data key of the cloud's port security default, recorded when the template sets none
PORT_SECURITY_DEFAULT = "port_security_enabled_default"
NO_AGENT_SCHEDULING = (
    "Scheduling networks on DHCP agents (dhcp_agent_ids) is not supported by this cloud client"
)


@resource_type("OS::Neutron::Net")
class Net(NeutronResource):
    """A network; ``get_resource`` gives its id."""

    entity = "network"
    collection = "networks"
    plural = "networks"
    body_keys = {
        "admin_state_up": "admin_state_up",
        "shared": "shared",
        "tenant_id": "tenant_id",
        "port_security_enabled": "port_security_enabled",
        "qos_policy": "qos_policy_id",
        "dns_domain": "dns_domain",
        "availability_zone_hints": "availability_zone_hints",
    }

    properties_schema = {
        "name": name_schema("network"),
        "value_specs": value_specs_schema(),
        "admin_state_up": PropertySchema(
            _BOOLEAN,
            "The administrative state of the network.",
            default=True,
            update_allowed=True,
        ),
        "tenant_id": tenant_id_schema("network"),
        "shared": PropertySchema(
            _BOOLEAN,
            "Whether every project may use the network (admin only).",
            default=False,
            update_allowed=True,
        ),
        "dhcp_agent_ids": PropertySchema(
            _LIST,
            "The DHCP agents to schedule the network on (admin only).",
            update_allowed=True,
        ),
        "port_security_enabled": PropertySchema(
            _BOOLEAN, "Default port security of the network's ports.", update_allowed=True
        ),
        "qos_policy": PropertySchema(
            _STRING,
            "The QoS policy id of the network.",
            update_allowed=True,
            constraints=custom("neutron.qos_policy"),
        ),
        "dns_domain": PropertySchema(
            _STRING,
            "The DNS domain of the network.",
            update_allowed=True,
            constraints=custom("dns_domain"),
        ),
        "availability_zone_hints": PropertySchema(
            _LIST, "Availability zones candidate for the network (replaces on change)."
        ),
        "tags": tags_schema("network"),
    }
    attributes_schema = {
        "status": AttributeSchema("The status of the network.", type=_STRING),
        "name": AttributeSchema("The name of the network.", type=_STRING),
        "subnets": AttributeSchema("The ids of the network's subnets.", type=_LIST),
        "admin_state_up": AttributeSchema("The administrative state.", type=_BOOLEAN),
        "tenant_id": AttributeSchema("The project owning the network.", type=_STRING),
        "port_security_enabled": AttributeSchema(
            "Default port security of the network's ports.", type=_BOOLEAN
        ),
        "mtu": AttributeSchema("The maximum transmission unit.", type=PropertyType.INTEGER),
        "qos_policy_id": AttributeSchema("The QoS policy id of the network.", type=_STRING),
        "l2_adjacency": AttributeSchema(
            "Whether every port of the network can reach every other at layer 2.",
            type=_BOOLEAN,
        ),
        "segments": AttributeSchema("The network's segments (unnamed first).", type=_LIST),
    }

    def handle_create(self) -> Cookie:
        self.check_valid()
        if self.properties.get("dhcp_agent_ids"):
            raise ResourceFailure(NO_AGENT_SCHEDULING)
        body = self.base_body()
        if not body.get("shared", True):
            # false is Neutron's default; sent explicitly it trips admin-only policies
            del body["shared"]
        created = self.network.create_network(body)
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, self.properties.get("tags"))
        return None

    def check_create_complete(self, cookie: Cookie) -> bool:
        network = self.live()
        if not is_built(network):
            return False
        if self.properties.get("port_security_enabled") is None:
            self.ctx.data_set(PORT_SECURITY_DEFAULT, network.port_security_enabled)
        return True

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if changed.get("dhcp_agent_ids"):
            raise ResourceFailure(NO_AGENT_SCHEDULING)
        body = self.base_update_body(changed)
        if "qos_policy" in changed:
            body["qos_policy_id"] = changed["qos_policy"]  # None clears the policy
        if "port_security_enabled" in changed and changed["port_security_enabled"] is None:
            default = self.ctx.data_get(PORT_SECURITY_DEFAULT)
            if default is not None:
                body["port_security_enabled"] = default
        if body:
            self.network.update_network(self.ctx.physical_id or "", body)
        if "tags" in changed:
            self.apply_tags(self.ctx.physical_id or "", changed["tags"])
        return None

    def get_attribute(self, name: str) -> Any:
        if name == "segments" and self.ctx.physical_id:
            segments = [
                s.show() for s in self.network.list_segments(network_id=self.ctx.physical_id)
            ]
            return sorted(segments, key=lambda s: s.get("name") is not None)
        return super().get_attribute(name)
