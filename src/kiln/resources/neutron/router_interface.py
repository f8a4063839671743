"""OS::Neutron::RouterInterface: attaches a subnet or a port to a router.

There is no Neutron object of its own: the physical id is the composite
``<router_id>:subnet_id=<subnet_id>`` or ``<router_id>:port_id=<port_id>`` (the legacy
``<router_id>:<subnet_id>`` is still understood on delete). Nothing updates in place.
Delete detaches with the same key; a 404 (router or interface gone) is success, a 409
(a floating IP still routes through it) propagates so the engine retries. The hidden
``router_id`` / ``subnet_id`` / ``port_id`` are the old names of ``router`` / ``subnet``
/ ``port``. ``show`` is the interface's port. Reference resource-types.md section 2,
OS::Neutron::RouterInterface.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.network import Port
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import NeutronResource, custom, hidden
from kiln.schema.properties import PropertySchema, PropertyType

_STRING = PropertyType.STRING
#: the interface's key in the composite id and in the add/remove request
SUBNET_KEY, PORT_KEY = "subnet_id", "port_id"
INTERFACE_OWNERS = (
    "network:router_interface",
    "network:router_interface_distributed",
    "network:ha_router_replicated_interface",
)


def composite_id(router_id: str, key: str, value: str) -> str:
    return f"{router_id}:{key}={value}"


def parse_id(physical_id: str) -> tuple[str, str, str]:
    """(router id, ``subnet_id`` or ``port_id``, the id) of a composite id."""
    router_id, _, rest = physical_id.partition(":")
    key, sep, value = rest.partition("=")
    if not sep:  # legacy "<router>:<subnet>"
        return router_id, SUBNET_KEY, rest
    return router_id, key, value


def _ref(description: str, constraint: str, **kw: Any) -> PropertySchema:
    return PropertySchema(_STRING, description, constraints=custom(constraint), **kw)


@resource_type("OS::Neutron::RouterInterface")
class RouterInterface(NeutronResource):
    """A router's interface on a subnet or port; ``get_resource`` gives the composite id."""

    has_name = False
    polls_status = False
    property_aliases = {"router_id": "router", "subnet_id": "subnet", "port_id": "port"}

    properties_schema = {
        "router": _ref("The router (name or id).", "neutron.router", required=True),
        "router_id": _ref(
            "The router (use router).", "neutron.router", support_status=hidden("router")
        ),
        "subnet_id": _ref(
            "The subnet (use subnet).", "neutron.subnet", support_status=hidden("subnet")
        ),
        "subnet": _ref("The subnet (name or id) to attach; or give port.", "neutron.subnet"),
        "port_id": _ref("The port (use port).", "neutron.port", support_status=hidden("port")),
        "port": _ref("The port (name or id) to attach; or give subnet.", "neutron.port"),
    }
    attributes_schema = {}

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        subnet = properties.get("subnet") or properties.get("subnet_id")
        port = properties.get("port") or properties.get("port_id")
        if (subnet is None) == (port is None):
            errors.append(
                StackValidationFailed(
                    "Exactly one of the following properties must be specified: subnet, port"
                )
            )
        return errors

    def target(self) -> tuple[str, str, str]:
        """(router id, key, id) of the interface the properties describe."""
        router_id = self.network.find_router(self.prop("router")).id
        if self.prop("port") is not None:
            return router_id, PORT_KEY, self.network.find_port(self.prop("port")).id
        return router_id, SUBNET_KEY, self.network.find_subnet(self.prop("subnet")).id

    def handle_create(self) -> Cookie:
        self.check_valid()
        router_id, key, value = self.target()
        self.network.add_router_interface(router_id, **{key: value})
        self.ctx.set_physical_id(composite_id(router_id, key, value))
        return None

    def find_existing(self) -> str | None:
        """The interface, when the router already has it (the add is not repeatable)."""
        try:
            router_id, key, value = self.target()
        except NotFound:  # the create will say what is missing
            return None
        if self._interface_port(router_id, key, value) is None:
            return None
        return composite_id(router_id, key, value)

    def _interface_port(self, router_id: str, key: str, value: str) -> Port | None:
        for port in self.network.list_ports(device_id=router_id):
            if port.device_owner not in INTERFACE_OWNERS:
                continue
            if key == PORT_KEY and port.id == value:
                return port
            if key == SUBNET_KEY and any(ip["subnet_id"] == value for ip in port.fixed_ips):
                return port
        return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        port = self._interface_port(*parse_id(self.ctx.physical_id))
        return None if port is None else port.show()

    def get_attribute(self, name: str) -> Any:
        return self._show() if name == "show" else None

    def handle_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return None
        router_id, key, value = parse_id(self.ctx.physical_id)
        try:
            self.network.remove_router_interface(router_id, **{key: value})
        except NotFound:
            pass
        return None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return True
