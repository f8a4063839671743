"""OS::Octavia::LoadBalancer against the sandbox: schema, create/poll, update, delete, lookups."""

from __future__ import annotations

import pytest
from octavia_plugin_support import (
    NO_DEFAULT,
    OctaviaWorld,
    custom,
    schema_rows,
    undocumented,
)

from kiln.cloud.api.errors import NotFound
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.plugin import ResourceFailure
from kiln.resources.octavia._base import TAG_PREFIX
from kiln.resources.octavia.load_balancer import LoadBalancer
from kiln.testing.plugin_context import decide, run_action


def test_schema_matches_the_reference() -> None:
    assert schema_rows(LoadBalancer.properties_schema) == {
        "description": ("string", False, "", True, []),
        "name": ("string", False, NO_DEFAULT, True, []),
        "provider": ("string", False, NO_DEFAULT, False, []),
        "vip_address": ("string", False, NO_DEFAULT, False, [custom("ip_addr")]),
        "vip_subnet": ("string", True, NO_DEFAULT, False, [custom("neutron.subnet")]),
        "admin_state_up": ("boolean", False, True, True, []),
        "tenant_id": ("string", False, NO_DEFAULT, False, [custom("keystone.project")]),
        "flavor": ("string", False, NO_DEFAULT, False, [custom("octavia.flavor")]),
        "availability_zone": (
            "string",
            False,
            NO_DEFAULT,
            False,
            [custom("octavia.availabilityzone")],
        ),
    }
    assert list(LoadBalancer.attributes_schema) == [
        "vip_address",
        "vip_port_id",
        "vip_subnet_id",
        "pools",
        "flavor_id",
    ]
    assert undocumented(LoadBalancer) == []


def test_create_resolves_the_subnet_name_and_waits_for_active() -> None:
    world = OctaviaWorld(delays={"load_balancer.loadbalancer.create": 3})
    lb, ctx = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet"}, name="lb")
    assert run_action(lb, "create") > 1
    record = world.octavia.get_load_balancer(ctx.physical_id or "")
    assert record.provisioning_status == "ACTIVE"
    assert record.name == ctx.physical_resource_name()
    assert record.vip_subnet_id == world.subnet.id
    assert record["tags"] == [TAG_PREFIX + ctx.physical_resource_name()]
    assert lb.reference_id() == record.id
    assert lb.get_attribute("vip_address") == record.vip_address
    assert lb.get_attribute("vip_port_id") == record.vip_port_id
    assert world.network.get_port(record.vip_port_id or "").id == record.vip_port_id
    assert lb.get_attribute("vip_subnet_id") == world.subnet.id
    assert lb.get_attribute("pools") == []
    assert lb.get_attribute("flavor_id") is None
    assert lb.get_attribute("show") == world.octavia.get_load_balancer(record.id).show()


def test_create_sends_the_given_values() -> None:
    world = OctaviaWorld()
    lb, _ = world.created(
        LoadBalancer,
        {
            "vip_subnet": world.subnet.id,
            "name": "front",
            "description": "the front door",
            "vip_address": "10.0.0.42",
            "admin_state_up": False,
            "provider": "amphora",
        },
    )
    shown = lb.get_attribute("show")
    assert shown["name"] == "front"
    assert shown["description"] == "the front door"
    assert shown["vip_address"] == "10.0.0.42"
    assert shown["admin_state_up"] is False
    assert shown["provider"] == "amphora"


def test_an_unknown_subnet_fails_the_create() -> None:
    world = OctaviaWorld()
    lb, ctx = world.resource(LoadBalancer, {"vip_subnet": "nowhere"})
    with pytest.raises(NotFound):
        run_action(lb, "create")
    assert ctx.physical_id is None


def test_a_load_balancer_going_to_error_fails_the_create() -> None:
    world = OctaviaWorld()
    world.cloud.sim.add_fault(
        FaultRule(service="load_balancer", operation="create_load_balancer", final_state="ERROR")
    )
    lb, ctx = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    with pytest.raises(ResourceFailure, match="Went to status ERROR"):
        run_action(lb, "create")
    assert ctx.physical_id is not None  # recorded, so the delete cleans it up


def test_name_description_and_admin_state_update_in_place() -> None:
    world = OctaviaWorld(delays={"load_balancer.loadbalancer.update": 2})
    lb, ctx = world.created(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "a"})
    new = {"vip_subnet": "tenant-subnet", "name": "b", "description": "d", "admin_state_up": False}
    assert decide(lb, new).kind == "update"
    assert run_action(lb, "update", new_properties=new) > 1
    record = world.octavia.get_load_balancer(ctx.physical_id or "")
    assert (record.name, record["description"], record["admin_state_up"]) == ("b", "d", False)
    assert record.provisioning_status == "ACTIVE"
    # Removing the name goes back to the physical name.
    run_action(lb, "update", new_properties={"vip_subnet": "tenant-subnet"})
    assert world.octavia.get_load_balancer(record.id).name == ctx.physical_resource_name()


@pytest.mark.parametrize(
    "change",
    [
        {"vip_subnet": "public-subnet"},
        {"vip_address": "10.0.0.9"},
        {"provider": "amphora"},
        {"flavor": "small"},
        {"availability_zone": "az1"},
        {"tenant_id": "other"},
    ],
)
def test_other_changes_replace(change: dict[str, str]) -> None:
    world = OctaviaWorld()
    lb, _ = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    assert decide(lb, {"vip_subnet": "tenant-subnet", **change}).kind == "replace"


def test_an_unchanged_update_sends_nothing() -> None:
    world = OctaviaWorld()
    lb, _ = world.created(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    calls = len(world.cloud.sim.call_log("load_balancer", "update_*"))
    assert run_action(lb, "update") == 1
    assert len(world.cloud.sim.call_log("load_balancer", "update_*")) == calls


def test_delete_waits_until_the_load_balancer_is_gone() -> None:
    world = OctaviaWorld(delays={"load_balancer.loadbalancer.delete": 2})
    lb, ctx = world.created(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    port_id = lb.get_attribute("vip_port_id")
    assert run_action(lb, "delete") > 1
    with pytest.raises(NotFound):
        world.octavia.get_load_balancer(ctx.physical_id or "")
    with pytest.raises(NotFound):
        world.network.get_port(port_id)
    assert lb.get_attribute("show") is None
    # Deleting again: already gone is deleted.
    assert run_action(lb, "delete") == 1


def test_delete_retries_while_the_load_balancer_is_pending() -> None:
    world = OctaviaWorld(delays={"load_balancer.loadbalancer.update": 3})
    lb, ctx = world.created(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    world.octavia.update_load_balancer(ctx.physical_id or "", {"description": "busy"})
    assert run_action(lb, "delete") > 3
    assert world.octavia.list_load_balancers() == []


def test_delete_without_a_physical_id_does_nothing() -> None:
    world = OctaviaWorld()
    lb, _ = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet"})
    assert lb.handle_delete() is None
    assert run_action(lb, "delete") == 1
    assert lb.get_attribute("vip_address") is None
    assert lb.get_attribute("show") is None


def test_find_existing_recognises_the_tagged_load_balancer() -> None:
    world = OctaviaWorld()
    lb, ctx = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet"}, name="lb")
    assert lb.find_existing() is None
    lb.handle_create()  # the engine crashed before recording anything
    created_id = ctx.physical_id
    ctx.physical_id = None
    assert lb.find_existing() == created_id
    # Another load balancer of the same name, without the tag, is not ours.
    other, _ = world.resource(LoadBalancer, {"vip_subnet": "tenant-subnet", "name": "x"}, name="o")
    world.octavia.create_load_balancer({"vip_subnet_id": world.subnet.id, "name": "x"})
    assert other.find_existing() is None
