"""OS::Neutron::Subnet against the simulated Neutron: gateways, pools, routes, updates."""

from __future__ import annotations

from typing import Any

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.neutron.subnet import Subnet
from kiln.testing.plugin_context import FakeContext, decide, run_action, typed_properties


@pytest.fixture
def sandbox() -> Sandbox:
    return Sandbox()


@pytest.fixture
def network(sandbox: Sandbox) -> str:
    return sandbox.client.create_network({"name": "private"}).id


def subnet(sandbox: Sandbox, **properties: Any) -> tuple[Subnet, FakeContext]:
    return sandbox.created(Subnet, {"network": "private", "cidr": "10.0.0.0/24", **properties})


def test_create_resolves_the_network_name_and_shows_attributes(
    sandbox: Sandbox, network: str
) -> None:
    res, ctx = subnet(
        sandbox,
        dns_nameservers=["8.8.8.8"],
        host_routes=[{"destination": "10.1.0.0/24", "nexthop": "10.0.0.254"}],
        allocation_pools=[{"start": "10.0.0.10", "end": "10.0.0.20"}],
    )
    assert res.get_attribute("network_id") == network
    assert res.get_attribute("cidr") == "10.0.0.0/24"
    assert res.get_attribute("gateway_ip") == "10.0.0.1"
    assert res.get_attribute("ip_version") == 4
    assert res.get_attribute("enable_dhcp") is True
    assert res.get_attribute("dns_nameservers") == ["8.8.8.8"]
    assert res.get_attribute("allocation_pools") == [{"start": "10.0.0.10", "end": "10.0.0.20"}]
    assert res.get_attribute("host_routes") == [
        {"destination": "10.1.0.0/24", "nexthop": "10.0.0.254"}
    ]
    assert res.get_attribute("name") == ctx.physical_resource_name()
    assert res.get_attribute("tenant_id") == sandbox.project
    assert sandbox.client.get_network(network).subnet_ids == [ctx.physical_id]


@pytest.mark.parametrize(("given", "gateway"), [("", None), ("~", None), ("auto", "10.0.0.1")])
def test_gateway_none_or_auto(
    sandbox: Sandbox, network: str, given: str, gateway: str | None
) -> None:
    res, _ = subnet(sandbox, gateway_ip=given)
    assert res.get_attribute("gateway_ip") == gateway


def test_the_hidden_network_id_is_translated(sandbox: Sandbox, network: str) -> None:
    raw = Subnet.translate({"network_id": network, "cidr": "10.0.0.0/24"})
    res, _ = sandbox.created(Subnet, typed_properties(Subnet, raw))
    assert res.get_attribute("network_id") == network


def test_update_in_place(sandbox: Sandbox, network: str) -> None:
    res, ctx = subnet(sandbox, allocation_pools=[{"start": "10.0.0.10", "end": "10.0.0.20"}])
    new = {
        "network": "private",
        "cidr": "10.0.0.0/24",
        "name": "renamed",
        "gateway_ip": "10.0.0.254",
        "dns_nameservers": ["1.1.1.1"],
        "host_routes": [{"destination": "10.2.0.0/24", "nexthop": "10.0.0.3"}],
        "enable_dhcp": False,
    }
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    live = sandbox.client.get_subnet(ctx.physical_id or "")
    assert (live.name, live.gateway_ip, live.enable_dhcp) == ("renamed", "10.0.0.254", False)
    assert live.dns_nameservers == ["1.1.1.1"]
    assert live.host_routes == [{"destination": "10.2.0.0/24", "nexthop": "10.0.0.3"}]
    # the pools were removed from the template: sent as [] (Neutron's own default range)
    assert live.allocation_pools != [{"start": "10.0.0.10", "end": "10.0.0.20"}]
    run_action(res, "update", new_properties={**new, "gateway_ip": ""})
    assert sandbox.client.get_subnet(ctx.physical_id or "").gateway_ip is None


def test_auto_gateway_is_refused_on_update(sandbox: Sandbox, network: str) -> None:
    res, _ = subnet(sandbox)
    with pytest.raises(ResourceFailure, match="auto"):
        run_action(
            res,
            "update",
            new_properties={"network": "private", "cidr": "10.0.0.0/24", "gateway_ip": "auto"},
        )


@pytest.mark.parametrize(
    "change",
    [
        {"cidr": "10.5.0.0/24"},
        {"ip_version": 6, "cidr": "fd00::/64"},
        {"tenant_id": "x"},
        {"network": "other"},
    ],
)
def test_replacement_decisions(sandbox: Sandbox, network: str, change: dict[str, Any]) -> None:
    res, _ = subnet(sandbox)
    assert decide(res, {"network": "private", "cidr": "10.0.0.0/24", **change}).kind == "replace"


def test_overlapping_cidr_is_the_clouds_bad_request(sandbox: Sandbox, network: str) -> None:
    subnet(sandbox)
    res, _ = sandbox.resource(Subnet, {"network": "private", "cidr": "10.0.0.128/25"})
    with pytest.raises(BadRequest) as raised:
        run_action(res, "create")
    assert raised.value.message


def test_unknown_network_is_not_found(sandbox: Sandbox) -> None:
    res, _ = sandbox.resource(Subnet, {"network": "nowhere", "cidr": "10.0.0.0/24"})
    with pytest.raises(NotFound):
        run_action(res, "create")


def test_delete_twice_and_find_existing(sandbox: Sandbox, network: str) -> None:
    res, ctx = subnet(sandbox)
    first, ctx.physical_id = ctx.physical_id, None
    assert sandbox.again(ctx, Subnet).find_existing() == first
    ctx.physical_id = first
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_subnet(first or "")
    run_action(res, "delete")
    ctx.physical_id = None
    assert res.find_existing() is None
