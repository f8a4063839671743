"""Every OS::Neutron::* schema against the reference tables (resource-types.md section 2)."""

from __future__ import annotations

from typing import Any

import pytest
from neutron_schema_support import NO_DEFAULT, allowed, custom, in_range, rows

from kiln.plugin import PluginRegistry, Resource
from kiln.resources import neutron
from kiln.resources.neutron._rules import PROTOCOL
from kiln.resources.neutron.floating_ip import FloatingIP
from kiln.resources.neutron.floating_ip_association import FloatingIPAssociation
from kiln.resources.neutron.net import Net
from kiln.resources.neutron.port import Port
from kiln.resources.neutron.router import Router
from kiln.resources.neutron.router_interface import RouterInterface
from kiln.resources.neutron.security_group import SecurityGroup
from kiln.resources.neutron.security_group_rule import SecurityGroupRule
from kiln.resources.neutron.subnet import Subnet

N = NO_DEFAULT
S, INT, B, L, M = "string", "integer", "boolean", "list", "map"
PROTO = [PROTOCOL.to_dict()]
PORT = in_range(0, 65535)
IPV6 = allowed("dhcpv6-stateful", "dhcpv6-stateless", "slaac")

REFERENCE: dict[type[Resource], dict[str, tuple[str, bool, Any, bool, list[Any]]]] = {
    Net: {
        "name": (S, False, N, True, []),
        "value_specs": (M, False, {}, True, []),
        "admin_state_up": (B, False, True, True, []),
        "tenant_id": (S, False, N, False, []),
        "shared": (B, False, False, True, []),
        "dhcp_agent_ids": (L, False, N, True, []),
        "port_security_enabled": (B, False, N, True, []),
        "qos_policy": (S, False, N, True, custom("neutron.qos_policy")),
        "dns_domain": (S, False, N, True, custom("dns_domain")),
        "availability_zone_hints": (L, False, N, False, []),
        "tags": (L, False, N, True, []),
    },
    Subnet: {
        "network_id": (S, False, N, False, custom("neutron.network")),
        "network": (S, True, N, False, custom("neutron.network")),
        "subnetpool": (S, False, N, False, custom("neutron.subnetpool")),
        "prefixlen": (INT, False, N, False, in_range(0, None)),
        "cidr": (S, False, N, False, custom("net_cidr")),
        "value_specs": (M, False, {}, True, []),
        "name": (S, False, N, True, []),
        "ip_version": (INT, False, 4, False, allowed(4, 6)),
        "dns_nameservers": (L, False, [], True, []),
        "gateway_ip": (S, False, N, True, []),
        "enable_dhcp": (B, False, True, True, []),
        "allocation_pools": (L, False, N, True, []),
        "allocation_pools[].start": (S, True, N, False, custom("ip_addr")),
        "allocation_pools[].end": (S, True, N, False, custom("ip_addr")),
        "tenant_id": (S, False, N, False, []),
        "host_routes": (L, False, N, True, []),
        "host_routes[].destination": (S, True, N, False, custom("net_cidr")),
        "host_routes[].nexthop": (S, True, N, False, custom("ip_addr")),
        "ipv6_ra_mode": (S, False, N, False, IPV6),
        "ipv6_address_mode": (S, False, N, False, IPV6),
        "segment": (S, False, N, True, custom("neutron.segment")),
        "tags": (L, False, N, True, []),
    },
    Router: {
        "name": (S, False, N, True, []),
        "external_gateway_info": (M, False, N, True, []),
        "external_gateway_info.network": (S, True, N, True, []),
        "external_gateway_info.enable_snat": (B, False, N, True, []),
        "external_gateway_info.external_fixed_ips": (L, False, N, True, []),
        "external_gateway_info.external_fixed_ips[].ip_address": (
            S, False, N, False, custom("ip_addr"),
        ),
        "external_gateway_info.external_fixed_ips[].subnet": (
            S, False, N, False, custom("neutron.subnet"),
        ),
        "value_specs": (M, False, {}, True, []),
        "admin_state_up": (B, False, True, True, []),
        "l3_agent_id": (S, False, N, True, []),
        "l3_agent_ids": (L, False, N, True, []),
        "distributed": (B, False, N, False, []),
        "ha": (B, False, N, False, []),
        "availability_zone_hints": (L, False, N, True, []),
        "tags": (L, False, N, True, []),
        "tenant_id": (S, False, N, False, []),
    },
    RouterInterface: {
        "router": (S, True, N, False, custom("neutron.router")),
        "router_id": (S, False, N, False, custom("neutron.router")),
        "subnet_id": (S, False, N, False, custom("neutron.subnet")),
        "subnet": (S, False, N, False, custom("neutron.subnet")),
        "port_id": (S, False, N, False, custom("neutron.port")),
        "port": (S, False, N, False, custom("neutron.port")),
    },
    FloatingIP: {
        "floating_network_id": (S, False, N, False, custom("neutron.network")),
        "floating_network": (S, True, N, False, custom("neutron.network")),
        "floating_subnet": (S, False, N, False, custom("neutron.subnet")),
        "value_specs": (M, False, {}, False, []),
        "port_id": (S, False, N, True, custom("neutron.port")),
        "fixed_ip_address": (S, False, N, True, custom("ip_addr")),
        "floating_ip_address": (S, False, N, False, custom("ip_addr")),
        "dns_name": (S, False, N, True, custom("rel_dns_name")),
        "dns_domain": (S, False, N, True, custom("dns_domain")),
    },
    FloatingIPAssociation: {
        "floatingip_id": (S, True, N, True, []),
        "port_id": (S, True, N, True, custom("neutron.port")),
        "fixed_ip_address": (S, False, N, True, custom("ip_addr")),
    },
    Port: {
        "name": (S, False, N, True, []),
        "network_id": (S, False, N, False, custom("neutron.network")),
        "network": (S, True, N, False, custom("neutron.network")),
        "device_id": (S, False, "", True, []),
        "device_owner": (S, False, "", True, []),
        "fixed_ips": (L, False, N, True, []),
        "fixed_ips[].subnet_id": (S, False, N, False, custom("neutron.subnet")),
        "fixed_ips[].subnet": (S, False, N, False, custom("neutron.subnet")),
        "fixed_ips[].ip_address": (S, False, N, False, custom("ip_addr")),
        "security_groups": (L, False, N, True, []),
        "replacement_policy": (S, False, "AUTO", True, allowed("REPLACE_ALWAYS", "AUTO")),
        "dns_name": (S, False, N, True, custom("dns_name")),
        "tags": (L, False, N, True, []),
        "value_specs": (M, False, {}, True, []),
        "admin_state_up": (B, False, True, True, []),
        "mac_address": (S, False, N, False, custom("mac_addr")),
        "allowed_address_pairs": (L, False, N, True, []),
        "allowed_address_pairs[].mac_address": (S, False, N, False, custom("mac_addr")),
        "allowed_address_pairs[].ip_address": (S, True, N, False, custom("ip_or_cidr")),
        "binding:vnic_type": (
            S, False, "normal", True,
            allowed(
                "normal", "direct", "macvtap", "direct-physical", "baremetal",
                "virtio-forwarder", "smart-nic",
            ),
        ),
        "port_security_enabled": (B, False, N, True, []),
        "qos_policy": (S, False, N, True, custom("neutron.qos_policy")),
        "propagate_uplink_status": (B, False, N, True, []),
        "no_fixed_ips": (B, False, False, True, []),
    },
    SecurityGroup: {
        "name": (S, False, N, True, []),
        "description": (S, False, N, True, []),
        "rules": (L, False, [], True, []),
        "rules[].direction": (S, False, "ingress", False, allowed("ingress", "egress")),
        "rules[].ethertype": (S, False, "IPv4", False, allowed("IPv4", "IPv6")),
        "rules[].port_range_min": (INT, False, N, False, PORT),
        "rules[].port_range_max": (INT, False, N, False, PORT),
        "rules[].protocol": (S, False, N, False, PROTO),
        "rules[].remote_mode": (
            S, False, "remote_ip_prefix", False, allowed("remote_ip_prefix", "remote_group_id"),
        ),
        "rules[].remote_group_id": (S, False, N, False, custom("neutron.security_group")),
        "rules[].remote_ip_prefix": (S, False, N, False, custom("net_cidr")),
        "rules[].description": (S, False, N, False, []),
        "stateful": (B, False, N, True, []),
    },
    SecurityGroupRule: {
        "security_group": (S, True, N, False, custom("neutron.security_group")),
        "description": (S, False, N, False, []),
        "direction": (S, False, "ingress", False, allowed("ingress", "egress")),
        "ethertype": (S, False, "IPv4", False, allowed("IPv4", "IPv6")),
        "port_range_min": (INT, False, N, False, PORT),
        "port_range_max": (INT, False, N, False, PORT),
        "protocol": (S, False, "tcp", False, PROTO),
        "remote_group": (S, False, N, False, custom("neutron.security_group")),
        "remote_ip_prefix": (S, False, N, False, custom("net_cidr")),
    },
}  # fmt: skip

ATTRIBUTES: dict[type[Resource], list[str]] = {
    Net: [
        "status", "name", "subnets", "admin_state_up", "tenant_id", "port_security_enabled",
        "mtu", "qos_policy_id", "l2_adjacency", "segments",
    ],
    Subnet: [
        "name", "network_id", "tenant_id", "allocation_pools", "gateway_ip", "host_routes",
        "ip_version", "cidr", "dns_nameservers", "enable_dhcp",
    ],
    Router: ["status", "external_gateway_info", "name", "admin_state_up", "tenant_id"],
    RouterInterface: [],
    FloatingIP: [
        "router_id", "tenant_id", "floating_network_id", "fixed_ip_address",
        "floating_ip_address", "port_id",
    ],
    FloatingIPAssociation: [],
    Port: [
        "admin_state_up", "device_id", "device_owner", "fixed_ips", "mac_address", "name",
        "network_id", "security_groups", "status", "tenant_id", "allowed_address_pairs",
        "subnets", "port_security_enabled", "qos_policy_id", "dns_assignment", "network",
        "propagate_uplink_status",
    ],
    SecurityGroup: [],
    SecurityGroupRule: [],
}  # fmt: skip

HIDDEN: dict[type[Resource], list[str]] = {
    Subnet: ["network_id"],
    Router: ["l3_agent_id"],
    RouterInterface: ["router_id", "subnet_id", "port_id"],
    FloatingIP: ["floating_network_id"],
    Port: ["network_id", "replacement_policy"],
}


@pytest.mark.parametrize("plugin", list(REFERENCE), ids=lambda p: p.type_name)
def test_properties_match_the_reference(plugin: type[Resource]) -> None:
    assert rows(plugin.properties_schema) == REFERENCE[plugin]


@pytest.mark.parametrize("plugin", list(REFERENCE), ids=lambda p: p.type_name)
def test_attributes_match_the_reference_and_everything_is_described(
    plugin: type[Resource],
) -> None:
    assert list(plugin.attributes_schema) == ATTRIBUTES[plugin]
    assert all(a.description for a in plugin.attributes_schema.values())
    assert all(description for *_, description in _descriptions(plugin.properties_schema))


def _descriptions(schemas: Any) -> list[tuple[str, str]]:
    out = []
    for name, schema in schemas.items():
        out.append((name, schema.description))
        nested = schema.item_schema.key_schemas if schema.item_schema else schema.key_schemas
        if nested:
            out += _descriptions(nested)
    return out


@pytest.mark.parametrize("plugin", list(HIDDEN), ids=lambda p: p.type_name)
def test_old_names_are_hidden(plugin: type[Resource]) -> None:
    hidden = sorted(
        n for n, s in plugin.properties_schema.items() if s.support_status.status == "HIDDEN"
    )
    assert hidden == sorted(HIDDEN[plugin])


def test_the_package_registers_every_type() -> None:
    registry = PluginRegistry()
    registry.register_package(neutron)
    assert registry.names() == sorted(p.type_name for p in REFERENCE)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("tcp", True), ("icmpv6", True), ("udplite", True), ("0", True), ("255", True),
     ("256", False), ("01", False), ("tcp6", False)],
)  # fmt: skip
def test_protocol_is_a_known_name_or_a_number_up_to_255(value: str, ok: bool) -> None:
    assert (PROTOCOL.check(value) is None) is ok
