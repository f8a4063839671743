"""Security group rules as both OS::Neutron::SecurityGroup and ...SecurityGroupRule use them.

The ``protocol`` constraint (a name Neutron knows or a number 0-255), request bodies
(port ranges sent as strings, as Heat does) and the identity of a rule used to compare
template rules with live ones: (direction, ethertype, protocol, port_range_min,
port_range_max, remote_group_id, remote_ip_prefix), normalised the way Neutron stores
them (integer ports, lower-case protocol, host bits of the prefix cleared).
Imports: kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.network import SecurityGroupRule
from kiln.schema.constraints import AllowedPattern, AllowedValues, Range
from kiln.schema.properties import PropertySchema, PropertyType

PROTOCOL_NAMES = (
    "ah", "dccp", "egp", "esp", "gre", "icmp", "icmpv6", "igmp", "ipv6-encap", "ipv6-frag",
    "ipv6-icmp", "ipv6-nonxt", "ipv6-opts", "ipv6-route", "ospf", "pgm", "rsvp", "sctp",
    "tcp", "udp", "udplite", "vrrp",
)  # fmt: skip
#: a protocol name, or a protocol number 0..255
PROTOCOL = AllowedPattern(
    # longest names first: the first alternative that matches must reach the end
    pattern="("
    + "|".join(sorted(PROTOCOL_NAMES, key=len, reverse=True))
    + r"|25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])",
    description="The protocol must be a number 0-255 or one of: " + ", ".join(PROTOCOL_NAMES),
)
#: protocols whose "ports" are an ICMP type and code (no min <= max rule)
ICMP_PROTOCOLS = ("icmp", "icmpv6", "ipv6-icmp", "1", "58")
DIRECTIONS = AllowedValues(("ingress", "egress"))
ETHERTYPES = AllowedValues(("IPv4", "IPv6"))
PORT = Range(min=0, max=65535)

RuleKey = tuple[Any, ...]


def port_schema(description: str) -> PropertySchema:
    return PropertySchema(PropertyType.INTEGER, description, constraints=(PORT,))


def port_order_error(rule: Mapping[str, Any]) -> str | None:
    """For non-ICMP protocols, ``port_range_max`` must not be below ``port_range_min``."""
    low, high = rule.get("port_range_min"), rule.get("port_range_max")
    if low is None or high is None or str(rule.get("protocol")).lower() in ICMP_PROTOCOLS:
        return None
    if high < low:
        return "The minimum port range must be less than or equal to the maximum port range."
    return None


def rule_body(
    group_id: str,
    *,
    direction: str,
    ethertype: str,
    protocol: str | None,
    port_range_min: int | None,
    port_range_max: int | None,
    remote_group_id: str | None,
    remote_ip_prefix: str | None,
    description: str | None,
) -> dict[str, Any]:
    """A rule's create body, with only what is set (ports as strings)."""
    body: dict[str, Any] = {
        "security_group_id": group_id,
        "direction": direction,
        "ethertype": ethertype,
    }
    optional = {
        "protocol": protocol,
        "port_range_min": None if port_range_min is None else str(port_range_min),
        "port_range_max": None if port_range_max is None else str(port_range_max),
        "remote_group_id": remote_group_id,
        "remote_ip_prefix": remote_ip_prefix,
        "description": description,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def _prefix(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return str(ipaddress.ip_network(str(value), strict=False))
    except ValueError:
        return str(value)


def _port(value: Any) -> int | None:
    return None if value is None else int(value)


def body_key(body: Mapping[str, Any]) -> RuleKey:
    """The identity of a rule given as a create body."""
    protocol = body.get("protocol")
    return (
        body.get("direction"),
        body.get("ethertype"),
        None if protocol is None else str(protocol).lower(),
        _port(body.get("port_range_min")),
        _port(body.get("port_range_max")),
        body.get("remote_group_id"),
        _prefix(body.get("remote_ip_prefix")),
    )


def live_key(rule: SecurityGroupRule) -> RuleKey:
    """The identity of a rule as the cloud shows it."""
    return body_key(rule.raw)


def default_egress_bodies(group_id: str) -> list[dict[str, Any]]:
    """The two rules Neutron gives a new group: all egress traffic, IPv4 and IPv6."""
    return [
        {"security_group_id": group_id, "direction": "egress", "ethertype": ethertype}
        for ethertype in ("IPv4", "IPv6")
    ]
