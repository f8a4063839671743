"""The custom-constraint registry: messages, offline mode, registration."""

from __future__ import annotations

import re
from typing import Any

from kiln.schema.custom import CLOUD_CONSTRAINT_NAMES, CustomConstraints


def test_unknown_name() -> None:
    assert CustomConstraints().check("nova.flavor", "m1.tiny") == (
        '"m1.tiny" does not validate nova.flavor (constraint not found)'
    )


def test_reason_becomes_heats_message() -> None:
    registry = CustomConstraints()
    registry.register("with.reason", lambda v: "it is not there")
    registry.register("without.reason", lambda v: "")
    registry.register("always.ok", lambda v: None)
    assert registry.check("with.reason", "x") == "Error validating value 'x': it is not there"
    assert registry.check("without.reason", "x") == "Error validating value 'x'"
    assert registry.check("always.ok", "x") is None


def test_builtin_names() -> None:
    registry = CustomConstraints.builtin()
    expected = {
        "ip_addr",
        "net_cidr",
        "ip_or_cidr",
        "mac_addr",
        "dns_name",
        "rel_dns_name",
        "dns_domain",
        "cron_expression",
        "timezone",
        "iso_8601",
        "expiration",
        "json_string",
    }
    assert set(registry) == expected
    assert all(registry.is_checked(name) for name in expected)
    assert "nova.flavor" not in registry


def test_offline_knows_cloud_names_without_checking_them() -> None:
    registry = CustomConstraints.offline()
    for name in ("nova.flavor", "nova.keypair", "glance.image", "neutron.network"):
        assert name in CLOUD_CONSTRAINT_NAMES
        assert name in registry
        assert not registry.is_checked(name)
        assert registry.check(name, "anything at all") is None
    # the syntax checks still run
    assert registry.check("ip_addr", "nope") == "Error validating value 'nope': Invalid IP address"


def test_cloud_names_come_from_the_resource_types_reference(shared_dir: Any) -> None:
    text = (shared_dir / "reference" / "resource-types.md").read_text()
    used = set(re.findall(r"custom: ([a-z][a-z_0-9.]*)", text))
    assert {"nova.flavor", "ip_addr", "cron_expression"} <= used
    registry = CustomConstraints.offline()
    # test_constr belongs to OS::Heat::TestResource, which registers it itself.
    missing = {name for name in used if name not in registry} - {"test_constr"}
    assert missing == set()


def test_register_replaces_and_copies_are_independent() -> None:
    registry = CustomConstraints.offline()
    copy = registry.copy()
    copy.register("nova.flavor", lambda v: None if v == "m1.small" else "no such flavor")
    assert copy.is_checked("nova.flavor")
    assert copy.check("nova.flavor", "m1.huge") == (
        "Error validating value 'm1.huge': no such flavor"
    )
    assert registry.check("nova.flavor", "m1.huge") is None
