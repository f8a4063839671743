"""OS::Neutron::RouterInterface against the simulated Neutron: composite ids, delete."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import BadRequest
from kiln.resources.neutron.router_interface import RouterInterface, parse_id
from kiln.testing.plugin_context import decide, run_action


@dataclass
class Topology:
    sandbox: Sandbox
    router: str
    network: str
    subnet: str

    def interface_ports(self) -> list[str]:
        return [
            p.id
            for p in self.sandbox.client.list_ports(device_id=self.router)
            if p.device_owner == "network:router_interface"
        ]


@pytest.fixture
def topo() -> Topology:
    sandbox = Sandbox()
    router = sandbox.client.create_router({"name": "r1"}).id
    network = sandbox.client.create_network({"name": "private"}).id
    subnet = sandbox.client.create_subnet(
        {"network_id": network, "cidr": "10.0.0.0/24", "name": "private-subnet"}
    ).id
    return Topology(sandbox, router, network, subnet)


def test_by_subnet_names_the_composite_id_and_shows_the_port(topo: Topology) -> None:
    res, ctx = topo.sandbox.created(RouterInterface, {"router": "r1", "subnet": "private-subnet"})
    assert ctx.physical_id == f"{topo.router}:subnet_id={topo.subnet}"
    assert res.reference_id() == ctx.physical_id
    (port,) = topo.interface_ports()
    assert res.get_attribute("show")["id"] == port
    assert res.get_attribute("show")["fixed_ips"][0]["ip_address"] == "10.0.0.1"
    run_action(res, "delete")
    assert topo.interface_ports() == []
    run_action(res, "delete")  # already detached: success
    assert res.get_attribute("show") is None


def test_by_port_and_hidden_names(topo: Topology) -> None:
    port = topo.sandbox.client.create_port({"network_id": topo.network, "name": "p1"}).id
    res, ctx = topo.sandbox.created(RouterInterface, {"router": topo.router, "port_id": "p1"})
    assert ctx.physical_id == f"{topo.router}:port_id={port}"
    assert topo.interface_ports() == [port]
    run_action(res, "delete")
    assert topo.interface_ports() == []


def test_legacy_ids_are_understood_on_delete(topo: Topology) -> None:
    res, ctx = topo.sandbox.created(RouterInterface, {"router": "r1", "subnet": topo.subnet})
    ctx.physical_id = f"{topo.router}:{topo.subnet}"
    assert parse_id(ctx.physical_id) == (topo.router, "subnet_id", topo.subnet)
    run_action(res, "delete")
    assert topo.interface_ports() == []


def test_any_change_replaces(topo: Topology) -> None:
    res, _ = topo.sandbox.created(RouterInterface, {"router": "r1", "subnet": topo.subnet})
    assert decide(res, {"router": "r1", "subnet": "private-subnet"}).kind == "replace"


def test_find_existing_after_a_crash_and_the_repeat_would_fail(topo: Topology) -> None:
    _res, ctx = topo.sandbox.created(RouterInterface, {"router": "r1", "subnet": topo.subnet})
    first, ctx.physical_id = ctx.physical_id, None
    again = topo.sandbox.again(ctx, RouterInterface)
    assert again.find_existing() == first
    with pytest.raises(BadRequest):  # what a blind repeat would get from Neutron
        run_action(again, "create")
    other, _ = topo.sandbox.resource(RouterInterface, {"router": "r1", "subnet": "nowhere"})
    assert other.find_existing() is None
