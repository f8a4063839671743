"""OS::Octavia::Listener: a protocol and port a load balancer listens on.

Created, updated and deleted from the poll, since its load balancer may still be pending
(see kiln.resources.octavia._base). ``protocol``, ``protocol_port``, ``loadbalancer`` and
``tenant_id`` replace it; the rest updates in place (``default_pool`` is sent as
``default_pool_id``; removing it unsets the listener's default pool). The load balancer
and the default pool may be given by name or id. Imports: kiln.plugin, kiln.schema,
kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.load_balancer import OctaviaRecord
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.resources.octavia._base import (
    PROTOCOLS,
    OctaviaResource,
    admin_state_up,
    description,
    object_name,
    without_none,
)
from kiln.schema.constraints import CustomConstraint, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _INTEGER, _LIST = PropertyType.STRING, PropertyType.INTEGER, PropertyType.LIST
TERMINATED_HTTPS = "TERMINATED_HTTPS"


@resource_type("OS::Octavia::Listener")
class Listener(OctaviaResource):
    """An Octavia listener; ``get_resource`` gives its id."""

    properties_schema = {
        "protocol_port": PropertySchema(
            _INTEGER,
            "TCP or UDP port to listen on.",
            required=True,
            constraints=(Range(1, 65535),),
        ),
        "protocol": PropertySchema(
            _STRING, "Protocol to listen for.", required=True, constraints=(PROTOCOLS,)
        ),
        "loadbalancer": PropertySchema(
            _STRING,
            "Name or id of the load balancer the listener belongs to.",
            required=True,
            constraints=(CustomConstraint(name="octavia.loadbalancer"),),
        ),
        "default_pool": PropertySchema(
            _STRING,
            "Name or id of the pool used when no L7 policy matches.",
            update_allowed=True,
            constraints=(CustomConstraint(name="octavia.pool"),),
        ),
        "name": object_name(),
        "admin_state_up": admin_state_up(),
        "description": description(),
        "default_tls_container_ref": PropertySchema(
            _STRING,
            "Reference to the secret container of the default TLS certificate "
            "(required by TERMINATED_HTTPS).",
            update_allowed=True,
        ),
        "sni_container_refs": PropertySchema(
            _LIST,
            "References to the secret containers of SNI certificates.",
            update_allowed=True,
        ),
        "connection_limit": PropertySchema(
            _INTEGER,
            "Most connections the listener accepts (-1: unlimited).",
            default=-1,
            update_allowed=True,
            constraints=(Range(min=-1),),
        ),
        "tenant_id": PropertySchema(_STRING, "Project owning the listener (admin only)."),
        "allowed_cidrs": PropertySchema(
            _LIST,
            "CIDRs allowed to connect (default: any).",
            update_allowed=True,
            schema=PropertySchema(
                _STRING,
                "A CIDR allowed to connect.",
                constraints=(CustomConstraint(name="net_cidr"),),
            ),
        ),
    }
    attributes_schema = {
        "loadbalancers": AttributeSchema(
            "The load balancers of the listener, as [{id}].", type=_LIST
        ),
        "default_pool_id": AttributeSchema("The id of the default pool.", type=_STRING),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        if properties.get("protocol") == TERMINATED_HTTPS and not properties.get(
            "default_tls_container_ref"
        ):
            return [
                StackValidationFailed(
                    "Property default_tls_container_ref required when protocol is "
                    f"{TERMINATED_HTTPS}.",
                    path=("default_tls_container_ref",),
                )
            ]
        return []

    def fetch(self, object_id: str) -> OctaviaRecord:
        return self.octavia.get_listener(object_id)

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        return self.octavia.create_listener(body)

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        self.octavia.update_listener(object_id, body)

    def send_delete(self, object_id: str) -> None:
        self.octavia.delete_listener(object_id)

    def candidates(self) -> Sequence[OctaviaRecord]:
        return self.octavia.list_listeners(name=self.name_value(self.properties))

    def _pool_id(self, name_or_id: str | None) -> str | None:
        return self.octavia.find_pool(name_or_id).id if name_or_id else None

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        return without_none(
            {
                "protocol": props["protocol"],
                "protocol_port": props["protocol_port"],
                "loadbalancer_id": self.octavia.find_load_balancer(props["loadbalancer"]).id,
                "default_pool_id": self._pool_id(props["default_pool"]),
                "name": self.name_value(props),
                "admin_state_up": props["admin_state_up"],
                "description": props["description"],
                "default_tls_container_ref": props["default_tls_container_ref"],
                "sni_container_refs": props["sni_container_refs"],
                "connection_limit": props["connection_limit"],
                "tenant_id": props["tenant_id"],
                "allowed_cidrs": props["allowed_cidrs"],
                "tags": [self.kiln_tag()],
            }
        )

    def update_body(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> dict[str, Any]:
        body = dict(changed)
        if "name" in body:
            body["name"] = self.name_value(new_properties)
        if "default_pool" in body:
            body["default_pool_id"] = self._pool_id(body.pop("default_pool"))
        return body
