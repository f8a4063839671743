"""OS::Neutron::Net against the simulated Neutron: create, attributes, update, delete."""

from __future__ import annotations

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import Conflict, Forbidden, NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.neutron._common import TAG_PREFIX
from kiln.resources.neutron.net import Net
from kiln.testing.plugin_context import decide, run_action


@pytest.fixture
def sandbox() -> Sandbox:
    return Sandbox()


def test_create_names_tags_and_shows_the_network(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Net, {"tags": ["web"], "value_specs": {"mtu": 1400}})
    live = sandbox.client.get_network(ctx.physical_id or "")
    assert live.name == ctx.physical_resource_name()
    assert live.tags == ["web", TAG_PREFIX + ctx.physical_resource_name()]
    assert live.mtu == 1400
    assert res.reference_id() == ctx.physical_id
    assert res.get_attribute("status") == "ACTIVE"
    assert res.get_attribute("name") == ctx.physical_resource_name()
    assert res.get_attribute("subnets") == []
    assert res.get_attribute("mtu") == 1400
    assert res.get_attribute("admin_state_up") is True
    assert res.get_attribute("tenant_id") == sandbox.project
    assert res.get_attribute("show")["id"] == ctx.physical_id
    assert isinstance(res.get_attribute("segments"), list)
    # the cloud's port security default is kept for a later removal of the property
    assert ctx.data["port_security_enabled_default"] is True


def test_update_in_place_and_replacement_decisions(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Net, {"name": "one"})
    assert decide(res, {"name": "two"}).kind == "update"
    assert decide(res, {"name": "one", "tenant_id": "other"}).kind == "replace"
    assert decide(res, {"name": "one", "availability_zone_hints": ["az"]}).kind == "replace"
    run_action(res, "update", new_properties={"name": "two", "admin_state_up": False})
    live = sandbox.client.get_network(ctx.physical_id or "")
    assert (live.name, live.admin_state_up) == ("two", False)
    run_action(res, "update", new_properties={"admin_state_up": False})
    assert sandbox.client.get_network(ctx.physical_id or "").name == ctx.physical_resource_name()
    run_action(res, "update", new_properties={"admin_state_up": False, "tags": ["x"]})
    assert "x" in sandbox.client.get_network(ctx.physical_id or "").tags


def test_removing_port_security_restores_the_cloud_default(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Net)
    run_action(res, "update", new_properties={"port_security_enabled": False})
    assert not sandbox.client.get_network(ctx.physical_id or "").port_security_enabled
    run_action(res, "update", new_properties={})
    assert sandbox.client.get_network(ctx.physical_id or "").port_security_enabled


def test_delete_then_delete_again_and_never_created(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Net)
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_network(ctx.physical_id or "")
    run_action(res, "delete")  # already gone: success
    never, _ = sandbox.resource(Net)
    assert run_action(never, "delete") == 1
    assert res.get_attribute("status") is None


def test_delete_of_a_network_in_use_is_a_conflict(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Net)
    sandbox.client.create_subnet({"network_id": ctx.physical_id, "cidr": "10.9.0.0/24"})
    sandbox.client.create_port({"network_id": ctx.physical_id})
    with pytest.raises(Conflict):
        run_action(res, "delete")


def test_find_existing_after_a_crash(sandbox: Sandbox) -> None:
    _res, ctx = sandbox.created(Net)
    first = ctx.physical_id
    ctx.physical_id = None  # the engine crashed before recording it
    assert sandbox.again(ctx, Net).find_existing() == first
    fresh, _ = sandbox.resource(Net, name="other")
    assert fresh.find_existing() is None


def test_find_existing_by_physical_name_before_tags_were_set(sandbox: Sandbox) -> None:
    res, ctx = sandbox.resource(Net)
    made = sandbox.client.create_network({"name": ctx.physical_resource_name()})
    assert res.find_existing() == made.id
    named, _ = sandbox.resource(Net, {"name": "mine"})
    sandbox.client.create_network({"name": "mine"})
    assert named.find_existing() is None  # a name the user chose is not proof


def test_dhcp_agent_scheduling_is_refused_clearly(sandbox: Sandbox) -> None:
    res, _ = sandbox.resource(Net, {"dhcp_agent_ids": ["agent-1"]})
    with pytest.raises(ResourceFailure, match="dhcp_agent_ids"):
        run_action(res, "create")


def test_cloud_errors_reach_the_caller(sandbox: Sandbox) -> None:
    res, _ = sandbox.resource(Net, {"tenant_id": "someone-else"})
    with pytest.raises(Forbidden, match="requires admin privileges"):
        run_action(res, "create")
