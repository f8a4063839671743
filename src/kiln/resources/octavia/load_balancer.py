"""OS::Octavia::LoadBalancer: a load balancer with its VIP on a Neutron subnet.

Created at once (it has no parent that could be pending), then polled until its
``provisioning_status`` is ACTIVE. ``name``, ``description`` and ``admin_state_up``
update in place; anything else replaces it. The VIP subnet and the Octavia flavor may be
given by name or id. Deleting does not cascade: listeners and pools of the stack are
deleted first, by dependency order. Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.load_balancer import OctaviaRecord
from kiln.plugin import resource_type
from kiln.resources.octavia._base import (
    OctaviaResource,
    admin_state_up,
    description,
    object_name,
    without_none,
)
from kiln.schema.constraints import CustomConstraint
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _LIST = PropertyType.STRING, PropertyType.LIST


@resource_type("OS::Octavia::LoadBalancer")
class LoadBalancer(OctaviaResource):
    """An Octavia load balancer; ``get_resource`` gives its id."""

    create_at_once = True

    properties_schema = {
        "description": description(),
        "name": object_name(),
        "provider": PropertySchema(_STRING, "Provider driver of the load balancer."),
        "vip_address": PropertySchema(
            _STRING,
            "IP address of the VIP (default: a free address of the subnet).",
            constraints=(CustomConstraint(name="ip_addr"),),
        ),
        "vip_subnet": PropertySchema(
            _STRING,
            "Name or id of the subnet the VIP port is allocated on.",
            required=True,
            constraints=(CustomConstraint(name="neutron.subnet"),),
        ),
        "admin_state_up": admin_state_up(),
        "tenant_id": PropertySchema(
            _STRING,
            "Project owning the load balancer (admin only).",
            constraints=(CustomConstraint(name="keystone.project"),),
        ),
        "flavor": PropertySchema(
            _STRING,
            "Name or id of the Octavia flavor of the load balancer.",
            constraints=(CustomConstraint(name="octavia.flavor"),),
        ),
        "availability_zone": PropertySchema(
            _STRING,
            "Octavia availability zone of the load balancer.",
            constraints=(CustomConstraint(name="octavia.availabilityzone"),),
        ),
    }
    attributes_schema = {
        "vip_address": AttributeSchema("The VIP address.", type=_STRING),
        "vip_port_id": AttributeSchema("The id of the Neutron port of the VIP.", type=_STRING),
        "vip_subnet_id": AttributeSchema("The id of the subnet of the VIP.", type=_STRING),
        "pools": AttributeSchema("The pools of the load balancer, as [{id}].", type=_LIST),
        "flavor_id": AttributeSchema("The id of the Octavia flavor.", type=_STRING),
    }

    def fetch(self, object_id: str) -> OctaviaRecord:
        return self.octavia.get_load_balancer(object_id)

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        return self.octavia.create_load_balancer(body)

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        self.octavia.update_load_balancer(object_id, body)

    def send_delete(self, object_id: str) -> None:
        self.octavia.delete_load_balancer(object_id)

    def candidates(self) -> Sequence[OctaviaRecord]:
        return self.octavia.list_load_balancers(name=self.name_value(self.properties))

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        flavor = props["flavor"]
        return without_none(
            {
                "name": self.name_value(props),
                "description": props["description"],
                "provider": props["provider"],
                "vip_address": props["vip_address"],
                "vip_subnet_id": self.resolve_subnet(props["vip_subnet"]),
                "admin_state_up": props["admin_state_up"],
                "project_id": props["tenant_id"],
                "flavor_id": self.octavia.find_flavor(flavor).id if flavor else None,
                "availability_zone": props["availability_zone"],
                "tags": [self.kiln_tag()],
            }
        )

    def update_body(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> dict[str, Any]:
        body = dict(changed)
        if "name" in body:
            body["name"] = self.name_value(new_properties)
        return body
