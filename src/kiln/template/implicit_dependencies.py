"""Dependencies Heat adds without any reference in the template (reference
resource-types.md sections 1 and 2): what attaches to a network waits for the stack's
subnets on that network, and a floating IP waits for the routes that make it reachable.

Without them a port made before its network's subnet gets no address, and a floating IP
made before the router interface is refused. Values are compared as written (a
``get_resource`` of the same network, or the same name), since nothing is resolved yet.
An edge that would close a cycle is left out: an explicit dependency always wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kiln.template.functions.base import Function
from kiln.template.resources import ResourceDefinition

SUBNET = "OS::Neutron::Subnet"
ROUTER = "OS::Neutron::Router"
ROUTER_INTERFACE = "OS::Neutron::RouterInterface"
PORT = "OS::Neutron::Port"
FLOATING_IP = "OS::Neutron::FloatingIP"
FLOATING_IP_ASSOCIATION = "OS::Neutron::FloatingIPAssociation"
LOAD_BALANCER = "OS::Octavia::LoadBalancer"

Path = tuple[str, ...]

#: the properties through which a type names networks ("*": every item of a list)
NETWORK_USERS: Mapping[str, tuple[Path, ...]] = {
    "OS::Nova::Server": (("networks", "*", "network"), ("networks", "*", "uuid")),
    PORT: (("network",), ("network_id",)),
    ROUTER: (("external_gateway_info", "network"),),
    FLOATING_IP: (("floating_network",), ("floating_network_id",)),
}
SUBNET_NETWORK: tuple[Path, ...] = (("network",), ("network_id",))
PORT_SUBNETS: tuple[Path, ...] = (("fixed_ips", "*", "subnet"), ("fixed_ips", "*", "subnet_id"))
INTERFACE_SUBNET: tuple[Path, ...] = (("subnet",), ("subnet_id",))


def values_at(properties: Any, paths: Iterable[Path]) -> list[Any]:
    """What the values at ``paths`` name: the resource a reference names, else the value
    as written (a name or an id); unresolved functions of other kinds compare as is."""
    found: list[Any] = []
    for path in paths:
        found.extend(_walk(properties, path))
    return [_key(v) for v in found if v is not None]


def _key(value: Any) -> Any:
    named = _referenced(value)
    if named is not None:
        return ("resource", named)
    return value if isinstance(value, str | Function) else repr(value)


def _walk(value: Any, path: Path) -> Iterator[Any]:
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(value, list):
            for item in value:
                yield from _walk(item, rest)
    elif isinstance(value, Mapping) and head in value:
        yield from _walk(value[head], rest)


def _referenced(value: Any) -> str | None:
    """The resource a ``get_resource``/``Ref``/``get_attr`` value names, if any."""
    if not isinstance(value, Function):
        return None
    if value.fn_name in ("get_resource", "Ref") and isinstance(value.args, str):
        return value.args
    if value.fn_name in ("get_attr", "Fn::GetAtt") and isinstance(value.args, list):
        first = value.args[0] if value.args else None
        return first if isinstance(first, str) else None
    return None


def implicit_requires(definitions: Mapping[str, ResourceDefinition]) -> dict[str, set[str]]:
    """name -> the resources it must wait for beyond what it references."""
    of_type: dict[str, list[str]] = {}
    for name, definition in definitions.items():
        of_type.setdefault(definition.type, []).append(name)
    subnets = [
        (name, values_at(definitions[name].properties, SUBNET_NETWORK))
        for name in of_type.get(SUBNET, [])
    ]
    extra: dict[str, set[str]] = {}
    for type_name, paths in NETWORK_USERS.items():
        for name in of_type.get(type_name, []):
            networks = values_at(definitions[name].properties, paths)
            extra.setdefault(name, set()).update(
                subnet for subnet, on in subnets if any(n in networks for n in on)
            )
    interfaces = [
        (name, values_at(definitions[name].properties, INTERFACE_SUBNET))
        for name in of_type.get(ROUTER_INTERFACE, [])
    ]
    for name in of_type.get(FLOATING_IP, []) + of_type.get(FLOATING_IP_ASSOCIATION, []):
        props = definitions[name].properties
        port_subnets = _port_subnets(definitions, props, subnets)
        extra.setdefault(name, set()).update(
            interface for interface, on in interfaces if any(s in port_subnets for s in on)
        )
        if definitions[name].type == FLOATING_IP:
            floating = values_at(props, (("floating_network",), ("floating_network_id",)))
            for router in of_type.get(ROUTER, []):
                gateway = values_at(definitions[router].properties, NETWORK_USERS[ROUTER])
                if any(g in floating for g in gateway):
                    extra[name].add(router)
    return {name: deps - {name} for name, deps in extra.items() if deps - {name}}


def _port_subnets(
    definitions: Mapping[str, ResourceDefinition],
    properties: Any,
    subnets: list[tuple[str, list[Any]]],
) -> list[Any]:
    """The subnets (as written) hosting the port a floating IP names."""
    found = values_at(properties, (("port_id",),))
    port = found[0][1] if found and isinstance(found[0], tuple) else None
    if port is None or port not in definitions:
        return []
    target = definitions[port]
    if target.type == LOAD_BALANCER:
        return values_at(target.properties, (("vip_subnet",),))
    if target.type != PORT:
        return []
    given = values_at(target.properties, PORT_SUBNETS)
    if given:
        return given
    networks = values_at(target.properties, NETWORK_USERS[PORT])
    return [("resource", subnet) for subnet, on in subnets if any(n in networks for n in on)]
