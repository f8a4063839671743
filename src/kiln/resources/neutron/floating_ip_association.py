"""OS::Neutron::FloatingIPAssociation: puts an existing floating IP on a port.

No cloud object of its own: the physical id (what ``get_resource`` gives) is the
resource's physical name, an id Kiln makes, as Heat gives its internal id. Create and
update ``PUT`` the floating IP with the port (and fixed IP); moving to another floating
IP first disassociates the old one (404 ignored). Delete disassociates (404 ignored).
Like OS::Neutron::FloatingIP, the association waits a while for a route (router
interface plus gateway) when Neutron says there is none yet. ``show`` is the floating
IP. Reference resource-types.md section 2, OS::Neutron::FloatingIPAssociation.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.network import NetworkApi
from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import custom
from kiln.resources.neutron.floating_ip import route_wait
from kiln.schema.properties import PropertySchema, PropertyType

_STRING = PropertyType.STRING


@resource_type("OS::Neutron::FloatingIPAssociation")
class FloatingIPAssociation(Resource):
    """A floating IP's association with a port."""

    properties_schema = {
        "floatingip_id": PropertySchema(
            _STRING, "The floating IP (id) to associate.", required=True, update_allowed=True
        ),
        "port_id": PropertySchema(
            _STRING,
            "The port (name or id) to associate it with.",
            required=True,
            update_allowed=True,
            constraints=custom("neutron.port"),
        ),
        "fixed_ip_address": PropertySchema(
            _STRING,
            "The port's fixed IP to map the floating IP to.",
            update_allowed=True,
            constraints=custom("ip_addr"),
        ),
    }
    attributes_schema = {}

    @property
    def network(self) -> NetworkApi:
        client: NetworkApi = self.ctx.client("network")
        return client

    def association_body(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        body = {"port_id": self.network.find_port(properties["port_id"]).id}
        if properties.get("fixed_ip_address") is not None:
            body["fixed_ip_address"] = properties["fixed_ip_address"]
        return body

    def _associate(self, floating_ip_id: str, body: Mapping[str, Any]) -> Callable[[], None]:
        def attempt() -> None:
            self.network.update_floating_ip(floating_ip_id, body)

        return attempt

    def _start(self, properties: Mapping[str, Any]) -> Cookie:
        floating_ip_id = properties["floatingip_id"]
        body = self.association_body(properties)
        waiting = route_wait(self.ctx, self._associate(floating_ip_id, body), None)
        if waiting is None:
            return None
        return {**waiting, "floating_ip_id": floating_ip_id, "body": body}

    def _poll(self, cookie: Cookie) -> bool:
        if not cookie:
            return True
        attempt = self._associate(cookie["floating_ip_id"], cookie["body"])
        return route_wait(self.ctx, attempt, cookie) is None

    def handle_create(self) -> Cookie:
        cookie = self._start(self.properties)
        self.ctx.set_physical_id(self.ctx.physical_resource_name())
        return cookie

    def check_create_complete(self, cookie: Cookie) -> bool:
        return self._poll(cookie)

    def find_existing(self) -> str | None:
        """Our id when the floating IP already sits on the port."""
        try:
            floating_ip = self.network.get_floating_ip(self.properties["floatingip_id"])
            port = self.network.find_port(self.properties["port_id"])
        except NotFound:
            return None
        if floating_ip.port_id != port.id:
            return None
        return self.ctx.physical_resource_name()

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if "floatingip_id" in changed:
            self._disassociate(self.properties["floatingip_id"])
        return self._start(new_properties)

    def check_update_complete(self, cookie: Cookie) -> bool:
        return self._poll(cookie)

    def _disassociate(self, floating_ip_id: str) -> None:
        try:
            self.network.update_floating_ip(floating_ip_id, {"port_id": None})
        except NotFound:
            pass

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            self._disassociate(self.properties["floatingip_id"])
        return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return self.network.get_floating_ip(self.properties["floatingip_id"]).show()
        except NotFound:
            return None
