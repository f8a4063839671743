"""OS::Octavia::Pool against the sandbox: schema, validation, create, update, delete."""

from __future__ import annotations

from typing import Any

import pytest
from octavia_plugin_support import (
    NO_DEFAULT,
    OctaviaWorld,
    allowed,
    custom,
    schema_rows,
    undocumented,
)

from kiln.resources.octavia.pool import Pool
from kiln.testing.plugin_context import decide, run_action

PROTOCOLS = allowed("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "UDP")
BASE = {"lb_algorithm": "ROUND_ROBIN", "protocol": "HTTP", "listener": "http"}


def test_schema_matches_the_reference() -> None:
    algorithms = allowed("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT")
    assert schema_rows(Pool.properties_schema) == {
        "admin_state_up": ("boolean", False, True, True, []),
        "description": ("string", False, "", True, []),
        "session_persistence": ("map", False, NO_DEFAULT, True, []),
        "session_persistence.type": (
            "string",
            True,
            NO_DEFAULT,
            False,
            [allowed("SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE")],
        ),
        "session_persistence.cookie_name": ("string", False, NO_DEFAULT, False, []),
        "name": ("string", False, NO_DEFAULT, True, []),
        "lb_algorithm": ("string", True, NO_DEFAULT, True, [algorithms]),
        "listener": ("string", False, NO_DEFAULT, False, [custom("octavia.listener")]),
        "loadbalancer": ("string", False, NO_DEFAULT, False, [custom("octavia.loadbalancer")]),
        "protocol": ("string", True, NO_DEFAULT, False, [PROTOCOLS]),
        "tls_enabled": ("boolean", False, False, True, []),
    }
    assert list(Pool.attributes_schema) == ["healthmonitor_id", "listeners", "members"]
    assert undocumented(Pool) == []


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"listener": None}, "At least one of the following properties"),
        ({"session_persistence": {"type": "APP_COOKIE"}}, "cookie_name is required"),
        (
            {"session_persistence": {"type": "SOURCE_IP", "cookie_name": "c"}},
            "cookie_name must not be given",
        ),
    ],
)
def test_validation(props: dict[str, Any], message: str) -> None:
    (error,) = Pool.validate({**BASE, **props})
    assert message in error.message


def test_valid_combinations() -> None:
    assert Pool.validate(BASE) == []
    assert Pool.validate({**BASE, "listener": None, "loadbalancer": "web"}) == []
    app_cookie = {"type": "APP_COOKIE", "cookie_name": "c"}
    assert Pool.validate({**BASE, "session_persistence": app_cookie}) == []
    assert Pool.validate({**BASE, "session_persistence": {"type": "SOURCE_IP"}}) == []


def test_create_under_a_listener_becomes_its_default_pool() -> None:
    world = OctaviaWorld()
    ids = world.tree()
    sticky = {"type": "HTTP_COOKIE"}
    pool, ctx = world.resource(Pool, {**BASE, "session_persistence": sticky}, name="pool")
    run_action(pool, "create")
    record = world.octavia.get_pool(ctx.physical_id or "")
    assert record.provisioning_status == "ACTIVE"
    assert record.name == ctx.physical_resource_name()
    assert record["session_persistence"]["type"] == "HTTP_COOKIE"
    assert world.octavia.get_listener(ids["listener"]).default_pool_id == record.id
    assert pool.get_attribute("listeners") == [{"id": ids["listener"]}]
    assert pool.get_attribute("members") == []
    assert pool.get_attribute("healthmonitor_id") is None
    assert pool.get_attribute("show")["lb_algorithm"] == "ROUND_ROBIN"


def test_create_waits_while_the_load_balancer_is_pending() -> None:
    world = OctaviaWorld(delays={"load_balancer.listener.create": 3})
    world.tree()  # the listener's create keeps the load balancer pending
    pool, ctx = world.resource(Pool, {**BASE, "listener": None, "loadbalancer": "web"})
    assert run_action(pool, "create") > 3
    assert world.octavia.get_pool(ctx.physical_id or "").loadbalancer_ids


def test_update_sends_the_changed_values_that_are_set() -> None:
    world = OctaviaWorld(delays={"load_balancer.pool.update": 1})
    world.tree()
    sticky = {"type": "APP_COOKIE", "cookie_name": "sid"}
    pool, ctx = world.created(Pool, {**BASE, "session_persistence": sticky})
    new = {**BASE, "lb_algorithm": "LEAST_CONNECTIONS", "name": "renamed", "tls_enabled": True}
    assert decide(pool, new).kind == "update"
    assert run_action(pool, "update", new_properties=new) > 1
    record = world.octavia.get_pool(ctx.physical_id or "")
    assert record.lb_algorithm == "LEAST_CONNECTIONS"
    assert record.name == "renamed"
    assert record["tls_enabled"] is True
    # A removed session persistence is not sent (Heat sends only values that are set).
    assert record["session_persistence"]["cookie_name"] == "sid"


@pytest.mark.parametrize(
    "change", [{"listener": "other"}, {"loadbalancer": "web"}, {"protocol": "TCP"}]
)
def test_replacing_changes(change: dict[str, str]) -> None:
    world = OctaviaWorld()
    pool, _ = world.resource(Pool, BASE)
    assert decide(pool, {**BASE, **change}).kind == "replace"


def test_delete_unsets_the_listener_default_pool() -> None:
    world = OctaviaWorld(delays={"load_balancer.pool.delete": 2})
    ids = world.tree()
    pool, _ = world.created(Pool, BASE)
    assert run_action(pool, "delete") > 1
    assert world.octavia.list_pools() == []
    assert world.octavia.get_listener(ids["listener"]).default_pool_id is None
    assert run_action(pool, "delete") == 1


def test_find_existing_by_tag() -> None:
    world = OctaviaWorld()
    world.tree()
    pool, ctx = world.created(Pool, {**BASE, "name": "named"})
    created_id, ctx.physical_id = ctx.physical_id, None
    assert pool.find_existing() == created_id
