"""OS::Neutron::FloatingIP: an address on an external network, optionally on a port.

``floating_network`` (hidden alias ``floating_network_id``), ``floating_subnet`` and
``port_id`` are resolved to ids. Only the association (``port_id``,
``fixed_ip_address``) updates in place: the PUT sends both, new or current;
``dns_name`` and ``dns_domain`` are updatable but, as in Heat, not sent. Created DOWN,
so there is nothing to poll.

Associating needs a route: some router with an interface on the port's subnet and a
gateway on the floating network. When the template does not order the router
interface before the address, Neutron answers 404 ``ExternalGatewayForFloatingIPNotFound``;
the create then waits (polling, up to :data:`ROUTE_WAIT_SECONDS`) for the route to
appear instead of failing at once, and finally fails with the cloud's message.
Reference resource-types.md section 2, OS::Neutron::FloatingIP.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import ResourceContext, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import (
    NeutronResource,
    custom,
    hidden,
    value_specs_schema,
)
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING = PropertyType.STRING
#: how long an association waits for a router interface and gateway to route it
ROUTE_WAIT_SECONDS = 120.0
MISSING_ROUTE = "ExternalGatewayForFloatingIPNotFound"


def is_missing_route(error: NotFound) -> bool:
    """Neutron's 404 for "the external network is not reachable from the port's subnet"."""
    return error.kind == MISSING_ROUTE or "not reachable" in error.message


def route_wait(
    ctx: ResourceContext, attempt: Callable[[], None], cookie: Mapping[str, Any] | None
) -> Cookie:
    """Run ``attempt``; while it fails for a missing route, a cookie to try again.

    Returns None when the attempt succeeded, else ``{"route_deadline": <epoch s>}``.
    After the deadline the cloud's error propagates.
    """
    now = ctx.now().timestamp()
    deadline = cookie["route_deadline"] if cookie else now + ROUTE_WAIT_SECONDS
    try:
        attempt()
    except NotFound as error:
        if not is_missing_route(error) or now >= deadline:
            raise
        return {"route_deadline": deadline}
    return None


def _ref(description: str, constraint: str, **kw: Any) -> PropertySchema:
    return PropertySchema(_STRING, description, constraints=custom(constraint), **kw)


@resource_type("OS::Neutron::FloatingIP")
class FloatingIP(NeutronResource):
    """A floating IP; ``get_resource`` gives its id."""

    entity = "floating_ip"
    collection = "floatingips"
    plural = "floating_ips"
    has_name = False
    polls_status = False
    property_aliases = {"floating_network_id": "floating_network"}
    body_keys = {
        "fixed_ip_address": "fixed_ip_address",
        "floating_ip_address": "floating_ip_address",
        "dns_name": "dns_name",
        "dns_domain": "dns_domain",
    }

    properties_schema = {
        "floating_network_id": _ref(
            "The external network (use floating_network).",
            "neutron.network",
            support_status=hidden("floating_network"),
        ),
        "floating_network": _ref(
            "The external network (name or id) to take the address from.",
            "neutron.network",
            required=True,
        ),
        "floating_subnet": _ref(
            "The external subnet (name or id) to take the address from.", "neutron.subnet"
        ),
        "value_specs": value_specs_schema(update_allowed=False),
        "port_id": _ref(
            "The port (name or id) to associate the address with.",
            "neutron.port",
            update_allowed=True,
        ),
        "fixed_ip_address": _ref(
            "The port's fixed IP to map the address to.", "ip_addr", update_allowed=True
        ),
        "floating_ip_address": _ref("The address to take (admin only).", "ip_addr"),
        "dns_name": _ref("The DNS name of the address.", "rel_dns_name", update_allowed=True),
        "dns_domain": _ref("The DNS domain of the address.", "dns_domain", update_allowed=True),
    }
    attributes_schema = {
        "router_id": AttributeSchema("The router routing the address.", type=_STRING),
        "tenant_id": AttributeSchema("The project owning the address.", type=_STRING),
        "floating_network_id": AttributeSchema("The external network.", type=_STRING),
        "fixed_ip_address": AttributeSchema("The fixed IP it maps to.", type=_STRING),
        "floating_ip_address": AttributeSchema("The floating address.", type=_STRING),
        "port_id": AttributeSchema("The port it is associated with.", type=_STRING),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        if properties.get("fixed_ip_address") is not None and properties.get("port_id") is None:
            errors.append(
                StackValidationFailed(
                    "Property fixed_ip_address requires port_id", path=("fixed_ip_address",)
                )
            )
        return errors

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        body = self.base_body()
        body["floating_network_id"] = self.network.find_network(self.prop("floating_network")).id
        if props.get("floating_subnet"):
            body["subnet_id"] = self.network.find_subnet(props["floating_subnet"]).id
        if props.get("port_id"):
            body["port_id"] = self.network.find_port(props["port_id"]).id
        return body

    def _create(self) -> None:
        created = self.network.create_floating_ip(self.create_body())
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, [])

    def handle_create(self) -> Cookie:
        self.check_valid()
        return route_wait(self.ctx, self._create, None)

    def check_create_complete(self, cookie: Cookie) -> bool:
        return not cookie or route_wait(self.ctx, self._create, cookie) is None

    def association_body(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """``{"port_id", "fixed_ip_address"}`` as the properties say (None: disassociate)."""
        port = properties.get("port_id")
        if not port:
            return {"port_id": None, "fixed_ip_address": None}
        return {
            "port_id": self.network.find_port(port).id,
            "fixed_ip_address": properties.get("fixed_ip_address"),
        }

    def _associate(self, body: Mapping[str, Any]) -> Callable[[], None]:
        def attempt() -> None:
            self.network.update_floating_ip(self.ctx.physical_id or "", body)

        return attempt

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if "port_id" not in changed and "fixed_ip_address" not in changed:
            return None  # dns_name / dns_domain: recorded, not sent (reference)
        body = self.association_body(new_properties)
        waiting = route_wait(self.ctx, self._associate(body), None)
        return None if waiting is None else {**waiting, "body": body}

    def check_update_complete(self, cookie: Cookie) -> bool:
        if not cookie:
            return True
        return route_wait(self.ctx, self._associate(cookie["body"]), cookie) is None
