"""Security group rule validation and normalisation for the simulated Neutron.

Pure functions (reference section 4.6): port ranges may arrive as strings and become
integers; ranges need a protocol that has ports (tcp, udp, sctp, dccp, udplite) or ICMP
type/code (0-255); protocols are names of the accepted list or numbers 0-255;
``remote_ip_prefix`` must match the ethertype, and its network with host bits cleared is
``normalized_cidr``; both remotes at once is an error. :func:`rule_identity` is what two
rules must share to be duplicates (``tcp`` and ``6`` are the same protocol).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kiln.cloud.sandbox.network.ipam import IpamError

#: protocol names Neutron accepts, with their IANA numbers
PROTOCOL_NUMBERS = {
    "ah": 51,
    "dccp": 33,
    "egp": 8,
    "esp": 50,
    "gre": 47,
    "icmp": 1,
    "icmpv6": 58,
    "igmp": 2,
    "ipip": 4,
    "ipv6-encap": 41,
    "ipv6-frag": 44,
    "ipv6-icmp": 58,
    "ipv6-nonxt": 59,
    "ipv6-opts": 60,
    "ipv6-route": 43,
    "ospf": 89,
    "pgm": 113,
    "rsvp": 46,
    "sctp": 132,
    "tcp": 6,
    "udp": 17,
    "udplite": 136,
    "vrrp": 112,
}
_PORT_PROTOCOLS = frozenset({6, 17, 33, 132, 136})
_ICMP_PROTOCOLS = frozenset({1, 58})

#: the fields of a rule a client may send
RULE_FIELDS = frozenset(
    {
        "security_group_id",
        "direction",
        "ethertype",
        "protocol",
        "port_range_min",
        "port_range_max",
        "remote_ip_prefix",
        "remote_group_id",
        "remote_address_group_id",
        "description",
        "project_id",
        "tenant_id",
    }
)


def _protocol(raw: Any) -> tuple[str | None, int | None]:
    """The protocol as stored (name or number string) and its number (None: any)."""
    if raw is None or (isinstance(raw, str) and raw.lower() in ("", "any")):
        return None, None
    text = str(raw).lower()
    if text in PROTOCOL_NUMBERS:
        return text, PROTOCOL_NUMBERS[text]
    if text.isdigit() and 0 <= int(text) <= 255:
        return text, int(text)
    raise IpamError(
        f"Security group rule protocol {raw} not supported. Only protocol values "
        f"{sorted(PROTOCOL_NUMBERS)} and integer representations [0 to 255] are supported.",
        kind="SecurityGroupRuleInvalidProtocol",
    )


def _port(raw: Any, field: str) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        value = int(str(raw))
    except ValueError as exc:
        raise IpamError(f"Invalid value for {field}: {raw!r} is not an integer.") from exc
    return value


def _check_ports(number: int | None, low: int | None, high: int | None) -> None:
    if low is None and high is None:
        return
    if number is None:
        raise IpamError(
            "Must also specify protocol if port range is given.",
            kind="SecurityGroupProtocolRequiredWithPorts",
        )
    if number in _PORT_PROTOCOLS:
        if low is None or high is None:
            raise IpamError("Both port_range_min and port_range_max must be given.")
        for value in (low, high):
            if not 0 <= value <= 65535:
                raise IpamError(
                    f"Invalid value for port {value}.", kind="SecurityGroupInvalidPortValue"
                )
        if low > high:
            raise IpamError(
                "For TCP/UDP protocols, port_range_min must be <= port_range_max",
                kind="SecurityGroupInvalidPortRange",
            )
    elif number in _ICMP_PROTOCOLS:
        if low is None and high is not None:
            raise IpamError(
                f"ICMP code (port-range-max) {high} is provided but ICMP type "
                "(port-range-min) is missing.",
                kind="SecurityGroupMissingIcmpType",
            )
        for field, icmp_value in (("type", low), ("code", high)):
            if icmp_value is not None and not 0 <= icmp_value <= 255:
                raise IpamError(
                    f"Invalid value for ICMP {field} {icmp_value}.",
                    kind="SecurityGroupInvalidIcmpValue",
                )
    else:
        raise IpamError(
            "Port ranges are only valid for TCP, UDP, SCTP, DCCP, UDPLite and ICMP.",
            kind="SecurityGroupInvalidProtocolForPortRange",
        )


def normalise_rule(body: Mapping[str, Any]) -> dict[str, Any]:
    """The stored fields of a rule (without id/project/timestamps); IpamError when invalid."""
    direction = body.get("direction")
    if direction not in ("ingress", "egress"):
        raise IpamError(f"Invalid input for direction. Reason: {direction!r} is not valid.")
    ethertype = body.get("ethertype") or "IPv4"
    if ethertype not in ("IPv4", "IPv6"):
        raise IpamError(f"Invalid input for ethertype. Reason: {ethertype!r} is not valid.")
    protocol, number = _protocol(body.get("protocol"))
    low = _port(body.get("port_range_min"), "port_range_min")
    high = _port(body.get("port_range_max"), "port_range_max")
    _check_ports(number, low, high)
    prefix = body.get("remote_ip_prefix")
    normalized: str | None = None
    if prefix is not None:
        try:
            network = ipaddress.ip_network(str(prefix), strict=False)
        except ValueError as exc:
            raise IpamError(f"'{prefix}' is not a valid IP prefix.") from exc
        if f"IPv{network.version}" != ethertype:
            raise IpamError(
                f"Conflicting value ethertype {ethertype} for CIDR {prefix}",
                kind="SecurityGroupConflictingEtherTypeAndIPPrefix",
            )
        if "/" not in str(prefix):
            prefix = f"{prefix}/{network.max_prefixlen}"
        normalized = str(network)
    remote_group = body.get("remote_group_id")
    remote_address_group = body.get("remote_address_group_id")
    if sum(x is not None for x in (prefix, remote_group, remote_address_group)) > 1:
        raise IpamError(
            "Only one of remote_ip_prefix, remote_group_id and remote_address_group_id "
            "may be given.",
            kind="SecurityGroupRemoteGroupAndRemoteIpPrefix",
        )
    return {
        "direction": direction,
        "ethertype": ethertype,
        "protocol": protocol,
        "port_range_min": low,
        "port_range_max": high,
        "remote_ip_prefix": prefix,
        "normalized_cidr": normalized,
        "remote_group_id": remote_group,
        "remote_address_group_id": remote_address_group,
        "description": str(body.get("description") or ""),
    }


def rule_identity(rule: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two rules of a group the same rule."""
    _name, number = _protocol(rule.get("protocol"))
    return (
        rule.get("security_group_id"),
        rule.get("direction"),
        rule.get("ethertype"),
        number,
        rule.get("port_range_min"),
        rule.get("port_range_max"),
        rule.get("normalized_cidr"),
        rule.get("remote_group_id"),
        rule.get("remote_address_group_id"),
    )
