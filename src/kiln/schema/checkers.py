"""Custom-constraint checkers that need no cloud: addresses, DNS names, cron, time, JSON.

Each checker takes a value and returns None when it is valid, or a short reason
("Invalid IP address"); an empty reason means "invalid, nothing more to say".
:class:`~kiln.schema.custom.CustomConstraints` turns the reason into Heat's
message. Rules follow reference resource-types.md section 0.5. Imports: stdlib only.
"""

from __future__ import annotations

import ipaddress
import json
import re
import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Checker = Callable[[Any], str | None]


# -- addresses ------------------------------------------------------------------
def ip_addr(value: Any) -> str | None:
    """A syntactically valid IPv4 or IPv6 address."""
    if not isinstance(value, str):
        return "Invalid IP address"
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return "Invalid IP address"
    return None


def net_cidr(value: Any) -> str | None:
    """A CIDR with an explicit prefix length; IPv4 in canonical form; host bits allowed."""
    if not isinstance(value, str):
        return f"Invalid net cidr {value!r}"
    try:
        interface = ipaddress.ip_interface(value)
    except ValueError as exc:
        return f"Invalid net cidr {exc}"
    canonical = interface.with_prefixlen
    if "/" not in value or (interface.version == 4 and canonical != value):
        return f"'{value}' isn't a recognized IP subnet cidr, '{canonical}' is recommended"
    return None


def ip_or_cidr(value: Any) -> str | None:
    """An IP address, or a CIDR when the value contains a ``/``."""
    if isinstance(value, str) and "/" in value:
        return net_cidr(value)
    if ip_addr(value) is None:
        return None
    return f"'{value}' is not a valid IP address"


_MAC_FORMATS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"[0-9a-f]{1,2}([:-])[0-9a-f]{1,2}(\1[0-9a-f]{1,2}){4}",  # 00:16:3e:01:02:03
        r"[0-9a-f]{1,4}\.[0-9a-f]{1,4}\.[0-9a-f]{1,4}",  # 0016.3e01.0203
        r"[0-9a-f]{6}[:-]?[0-9a-f]{6}",  # 00163e:010203, 00163e010203
    )
)


def mac_addr(value: Any) -> str | None:
    """A 48-bit MAC address in any of the common spellings."""
    if isinstance(value, str) and any(p.fullmatch(value) for p in _MAC_FORMATS):
        return None
    return "Invalid MAC address."


# -- DNS --------------------------------------------------------------------------
FQDN_MAX_LEN = 255
_LABEL = re.compile(r"[A-Za-z0-9-]{1,63}")
_NUMERIC = re.compile(r"[0-9]+")


def _dns_format_error(name: str) -> str | None:
    # A trailing dot marks a fully qualified name and is not a label.
    trimmed = name[:-1] if name.endswith(".") else name
    if len(trimmed) > FQDN_MAX_LEN:
        return f"'{trimmed}' exceeds the {FQDN_MAX_LEN} character FQDN limit"
    labels = trimmed.split(".")
    for label in labels:
        if not label:
            return "Encountered an empty component"
        if label.startswith("-") or label.endswith("-"):
            return f"Name '{label}' must not start or end with a hyphen"
        if not _LABEL.fullmatch(label):
            return (
                f"Name '{label}' must be 1-63 characters long, each of which can only be "
                "alphanumeric or a hyphen"
            )
    if len(labels) > 1 and _NUMERIC.fullmatch(labels[-1]):
        return f"TLD '{labels[-1]}' must not be all numeric"
    return None


def dns_name(value: Any) -> str | None:
    """A relative or fully qualified DNS name; empty is allowed."""
    if not value:
        return None
    if not isinstance(value, str):
        return f"'{value}' not in valid format. Reason: not a string"
    reason = _dns_format_error(value)
    if reason is None:
        return None
    return (
        f"'{value}' not in valid format. Reason: '{value}' not a valid PQDN or FQDN. "
        f"Reason: {reason}"
    )


def rel_dns_name(value: Any) -> str | None:
    """A DNS name that is not fully qualified and leaves room for a domain."""
    if not value:
        return None
    if isinstance(value, str) and value.endswith("."):
        return f"'{value}' is a FQDN. It should be a relative domain name."
    if isinstance(value, str) and len(value) > FQDN_MAX_LEN - 3:
        return (
            f"'{value}' contains '{len(value)}' characters. Adding a domain name will cause "
            f"it to exceed the maximum length of a fully qualified domain name of "
            f"'{FQDN_MAX_LEN}'."
        )
    return dns_name(value)


def dns_domain(value: Any) -> str | None:
    """A fully qualified DNS domain: a valid name ending with a dot."""
    if not value:
        return None
    reason = dns_name(value)
    if reason is not None:
        return reason
    if not str(value).endswith("."):
        return f"'{value}' must end with '.'."
    return None


# -- cron -------------------------------------------------------------------------
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (name, lowest, highest, names whose index + offset is the value)
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {n: i + 1 for i, n in enumerate(_MONTHS)}),
    ("day of week", 0, 7, {n: i for i, n in enumerate(_DAYS)}),
    ("second", 0, 59, {}),
)
_CRON_MACROS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)


def cron_expression(value: Any) -> str | None:
    """A 5-field cron expression, or 6 fields with seconds last (croniter's syntax)."""
    if not value:
        return None
    if not isinstance(value, str):
        return "Invalid CRON expression: not a string"
    text = value.strip().lower()
    if text in _CRON_MACROS:
        return None
    fields = text.split()
    if len(fields) not in (5, 6):
        return f"Invalid CRON expression: expected 5 or 6 fields, found {len(fields)}"
    for spec, field in zip(_CRON_FIELDS, fields):
        reason = _cron_field_error(field, *spec)
        if reason is not None:
            return f"Invalid CRON expression: {reason}"
    return None


def _cron_field_error(
    text: str, name: str, low: int, high: int, names: dict[str, int]
) -> str | None:
    for item in text.split(","):
        if not _cron_item_ok(item, name, low, high, names):
            return f"[{text}] is not acceptable as {name}"
    return None


def _cron_item_ok(item: str, name: str, low: int, high: int, names: dict[str, int]) -> bool:
    if name == "day of month" and item in ("l", "lw"):
        return True
    if name == "day of week":
        special = re.fullmatch(r"(\w+)(#[1-5]|l)", item)
        if special:
            return _cron_value(special.group(1), low, high, names) is not None
    base, slash, step = item.partition("/")
    if slash and not (step.isdigit() and int(step) > 0):
        return False
    if base in ("*", "?"):
        return True
    start, dash, end = base.partition("-")
    if _cron_value(start, low, high, names) is None:
        return False
    return not dash or _cron_value(end, low, high, names) is not None


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    if text in names:
        return names[text]
    if text.isdigit() and low <= int(text) <= high:
        return int(text)
    return None


# -- time and JSON ----------------------------------------------------------------
def timezone(value: Any) -> str | None:
    """A time zone name known to the IANA database (zoneinfo); empty is allowed."""
    if not value:
        return None
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        return f"Invalid timezone: '{value}'"
    return None


def _parse_iso(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a string")
    return datetime.fromisoformat(value.strip())


def iso_8601(value: Any) -> str | None:
    """An ISO 8601 date or date-time."""
    try:
        _parse_iso(value)
    except ValueError:
        return ""
    return None


def expiration(now: Callable[[], datetime]) -> Checker:
    """A checker for ISO 8601 date-times later than ``now()`` (naive times are UTC)."""

    def check(value: Any) -> str | None:
        if not value:
            return None
        try:
            when = _parse_iso(value)
        except ValueError as exc:
            return f"Expiration {value} is invalid: {exc}"
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        if when > now():
            return None
        return f"Expiration {value} is invalid: Expiration time is out of date."

    return check


def json_string(value: Any) -> str | None:
    """A string holding JSON text; empty is allowed."""
    if not value:
        return None
    if not isinstance(value, str):
        return "Invalid JSON string: not a string"
    try:
        json.loads(value)
    except ValueError as exc:
        return f"Invalid JSON string: {exc}"
    except RecursionError:
        return "Invalid JSON string: nested too deeply"
    return None


def _utc_now() -> datetime:
    return datetime.now(UTC)


def builtin_checkers(now: Callable[[], datetime] | None = None) -> dict[str, Checker]:
    """Every service-free checker by constraint name; ``now`` is the clock for ``expiration``."""
    return {
        "ip_addr": ip_addr,
        "net_cidr": net_cidr,
        "ip_or_cidr": ip_or_cidr,
        "mac_addr": mac_addr,
        "dns_name": dns_name,
        "rel_dns_name": rel_dns_name,
        "dns_domain": dns_domain,
        "cron_expression": cron_expression,
        "timezone": timezone,
        "iso_8601": iso_8601,
        "expiration": expiration(now or _utc_now),
        "json_string": json_string,
    }
