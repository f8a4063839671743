"""Octavia's input rules: allowed values, ranges and field checks, as pure functions.

Kept apart from the model so the per-kind modules read as "what happens" and the
validation reads as a table (reference simulated-cloud-api.md section 7).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest

SERVICE = "load_balancer"
PENDING = frozenset({"PENDING_CREATE", "PENDING_UPDATE", "PENDING_DELETE"})

LISTENER_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS", "UDP", "SCTP", "PROMETHEUS")
POOL_PROTOCOLS = ("HTTP", "HTTPS", "TCP", "PROXY", "PROXYV2", "UDP", "SCTP")
LB_ALGORITHMS = ("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT")
PERSISTENCE_TYPES = ("SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE")
MONITOR_TYPES = ("PING", "TCP", "HTTP", "HTTPS", "TLS-HELLO", "UDP-CONNECT", "SCTP")
HTTP_MONITOR_TYPES = ("HTTP", "HTTPS")
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH")

#: which pool protocols a listener of each protocol may send traffic to (Octavia's table)
LISTENER_POOL_PROTOCOLS: Mapping[str, frozenset[str]] = {
    "HTTP": frozenset({"HTTP", "PROXY", "PROXYV2"}),
    "HTTPS": frozenset({"HTTPS", "PROXY", "PROXYV2", "TCP"}),
    "TCP": frozenset({"HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP"}),
    "TERMINATED_HTTPS": frozenset({"HTTP", "PROXY", "PROXYV2"}),
    "UDP": frozenset({"UDP"}),
    "SCTP": frozenset({"SCTP"}),
    "PROMETHEUS": frozenset(),
}

#: listeners on one port clash only within one transport family
_DATAGRAM = frozenset({"UDP", "SCTP"})

#: fields every object shows (and accepts where noted per kind)
COMMON_FIELDS = ("name", "description", "admin_state_up", "tags")

LABELS = {
    "loadbalancer": "Load Balancer",
    "listener": "Listener",
    "pool": "Pool",
    "member": "Member",
    "healthmonitor": "Health Monitor",
}


def invalid(field: str, value: Any, why: str) -> BadRequest:
    return BadRequest(f"Invalid input for field/attribute {field}. Value: '{value}'. {why}")


def check_fields(body: Mapping[str, Any], allowed: Collection[str]) -> None:
    """400 for a field the operation does not take (a typo, or not updatable)."""
    for key in body:
        if key not in allowed:
            raise invalid(key, body[key], "Unknown or read-only attribute.")


def required(body: Mapping[str, Any], field: str) -> Any:
    value = body.get(field)
    if value is None:
        raise invalid(field, None, "Mandatory field missing.")
    return value


def choice(body: Mapping[str, Any], field: str, allowed: Collection[str]) -> str | None:
    """The value when it is one of ``allowed`` (None when absent); 400 otherwise."""
    value = body.get(field)
    if value is not None and value not in allowed:
        raise invalid(field, value, f"Value should be one of: {', '.join(allowed)}.")
    return value


def integer(
    body: Mapping[str, Any], field: str, low: int | None = None, high: int | None = None
) -> int | None:
    """An integer within ``low..high`` (None when absent); 400 otherwise."""
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(field, value, "Value should be an integer.")
    if (low is not None and value < low) or (high is not None and value > high):
        raise invalid(field, value, f"Value should be between {low} and {high}.")
    return value


def boolean(body: Mapping[str, Any], field: str) -> bool | None:
    value = body.get(field)
    if value is not None and not isinstance(value, bool):
        raise invalid(field, value, "Value should be a boolean.")
    return value


def string_list(body: Mapping[str, Any], field: str) -> list[str] | None:
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(field, value, "Value should be a list of strings.")
    return list(value)


def ip_address(body: Mapping[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is None:
        return None
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise invalid(field, value, "Value should be an IP address.") from None


def common(body: Mapping[str, Any]) -> dict[str, Any]:
    """The common fields a create or update sets, checked."""
    boolean(body, "admin_state_up")
    string_list(body, "tags")
    return {key: body[key] for key in COMMON_FIELDS if key in body}


def ports_clash(protocol_a: str, protocol_b: str) -> bool:
    """Two listeners on one port clash when they use the same transport family."""
    return (protocol_a in _DATAGRAM) == (protocol_b in _DATAGRAM)


def persistence(value: Any) -> dict[str, Any] | None:
    """A checked ``session_persistence`` (APP_COOKIE needs a cookie name, others forbid it)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise invalid("session_persistence", value, "Value should be an object.")
    kind = required(value, "type")
    choice(value, "type", PERSISTENCE_TYPES)
    cookie = value.get("cookie_name")
    if kind == "APP_COOKIE" and not cookie:
        raise BadRequest("Validation failure: session_persistence APP_COOKIE needs a cookie_name.")
    if kind != "APP_COOKIE" and cookie:
        raise BadRequest(f"Validation failure: session_persistence {kind} takes no cookie_name.")
    return {
        "type": kind,
        "cookie_name": cookie,
        "persistence_timeout": value.get("persistence_timeout"),
        "persistence_granularity": value.get("persistence_granularity"),
    }


def pool_fits_listener(listener_protocol: str, pool_protocol: str) -> None:
    if pool_protocol not in LISTENER_POOL_PROTOCOLS.get(listener_protocol, frozenset()):
        raise BadRequest(
            f"The pool protocol '{pool_protocol}' is invalid while the listener protocol "
            f"is '{listener_protocol}'."
        )
