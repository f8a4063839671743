"""The cross-property checks of the OS::Neutron::* types, and hidden-alias translation."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed
from kiln.plugin import Resource
from kiln.resources.neutron.floating_ip import FloatingIP
from kiln.resources.neutron.net import Net
from kiln.resources.neutron.port import Port
from kiln.resources.neutron.router import Router
from kiln.resources.neutron.router_interface import RouterInterface
from kiln.resources.neutron.security_group import SecurityGroup
from kiln.resources.neutron.security_group_rule import SecurityGroupRule
from kiln.resources.neutron.subnet import Subnet
from kiln.testing.plugin_context import fake_resource, typed_properties


def problems(plugin: type[Resource], properties: dict[str, Any]) -> list[str]:
    return [e.message for e in plugin.validate(typed_properties(plugin, properties))]


SUBNET = {"network": "net", "cidr": "10.0.0.0/24"}


@pytest.mark.parametrize("key", ["shared", "tenant_id", "admin_state_up"])
def test_value_specs_may_not_hold_shared_tenant_id_or_a_property(key: str) -> None:
    assert problems(Net, {"value_specs": {key: True}}) == [f"{key} not allowed in value_specs"]
    assert problems(Net, {"value_specs": {"mtu": 1400}}) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"subnetpool": "pool"}, "at the same time: subnetpool, cidr"),
        ({"cidr": None}, "must be specified: subnetpool, cidr"),
        ({"prefixlen": 26}, "prefixlen may only be specified with subnetpool"),
        ({"ipv6_ra_mode": "slaac"}, "not supported for ipv4"),
        ({"gateway_ip": "10.0.0.300"}, "10.0.0.300 is not a valid IP address"),
    ],
)
def test_subnet_checks(extra: dict[str, Any], message: str) -> None:
    (found,) = problems(Subnet, {**SUBNET, **extra})
    assert message in found


def test_subnet_ipv6_modes_must_agree_and_gateway_accepts_none_and_auto() -> None:
    v6 = {"network": "n", "cidr": "fd00::/64", "ip_version": 6}
    assert problems(Subnet, {**v6, "ipv6_ra_mode": "slaac", "ipv6_address_mode": "slaac"}) == []
    (found,) = problems(
        Subnet, {**v6, "ipv6_ra_mode": "slaac", "ipv6_address_mode": "dhcpv6-stateful"}
    )
    assert "must be equal" in found
    for gateway in ("", "~", "auto", "10.0.0.1"):
        assert problems(Subnet, {**SUBNET, "gateway_ip": gateway}) == []
    assert problems(Subnet, {"network": "n", "subnetpool": "p", "prefixlen": 26}) == []


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"l3_agent_id": "a", "l3_agent_ids": ["b"]}, "l3_agent_id, l3_agent_ids"),
        ({"distributed": True, "ha": True}, "distributed can not be used with ha"),
        ({"distributed": True, "l3_agent_ids": ["a"]}, "distributed can not be used with l3"),
        ({"l3_agent_ids": ["a", "b"]}, "Non HA routers can only have one L3 agent."),
    ],
)
def test_router_checks(properties: dict[str, Any], message: str) -> None:
    assert any(message in p for p in problems(Router, properties))
    assert problems(Router, {"ha": True, "l3_agent_ids": ["a", "b"]}) == []


def test_router_interface_needs_exactly_one_of_subnet_and_port() -> None:
    exactly_one = "Exactly one of the following properties must be specified: subnet, port"
    assert problems(RouterInterface, {"router": "r"}) == [exactly_one]
    assert problems(RouterInterface, {"router": "r", "subnet": "s", "port": "p"}) == [exactly_one]
    assert problems(RouterInterface, {"router": "r", "subnet_id": "s"}) == []
    assert problems(RouterInterface, {"router": "r", "port_id": "p"}) == []


def test_an_alias_and_its_new_name_cannot_both_be_given() -> None:
    assert problems(RouterInterface, {"router": "r", "subnet": "s", "subnet_id": "s"}) == [
        "Cannot define the following properties at the same time: subnet_id, subnet"
    ]


def test_floating_ip_fixed_address_needs_a_port() -> None:
    assert problems(FloatingIP, {"floating_network": "public", "fixed_ip_address": "10.0.0.5"})
    assert not problems(
        FloatingIP,
        {"floating_network": "public", "fixed_ip_address": "10.0.0.5", "port_id": "p"},
    )


def test_port_fixed_ips_and_no_fixed_ips_exclude_each_other() -> None:
    both = {"network": "n", "fixed_ips": [{"ip_address": "10.0.0.5"}], "no_fixed_ips": True}
    assert problems(Port, both) == [
        "Cannot define the following properties at the same time: fixed_ips, no_fixed_ips"
    ]
    assert problems(Port, {"network": "n", "fixed_ips": [], "no_fixed_ips": True}) == []


def test_security_group_name_default_and_reversed_ports() -> None:
    assert problems(SecurityGroup, {"name": "default"}) == [
        'Security groups cannot be assigned the name "default".'
    ]
    reversed_tcp = {"protocol": "tcp", "port_range_min": 90, "port_range_max": 80}
    assert problems(SecurityGroup, {"rules": [reversed_tcp]})
    icmp = {"protocol": "icmp", "port_range_min": 8, "port_range_max": 0}
    assert problems(SecurityGroup, {"rules": [icmp]}) == []


def test_security_group_rule_remotes_exclude_each_other_and_ports_are_ordered() -> None:
    base = {"security_group": "sg"}
    assert problems(SecurityGroupRule, {**base, "remote_group": "g", "remote_ip_prefix": "::/0"})
    assert problems(SecurityGroupRule, {**base, "port_range_min": 2, "port_range_max": 1})
    assert not problems(
        SecurityGroupRule,
        {**base, "protocol": "icmp", "port_range_min": 8, "port_range_max": 0},
    )


def test_translate_moves_hidden_names_to_new_ones() -> None:
    raw = {"network_id": "n", "fixed_ips": [{"subnet_id": "s", "ip_address": "10.0.0.5"}]}
    assert Port.translate(raw) == {
        "network": "n",
        "fixed_ips": [{"subnet": "s", "ip_address": "10.0.0.5"}],
    }
    assert Port.translate({"network": "new", "network_id": "old"}) == {"network": "new"}
    assert RouterInterface.translate({"router_id": "r", "port_id": "p"}) == {
        "router": "r",
        "port": "p",
    }
    assert FloatingIP.translate({"floating_network_id": "public"}) == {"floating_network": "public"}


def test_create_checks_the_properties_before_calling_the_cloud() -> None:
    res, _ = fake_resource(Subnet, {"network": "n", "cidr": "10.0.0.0/24", "subnetpool": "p"})
    with pytest.raises(StackValidationFailed, match="subnetpool, cidr"):
        res.handle_create()  # no network client: nothing was called
