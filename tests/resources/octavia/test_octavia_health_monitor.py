"""OS::Octavia::HealthMonitor against the sandbox: schema, create, update, delete, lookup."""

from __future__ import annotations

import pytest
from octavia_plugin_support import (
    NO_DEFAULT,
    OctaviaWorld,
    allowed,
    custom,
    in_range,
    schema_rows,
    undocumented,
)

from kiln.resources.octavia.health_monitor import HealthMonitor
from kiln.testing.plugin_context import decide, run_action

BASE = {"pool": "p", "type": "HTTP", "delay": 5, "timeout": 3, "max_retries": 2}


def test_schema_matches_the_reference() -> None:
    methods = allowed(
        "GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"
    )
    assert schema_rows(HealthMonitor.properties_schema) == {
        "admin_state_up": ("boolean", False, True, True, []),
        "delay": ("integer", True, NO_DEFAULT, True, [in_range(0, None)]),
        "expected_codes": ("string", False, NO_DEFAULT, True, []),
        "http_method": ("string", False, NO_DEFAULT, True, [methods]),
        "max_retries": ("integer", True, NO_DEFAULT, True, [in_range(1, 10)]),
        "pool": ("string", True, NO_DEFAULT, False, [custom("octavia.pool")]),
        "timeout": ("integer", True, NO_DEFAULT, True, [in_range(0, None)]),
        "type": (
            "string",
            True,
            NO_DEFAULT,
            False,
            [allowed("PING", "TCP", "HTTP", "HTTPS", "UDP-CONNECT")],
        ),
        "url_path": ("string", False, NO_DEFAULT, True, []),
        "tenant_id": ("string", False, NO_DEFAULT, False, []),
    }
    assert list(HealthMonitor.attributes_schema) == ["pools"]
    assert undocumented(HealthMonitor) == []


def test_create_monitors_the_pool() -> None:
    world = OctaviaWorld(delays={"load_balancer.healthmonitor.create": 2})
    ids = world.tree(pool=True)
    props = {**BASE, "url_path": "/health", "expected_codes": "200-204", "http_method": "HEAD"}
    monitor, ctx = world.resource(HealthMonitor, props, name="hm")
    assert run_action(monitor, "create") > 1
    record = world.octavia.get_health_monitor(ctx.physical_id or "")
    assert record.provisioning_status == "ACTIVE"
    assert (record.type, record.delay, record.timeout) == ("HTTP", 5, 3)
    assert record["url_path"] == "/health"
    assert record["expected_codes"] == "200-204"
    assert record["http_method"] == "HEAD"
    assert world.octavia.get_pool(ids["pool"]).healthmonitor_id == record.id
    assert monitor.get_attribute("pools") == [{"id": ids["pool"]}]


def test_timing_updates_in_place() -> None:
    world = OctaviaWorld(delays={"load_balancer.healthmonitor.update": 1})
    world.tree(pool=True)
    monitor, ctx = world.created(HealthMonitor, BASE)
    new = {**BASE, "delay": 10, "timeout": 4, "max_retries": 5, "admin_state_up": False}
    assert decide(monitor, new).kind == "update"
    assert run_action(monitor, "update", new_properties=new) > 1
    record = world.octavia.get_health_monitor(ctx.physical_id or "")
    assert (record.delay, record.timeout, record["max_retries"]) == (10, 4, 5)
    assert record["admin_state_up"] is False


@pytest.mark.parametrize("change", [{"pool": "other"}, {"type": "TCP"}, {"tenant_id": "t"}])
def test_replacing_changes(change: dict[str, str]) -> None:
    world = OctaviaWorld()
    monitor, _ = world.resource(HealthMonitor, BASE)
    assert decide(monitor, {**BASE, **change}).kind == "replace"


def test_delete_and_find_existing() -> None:
    world = OctaviaWorld()
    ids = world.tree(pool=True)
    monitor, ctx = world.resource(HealthMonitor, BASE, name="hm")
    assert monitor.find_existing() is None
    run_action(monitor, "create")
    created_id, ctx.physical_id = ctx.physical_id, None
    assert monitor.find_existing() == created_id
    ctx.physical_id = created_id
    run_action(monitor, "delete")
    assert world.octavia.list_health_monitors() == []
    assert world.octavia.get_pool(ids["pool"]).healthmonitor_id is None
    assert monitor.find_existing() is None
