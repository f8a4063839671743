"""OS::Neutron::Subnet: an address range of a network.

``network`` (hidden alias ``network_id``) is resolved to an id. Exactly one of
``cidr`` and ``subnetpool`` gives the range (``prefixlen`` only with a pool).
``gateway_ip: ""`` (or ``~``) means no gateway and is sent as null; ``auto`` lets Neutron
pick the first address and is left out. ``allocation_pools`` and ``host_routes`` are
sent as given and update in place (removing either clears it). ``segment`` may only be
set on update while the subnet has none. Subnets have no status: create and update
complete at once. ``subnetpool`` is resolved to an id; ``segment`` is sent as given (the
network client has no lookup for segments). Reference resource-types.md section 2,
OS::Neutron::Subnet. Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import (
    NeutronResource,
    custom,
    hidden,
    name_schema,
    tags_schema,
    tenant_id_schema,
    value_specs_schema,
)
from kiln.schema.constraints import AllowedValues, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _INTEGER, _BOOLEAN = PropertyType.STRING, PropertyType.INTEGER, PropertyType.BOOLEAN
_LIST, _MAP = PropertyType.LIST, PropertyType.MAP

IPV6_MODES = AllowedValues(("dhcpv6-stateful", "dhcpv6-stateless", "slaac"))
#: gateway_ip values that mean "no gateway" (sent as null)
NO_GATEWAY = ("", "~")
AUTO_GATEWAY = "auto"


def _ipv6_mode(what: str) -> PropertySchema:
    return PropertySchema(_STRING, f"IPv6 {what} of the subnet.", constraints=(IPV6_MODES,))


def gateway_error(gateway: str | None) -> str | None:
    """Why ``gateway_ip`` is not an IP, ``""``, ``~`` or ``auto``; None when it is."""
    if gateway is None or gateway in NO_GATEWAY or gateway == AUTO_GATEWAY:
        return None
    try:
        ipaddress.ip_address(gateway)
    except ValueError:
        return f"{gateway} is not a valid IP address"
    return None


@resource_type("OS::Neutron::Subnet")
class Subnet(NeutronResource):
    """A subnet; ``get_resource`` gives its id."""

    entity = "subnet"
    collection = "subnets"
    plural = "subnets"
    polls_status = False
    property_aliases = {"network_id": "network"}
    body_keys = {
        "ip_version": "ip_version",
        "dns_nameservers": "dns_nameservers",
        "enable_dhcp": "enable_dhcp",
        "tenant_id": "tenant_id",
        "ipv6_ra_mode": "ipv6_ra_mode",
        "ipv6_address_mode": "ipv6_address_mode",
        "segment": "segment_id",
    }

    properties_schema = {
        "network_id": PropertySchema(
            _STRING,
            "The network of the subnet (use network).",
            constraints=custom("neutron.network"),
            support_status=hidden("network"),
        ),
        "network": PropertySchema(
            _STRING,
            "The network (name or id) the subnet belongs to.",
            required=True,
            constraints=custom("neutron.network"),
        ),
        "subnetpool": PropertySchema(
            _STRING,
            "The subnet pool (id) to allocate the range from.",
            constraints=custom("neutron.subnetpool"),
        ),
        "prefixlen": PropertySchema(
            _INTEGER,
            "Prefix length of a range taken from the subnet pool.",
            constraints=(Range(min=0),),
        ),
        "cidr": PropertySchema(
            _STRING, "The range of the subnet, in CIDR notation.", constraints=custom("net_cidr")
        ),
        "value_specs": value_specs_schema(),
        "name": name_schema("subnet"),
        "ip_version": PropertySchema(
            _INTEGER, "The IP version, 4 or 6.", default=4, constraints=(AllowedValues((4, 6)),)
        ),
        "dns_nameservers": PropertySchema(
            _LIST, "DNS name servers of the subnet.", default=[], update_allowed=True
        ),
        "gateway_ip": PropertySchema(
            _STRING,
            'The gateway IP: an address, "" or ~ for none, auto for the first address.',
            update_allowed=True,
        ),
        "enable_dhcp": PropertySchema(
            _BOOLEAN, "Whether DHCP serves the subnet.", default=True, update_allowed=True
        ),
        "allocation_pools": PropertySchema(
            _LIST,
            "Ranges of addresses Neutron hands out.",
            update_allowed=True,
            schema={
                "start": PropertySchema(
                    _STRING,
                    "First address of the range.",
                    required=True,
                    constraints=custom("ip_addr"),
                ),
                "end": PropertySchema(
                    _STRING,
                    "Last address of the range.",
                    required=True,
                    constraints=custom("ip_addr"),
                ),
            },
        ),
        "tenant_id": tenant_id_schema("subnet"),
        "host_routes": PropertySchema(
            _LIST,
            "Routes handed to the subnet's hosts.",
            update_allowed=True,
            schema={
                "destination": PropertySchema(
                    _STRING,
                    "The destination network (CIDR).",
                    required=True,
                    constraints=custom("net_cidr"),
                ),
                "nexthop": PropertySchema(
                    _STRING,
                    "The next hop address.",
                    required=True,
                    constraints=custom("ip_addr"),
                ),
            },
        ),
        "ipv6_ra_mode": _ipv6_mode("router advertisement mode"),
        "ipv6_address_mode": _ipv6_mode("address mode"),
        "segment": PropertySchema(
            _STRING,
            "The segment (id) of the subnet; settable on update only while unset.",
            update_allowed=True,
            constraints=custom("neutron.segment"),
        ),
        "tags": tags_schema("subnet"),
    }
    attributes_schema = {
        "name": AttributeSchema("The name of the subnet.", type=_STRING),
        "network_id": AttributeSchema("The network of the subnet.", type=_STRING),
        "tenant_id": AttributeSchema("The project owning the subnet.", type=_STRING),
        "allocation_pools": AttributeSchema(
            "Ranges of addresses handed out ([{start, end}]).", type=_LIST
        ),
        "gateway_ip": AttributeSchema("The gateway IP of the subnet.", type=_STRING),
        "host_routes": AttributeSchema(
            "Routes handed to hosts ([{destination, nexthop}]).", type=_LIST
        ),
        "ip_version": AttributeSchema("The IP version.", type=_INTEGER),
        "cidr": AttributeSchema("The range of the subnet (CIDR).", type=_STRING),
        "dns_nameservers": AttributeSchema("DNS name servers of the subnet.", type=_LIST),
        "enable_dhcp": AttributeSchema("Whether DHCP serves the subnet.", type=_BOOLEAN),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)

        def fail(message: str, *path: str) -> None:
            errors.append(StackValidationFailed(message, path=path))

        cidr, pool = properties.get("cidr"), properties.get("subnetpool")
        if cidr is not None and pool is not None:
            fail("Cannot define the following properties at the same time: subnetpool, cidr")
        if cidr is None and pool is None:
            fail("At least one of the following properties must be specified: subnetpool, cidr")
        if properties.get("prefixlen") is not None and pool is None:
            fail("Property prefixlen may only be specified with subnetpool", "prefixlen")
        ra, address = properties.get("ipv6_ra_mode"), properties.get("ipv6_address_mode")
        if properties.get("ip_version") == 4 and (ra is not None or address is not None):
            fail("ipv6_ra_mode and ipv6_address_mode are not supported for ipv4.", "ip_version")
        if ra is not None and address is not None and ra != address:
            fail(
                "When both ipv6_ra_mode and ipv6_address_mode are set, they must be equal.",
                "ipv6_ra_mode",
            )
        message = gateway_error(properties.get("gateway_ip"))
        if message:
            fail(message, "gateway_ip")
        return errors

    def handle_create(self) -> Cookie:
        self.check_valid()
        props = self.properties
        body = self.base_body()
        body["network_id"] = self.network.find_network(self.prop("network")).id
        if props.get("subnetpool") is not None:
            body["subnetpool_id"] = self.network.find_subnetpool(props["subnetpool"]).id
            if props.get("prefixlen") is not None:
                body["prefixlen"] = props["prefixlen"]
        else:
            body["cidr"] = props["cidr"]
        gateway = props.get("gateway_ip")
        if gateway in NO_GATEWAY:
            body["gateway_ip"] = None
        elif gateway is not None and gateway != AUTO_GATEWAY:
            body["gateway_ip"] = gateway
        for key in ("allocation_pools", "host_routes"):
            if props.get(key) is not None:
                body[key] = [dict(item) for item in props[key]]
        created = self.network.create_subnet(body)
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, props.get("tags"))
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        subnet_id = self.ctx.physical_id or ""
        body = self.base_update_body(changed)
        body.pop("segment_id", None)  # set below, only while the subnet has none
        if "gateway_ip" in changed:
            gateway = changed["gateway_ip"]
            if gateway == AUTO_GATEWAY:
                raise ResourceFailure("gateway_ip: auto is not allowed on update")
            body["gateway_ip"] = None if gateway in (None, *NO_GATEWAY) else gateway
        for key in ("allocation_pools", "host_routes"):
            if key in changed:
                body[key] = [dict(item) for item in changed[key] or []]
        if "dns_nameservers" in changed:
            body["dns_nameservers"] = list(changed["dns_nameservers"] or [])
        if changed.get("segment") is not None:
            if self.network.get_subnet(subnet_id).segment_id is not None:
                raise ResourceFailure(
                    "Updating the segment of a subnet is only allowed while it has none"
                )
            body["segment_id"] = changed["segment"]
        if body:
            self.network.update_subnet(subnet_id, body)
        if "tags" in changed:
            self.apply_tags(subnet_id, changed["tags"])
        return None
