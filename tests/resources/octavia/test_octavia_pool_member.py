"""OS::Octavia::PoolMember against the sandbox: schema, calls under the pool, tags, update."""

from __future__ import annotations

import pytest
from octavia_plugin_support import NO_DEFAULT, OctaviaWorld, custom, in_range, schema_rows

from kiln.resources.octavia._base import TAG_PREFIX
from kiln.resources.octavia.pool_member import PoolMember
from kiln.testing.plugin_context import decide, run_action

BASE = {"pool": "p", "address": "10.0.0.10", "protocol_port": 8080}


def test_schema_matches_the_reference() -> None:
    port = in_range(1, 65535)
    assert schema_rows(PoolMember.properties_schema) == {
        "pool": ("string", True, NO_DEFAULT, False, [custom("octavia.pool")]),
        "address": ("string", True, NO_DEFAULT, False, [custom("ip_addr")]),
        "protocol_port": ("integer", True, NO_DEFAULT, False, [port]),
        "monitor_address": ("string", False, NO_DEFAULT, False, [custom("ip_addr")]),
        "monitor_port": ("integer", False, NO_DEFAULT, False, [port]),
        "weight": ("integer", False, 1, True, [in_range(0, 256)]),
        "admin_state_up": ("boolean", False, True, True, []),
        "subnet": ("string", False, NO_DEFAULT, False, [custom("neutron.subnet")]),
        "tags": ("list", False, NO_DEFAULT, True, []),
    }
    assert list(PoolMember.attributes_schema) == []


def test_create_under_the_pool_resolved_by_name() -> None:
    world = OctaviaWorld(delays={"load_balancer.member.create": 2})
    ids = world.tree(pool=True)
    member, ctx = world.resource(
        PoolMember,
        {**BASE, "subnet": "tenant-subnet", "tags": ["web"], "monitor_port": 9000},
        name="m",
    )
    assert run_action(member, "create") > 1
    assert ctx.data["pool_id"] == ids["pool"]
    record = world.octavia.get_member(ids["pool"], ctx.physical_id or "")
    assert record.provisioning_status == "ACTIVE"
    assert (record.address, record.protocol_port, record.weight) == ("10.0.0.10", 8080, 1)
    assert record["subnet_id"] == world.subnet.id
    assert record["monitor_port"] == 9000
    assert record["tags"] == ["web", TAG_PREFIX + ctx.physical_resource_name()]
    assert world.octavia.get_pool(ids["pool"]).member_ids == [record.id]
    assert member.get_attribute("show") == record.show()


def test_weight_admin_state_and_tags_update_in_place() -> None:
    world = OctaviaWorld()
    ids = world.tree(pool=True)
    member, ctx = world.created(PoolMember, BASE)
    new = {**BASE, "weight": 5, "admin_state_up": False, "tags": ["blue"]}
    assert decide(member, new).kind == "update"
    run_action(member, "update", new_properties=new)
    record = world.octavia.get_member(ids["pool"], ctx.physical_id or "")
    assert (record.weight, record["admin_state_up"]) == (5, False)
    assert record["tags"] == ["blue", TAG_PREFIX + ctx.physical_resource_name()]


@pytest.mark.parametrize(
    "change",
    [
        {"pool": "other"},
        {"address": "10.0.0.11"},
        {"protocol_port": 81},
        {"monitor_address": "10.0.0.12"},
        {"monitor_port": 9000},
        {"subnet": "tenant-subnet"},
    ],
)
def test_replacing_changes(change: dict[str, object]) -> None:
    world = OctaviaWorld()
    member, _ = world.resource(PoolMember, BASE)
    assert decide(member, {**BASE, **change}).kind == "replace"


def test_create_waits_while_the_tree_is_pending() -> None:
    world = OctaviaWorld(delays={"load_balancer.pool.create": 3})
    world.tree(pool=True)
    member, ctx = world.resource(PoolMember, BASE)
    assert run_action(member, "create") > 3
    assert ctx.physical_id


def test_delete_under_the_pool_and_find_existing() -> None:
    world = OctaviaWorld(delays={"load_balancer.member.delete": 1})
    ids = world.tree(pool=True)
    member, ctx = world.created(PoolMember, BASE, name="m")
    created_id, ctx.physical_id = ctx.physical_id, None
    assert member.find_existing() == created_id
    ctx.physical_id = created_id
    assert run_action(member, "delete") > 1
    assert world.octavia.list_members(ids["pool"]) == []
    assert member.find_existing() is None
    assert run_action(member, "delete") == 1
