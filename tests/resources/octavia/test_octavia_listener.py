"""OS::Octavia::Listener against the sandbox: schema, validation, create in the poll, update."""

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

from kiln.cloud.api.errors import Conflict
from kiln.resources.octavia.listener import Listener
from kiln.resources.octavia.load_balancer import LoadBalancer
from kiln.resources.octavia.pool import Pool
from kiln.testing.plugin_context import decide, run_action

PROTOCOLS = allowed("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "UDP")


def test_schema_matches_the_reference() -> None:
    assert schema_rows(Listener.properties_schema) == {
        "protocol_port": ("integer", True, NO_DEFAULT, False, [in_range(1, 65535)]),
        "protocol": ("string", True, NO_DEFAULT, False, [PROTOCOLS]),
        "loadbalancer": ("string", True, NO_DEFAULT, False, [custom("octavia.loadbalancer")]),
        "default_pool": ("string", False, NO_DEFAULT, True, [custom("octavia.pool")]),
        "name": ("string", False, NO_DEFAULT, True, []),
        "admin_state_up": ("boolean", False, True, True, []),
        "description": ("string", False, "", True, []),
        "default_tls_container_ref": ("string", False, NO_DEFAULT, True, []),
        "sni_container_refs": ("list", False, NO_DEFAULT, True, []),
        "connection_limit": ("integer", False, -1, True, [in_range(-1, None)]),
        "tenant_id": ("string", False, NO_DEFAULT, False, []),
        "allowed_cidrs": ("list", False, NO_DEFAULT, True, []),
        "allowed_cidrs[]": ("string", False, NO_DEFAULT, False, [custom("net_cidr")]),
    }
    assert list(Listener.attributes_schema) == ["loadbalancers", "default_pool_id"]
    assert undocumented(Listener) == []


def test_terminated_https_needs_a_tls_container() -> None:
    props = {"protocol": "TERMINATED_HTTPS", "protocol_port": 443, "loadbalancer": "lb"}
    (error,) = Listener.validate(props)
    assert "default_tls_container_ref required" in error.message
    assert Listener.validate({**props, "default_tls_container_ref": "ref"}) == []
    assert Listener.validate({**props, "protocol": "HTTPS"}) == []


def test_create_waits_while_the_load_balancer_is_pending() -> None:
    world = OctaviaWorld(delays={"load_balancer.loadbalancer.create": 3})
    lb, lb_ctx = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "web"})
    lb.handle_create()  # PENDING_CREATE for three seconds
    listener, ctx = world.resource(
        Listener, {"protocol": "HTTP", "protocol_port": 80, "loadbalancer": "web"}, name="http"
    )
    assert run_action(listener, "create") > 3
    record = world.octavia.get_listener(ctx.physical_id or "")
    assert record.provisioning_status == "ACTIVE"
    assert record.name == ctx.physical_resource_name()
    assert record.loadbalancer_ids == [lb_ctx.physical_id]
    assert listener.get_attribute("loadbalancers") == [{"id": lb_ctx.physical_id}]
    assert listener.get_attribute("default_pool_id") is None
    assert listener.get_attribute("show")["protocol_port"] == 80
    assert world.cloud.sim.call_log("load_balancer", "create_listener")[0].fault is None


def test_another_conflict_fails_the_create() -> None:
    world = OctaviaWorld()
    world.created(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "web"})
    props = {"protocol": "HTTP", "protocol_port": 80, "loadbalancer": "web"}
    world.created(Listener, props, name="first")
    second, ctx = world.resource(Listener, props, name="second")
    with pytest.raises(Conflict):  # the port is taken: waiting would not help
        run_action(second, "create")
    assert ctx.physical_id is None


def test_update_in_place_and_default_pool_by_name() -> None:
    world = OctaviaWorld()
    world.created(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "web"})
    props = {"protocol": "HTTP", "protocol_port": 80, "loadbalancer": "web"}
    listener, ctx = world.created(Listener, props, name="http")
    _, pool_ctx = world.created(
        Pool,
        {"lb_algorithm": "ROUND_ROBIN", "protocol": "HTTP", "loadbalancer": "web", "name": "p"},
        name="pool",
    )
    new = {
        **props,
        "default_pool": "p",
        "connection_limit": 100,
        "description": "front",
        "allowed_cidrs": ["10.0.0.0/8"],
    }
    assert decide(listener, new).kind == "update"
    run_action(listener, "update", new_properties=new)
    record = world.octavia.get_listener(ctx.physical_id or "")
    assert record.default_pool_id == pool_ctx.physical_id
    assert listener.get_attribute("default_pool_id") == pool_ctx.physical_id
    assert record["connection_limit"] == 100
    assert record["description"] == "front"
    assert record["allowed_cidrs"] == ["10.0.0.0/8"]
    # Removing the default pool unsets it.
    run_action(listener, "update", new_properties=props)
    assert world.octavia.get_listener(record.id).default_pool_id is None


@pytest.mark.parametrize(
    "change",
    [{"protocol": "TCP"}, {"protocol_port": 81}, {"loadbalancer": "other"}, {"tenant_id": "t"}],
)
def test_replacing_changes(change: dict[str, object]) -> None:
    world = OctaviaWorld()
    props = {"protocol": "HTTP", "protocol_port": 80, "loadbalancer": "web"}
    listener, _ = world.resource(Listener, props)
    assert decide(listener, {**props, **change}).kind == "replace"


def test_delete_waits_for_the_listener_to_go() -> None:
    world = OctaviaWorld(delays={"load_balancer.listener.delete": 2})
    _, lb_ctx = world.created(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "web"})
    listener, _ = world.created(
        Listener, {"protocol": "TCP", "protocol_port": 22, "loadbalancer": "web"}
    )
    assert run_action(listener, "delete") > 1
    assert world.octavia.list_listeners() == []
    assert world.octavia.get_load_balancer(lb_ctx.physical_id or "").listener_ids == []
    assert run_action(listener, "delete") == 1


def test_find_existing_by_tag() -> None:
    world = OctaviaWorld()
    world.created(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "web"})
    listener, ctx = world.created(
        Listener, {"protocol": "TCP", "protocol_port": 22, "loadbalancer": "web"}, name="ssh"
    )
    created_id, ctx.physical_id = ctx.physical_id, None
    assert listener.find_existing() == created_id
