"""OS::Neutron::Router against the simulated Neutron: gateway, updates, delete."""

from __future__ import annotations

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.neutron.router import Router
from kiln.testing.plugin_context import decide, run_action

GATEWAY = {"external_gateway_info": {"network": "public"}}


@pytest.fixture
def sandbox() -> Sandbox:
    return Sandbox()


def public_ids(sandbox: Sandbox) -> tuple[str, str]:
    network = sandbox.client.find_network("public")
    return network.id, sandbox.client.find_subnet("public-subnet").id


def test_create_with_a_gateway_resolves_names(sandbox: Sandbox) -> None:
    network_id, subnet_id = public_ids(sandbox)
    properties = {
        "external_gateway_info": {
            "network": "public",
            "external_fixed_ips": [{"subnet": "public-subnet", "ip_address": "172.24.4.50"}],
        }
    }
    res, ctx = sandbox.created(Router, properties)
    info = res.get_attribute("external_gateway_info")
    assert info["network_id"] == network_id
    assert info["external_fixed_ips"] == [{"subnet_id": subnet_id, "ip_address": "172.24.4.50"}]
    assert res.get_attribute("status") == "ACTIVE"
    assert res.get_attribute("name") == ctx.physical_resource_name()
    assert res.get_attribute("admin_state_up") is True
    assert res.get_attribute("tenant_id") == sandbox.project
    assert res.get_attribute("show")["id"] == ctx.physical_id


def test_gateway_on_an_internal_network_is_the_clouds_bad_request(sandbox: Sandbox) -> None:
    sandbox.client.create_network({"name": "private"})
    res, _ = sandbox.resource(Router, {"external_gateway_info": {"network": "private"}})
    with pytest.raises(BadRequest):
        run_action(res, "create")


def test_update_gateway_and_name_in_place(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Router)
    assert res.get_attribute("external_gateway_info") is None
    assert decide(res, GATEWAY).kind == "update"
    run_action(res, "update", new_properties={**GATEWAY, "name": "edge", "tags": ["t"]})
    live = sandbox.client.get_router(ctx.physical_id or "")
    assert live.external_gateway_info is not None
    assert live.name == "edge" and "t" in live.tags
    run_action(res, "update", new_properties={"name": "edge"})  # gateway removed
    assert sandbox.client.get_router(ctx.physical_id or "").external_gateway_info is None


@pytest.mark.parametrize("change", [{"distributed": True}, {"ha": True}, {"tenant_id": "p"}])
def test_replacement_decisions(sandbox: Sandbox, change: dict[str, object]) -> None:
    res, _ = sandbox.created(Router)
    assert decide(res, change).kind == "replace"


def test_l3_agent_scheduling_is_refused_clearly(sandbox: Sandbox) -> None:
    res, _ = sandbox.resource(Router, {"l3_agent_id": "agent"})
    with pytest.raises(ResourceFailure, match="l3_agent_ids"):
        run_action(res, "create")


def test_delete_while_interfaces_remain_is_a_conflict_then_succeeds(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Router)
    network = sandbox.client.create_network({"name": "private"})
    subnet = sandbox.client.create_subnet({"network_id": network.id, "cidr": "10.0.0.0/24"})
    sandbox.client.add_router_interface(ctx.physical_id or "", subnet_id=subnet.id)
    with pytest.raises(Conflict):
        run_action(res, "delete")
    sandbox.client.remove_router_interface(ctx.physical_id or "", subnet_id=subnet.id)
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_router(ctx.physical_id or "")
    run_action(res, "delete")


def test_find_existing_after_a_crash(sandbox: Sandbox) -> None:
    _, ctx = sandbox.created(Router, GATEWAY)
    first, ctx.physical_id = ctx.physical_id, None
    assert sandbox.again(ctx, Router).find_existing() == first
