"""Service-free custom-constraint checkers (resource-types.md section 0.5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kiln.schema import checkers
from kiln.schema.checkers import Checker

VALID: list[tuple[Checker, Any]] = [
    (checkers.ip_addr, "10.0.0.1"),
    (checkers.ip_addr, "2001:db8::1"),
    (checkers.ip_addr, "::"),
    (checkers.net_cidr, "10.0.0.0/24"),
    (checkers.net_cidr, "10.0.0.5/24"),  # host bits are not checked
    (checkers.net_cidr, "2001:db8::/64"),
    (checkers.ip_or_cidr, "192.168.1.1"),
    (checkers.ip_or_cidr, "192.168.1.0/24"),
    (checkers.mac_addr, "fa:16:3e:01:02:03"),
    (checkers.mac_addr, "FA-16-3E-01-02-03"),
    (checkers.mac_addr, "fa16.3e01.0203"),
    (checkers.mac_addr, "fa163e010203"),
    (checkers.dns_name, "www.example.com"),
    (checkers.dns_name, "www.example.com."),
    (checkers.dns_name, "host-1"),
    (checkers.dns_name, ""),
    (checkers.rel_dns_name, "www"),
    (checkers.rel_dns_name, "www.example"),
    (checkers.dns_domain, "example.com."),
    (checkers.dns_domain, ""),
    (checkers.cron_expression, "*/5 * * * *"),
    (checkers.cron_expression, "0 9-17 * * mon-fri"),
    (checkers.cron_expression, "0 0 1,15 jan,jul *"),
    (checkers.cron_expression, "30 2 * * 7"),
    (checkers.cron_expression, "0 0 L * *"),
    (checkers.cron_expression, "0 0 * * 5#2"),
    (checkers.cron_expression, "0 0 * * * 30"),  # seconds last, as croniter
    (checkers.cron_expression, "@daily"),
    (checkers.cron_expression, ""),
    (checkers.timezone, "Europe/Paris"),
    (checkers.timezone, "UTC"),
    (checkers.timezone, ""),
    (checkers.iso_8601, "2024-03-05"),
    (checkers.iso_8601, "2024-03-05T10:15:02Z"),
    (checkers.iso_8601, "2024-03-05T10:15:02.123+02:00"),
    (checkers.json_string, '{"a": [1, 2]}'),
    (checkers.json_string, "[]"),
    (checkers.json_string, ""),
]

INVALID: list[tuple[Checker, Any, str]] = [
    (checkers.ip_addr, "10.0.0.256", "Invalid IP address"),
    (checkers.ip_addr, "", "Invalid IP address"),
    (checkers.ip_addr, 167772161, "Invalid IP address"),
    (checkers.net_cidr, "10.0.0.0", "'10.0.0.0' isn't a recognized IP subnet cidr, '10.0.0.0/32'"),
    (checkers.net_cidr, "10.0.0.0/255.255.255.0", "'10.0.0.0/24' is recommended"),
    (checkers.net_cidr, "10.0.0/24", "Invalid net cidr"),
    (checkers.net_cidr, "10.0.0.0/33", "Invalid net cidr"),
    (checkers.ip_or_cidr, "nope", "'nope' is not a valid IP address"),
    (checkers.ip_or_cidr, "10.0.0.0/99", "Invalid net cidr"),
    (checkers.mac_addr, "fa:16:3e:01:02", "Invalid MAC address."),
    (checkers.mac_addr, "fa:16:3e-01-02-03", "Invalid MAC address."),
    (checkers.mac_addr, "gg:16:3e:01:02:03", "Invalid MAC address."),
    (checkers.dns_name, "-bad.example.com", "Name '-bad' must not start or end with a hyphen"),
    (checkers.dns_name, "a..b", "Encountered an empty component"),
    (checkers.dns_name, "under_score.com", "must be 1-63 characters long"),
    (checkers.dns_name, "a" * 64 + ".com", "must be 1-63 characters long"),
    (checkers.dns_name, "host.123", "TLD '123' must not be all numeric"),
    (checkers.dns_name, ("a" * 60 + ".") * 5, "exceeds the 255 character FQDN limit"),
    (checkers.rel_dns_name, "www.example.com.", "is a FQDN. It should be a relative domain name."),
    (checkers.rel_dns_name, "a" * 253, "contains '253' characters"),
    (checkers.dns_domain, "example.com", "'example.com' must end with '.'."),
    (checkers.dns_domain, "-x.com.", "must not start or end with a hyphen"),
    (checkers.cron_expression, "* * * *", "Invalid CRON expression: expected 5 or 6 fields"),
    (checkers.cron_expression, "60 * * * *", "[60] is not acceptable as minute"),
    (checkers.cron_expression, "* 24 * * *", "as hour"),
    (checkers.cron_expression, "* * 0 * *", "as day of month"),
    (checkers.cron_expression, "* * * 13 *", "as month"),
    (checkers.cron_expression, "* * * * 8", "as day of week"),
    (checkers.cron_expression, "*/0 * * * *", "as minute"),
    (checkers.cron_expression, "* * * foo *", "as month"),
    (checkers.cron_expression, "* * * * * 61", "as second"),
    (checkers.timezone, "Mars/Olympus", "Invalid timezone: 'Mars/Olympus'"),
    (checkers.timezone, "../etc/passwd", "Invalid timezone"),
    (checkers.iso_8601, "yesterday", ""),
    (checkers.iso_8601, "", ""),
    (checkers.json_string, "{a: 1}", "Invalid JSON string: "),
    # evaluator fuzz finding: json.loads raised RecursionError
    (checkers.json_string, "[" * 5000 + "]" * 5000, "Invalid JSON string: nested too deeply"),
]


@pytest.mark.parametrize(("checker", "value"), VALID)
def test_valid(checker: Checker, value: Any) -> None:
    assert checker(value) is None


@pytest.mark.parametrize(("checker", "value", "reason"), INVALID)
def test_invalid(checker: Checker, value: Any, reason: str) -> None:
    result = checker(value)
    assert result is not None
    assert reason in result


def test_expiration_uses_the_given_clock() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    check = checkers.expiration(lambda: now)
    assert check("2025-06-01T00:00:00Z") is None
    assert check("2025-06-01T00:00:00") is None  # naive means UTC
    assert check("") is None
    assert check("2024-06-01T00:00:00Z") == (
        "Expiration 2024-06-01T00:00:00Z is invalid: Expiration time is out of date."
    )
    bad = check("soon")
    assert bad is not None and bad.startswith("Expiration soon is invalid: ")


def test_builtin_checkers_take_the_clock() -> None:
    table = checkers.builtin_checkers(lambda: datetime(2100, 1, 1, tzinfo=UTC))
    assert table["expiration"]("2099-01-01T00:00:00Z") is not None
