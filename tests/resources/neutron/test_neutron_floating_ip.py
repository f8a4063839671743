"""OS::Neutron::FloatingIP and ...FloatingIPAssociation against the simulated Neutron."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import NotFound
from kiln.resources.neutron.floating_ip import ROUTE_WAIT_SECONDS, FloatingIP
from kiln.resources.neutron.floating_ip_association import FloatingIPAssociation
from kiln.testing.plugin_context import decide, run_action


@dataclass
class Topology:
    sandbox: Sandbox
    router: str
    subnet: str
    port: str
    public: str

    def route(self) -> None:
        """The router interface on the private subnet that makes ports reachable."""
        self.sandbox.client.add_router_interface(self.router, subnet_id=self.subnet)


@pytest.fixture
def topo() -> Topology:
    sandbox = Sandbox()
    client = sandbox.client
    public = client.find_network("public").id
    router = client.create_router({"external_gateway_info": {"network_id": public}}).id
    network = client.create_network({"name": "private"}).id
    subnet = client.create_subnet({"network_id": network, "cidr": "10.0.0.0/24"}).id
    port = client.create_port({"network_id": network, "name": "web"}).id
    return Topology(sandbox, router, subnet, port, public)


def test_create_unassociated_then_associate_and_disassociate(topo: Topology) -> None:
    res, ctx = topo.sandbox.created(FloatingIP, {"floating_network": "public"})
    assert res.get_attribute("floating_network_id") == topo.public
    assert res.get_attribute("floating_ip_address").startswith("172.24.4.")
    assert res.get_attribute("port_id") is None
    assert res.get_attribute("tenant_id") == topo.sandbox.project
    topo.route()
    new = {"floating_network": "public", "port_id": "web"}
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    assert res.get_attribute("port_id") == topo.port
    assert res.get_attribute("router_id") == topo.router
    assert res.get_attribute("fixed_ip_address").startswith("10.0.0.")
    run_action(res, "update", new_properties={"floating_network": "public"})
    assert res.get_attribute("port_id") is None
    assert res.get_attribute("show")["id"] == ctx.physical_id


def test_dns_changes_update_without_a_call_and_network_changes_replace(topo: Topology) -> None:
    res, _ = topo.sandbox.created(FloatingIP, {"floating_network": "public"})
    assert decide(res, {"floating_network": "public", "dns_name": "web"}).kind == "update"
    assert run_action(res, "update", new_properties={"floating_network": "public"}) == 1
    for change in ({"floating_subnet": "public-subnet"}, {"value_specs": {"description": "x"}}):
        assert decide(res, {"floating_network": "public", **change}).kind == "replace"


def test_create_waits_for_the_router_interface(topo: Topology) -> None:
    res, ctx = topo.sandbox.resource(FloatingIP, {"floating_network": "public", "port_id": "web"})
    cookie = res.handle_create()
    assert cookie is not None and ctx.physical_id is None
    assert not res.check_create_complete(cookie)
    topo.route()  # the interface appears while the address waits
    ctx.advance(5)
    assert res.check_create_complete(cookie)
    assert res.get_attribute("port_id") == topo.port


def test_create_without_a_route_fails_with_the_clouds_message_in_the_end(topo: Topology) -> None:
    res, ctx = topo.sandbox.resource(FloatingIP, {"floating_network": "public", "port_id": "web"})
    cookie = res.handle_create()
    ctx.advance(ROUTE_WAIT_SECONDS)
    with pytest.raises(NotFound, match="not reachable"):
        res.check_create_complete(cookie)


def test_delete_twice_and_find_existing(topo: Topology) -> None:
    res, ctx = topo.sandbox.created(FloatingIP, {"floating_network": "public"})
    first, ctx.physical_id = ctx.physical_id, None
    assert topo.sandbox.again(ctx, FloatingIP).find_existing() == first
    ctx.physical_id = first
    run_action(res, "delete")
    with pytest.raises(NotFound):
        topo.sandbox.client.get_floating_ip(first or "")
    run_action(res, "delete")


def test_association_lifecycle(topo: Topology) -> None:
    topo.route()
    fip = topo.sandbox.client.create_floating_ip({"floating_network_id": topo.public}).id
    res, ctx = topo.sandbox.created(FloatingIPAssociation, {"floatingip_id": fip, "port_id": "web"})
    assert ctx.physical_id == ctx.physical_resource_name()
    assert res.get_attribute("show")["port_id"] == topo.port
    assert res.find_existing() == ctx.physical_id
    other = topo.sandbox.client.create_floating_ip({"floating_network_id": topo.public}).id
    new = {"floatingip_id": other, "port_id": "web"}
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    assert topo.sandbox.client.get_floating_ip(fip).port_id is None
    assert topo.sandbox.client.get_floating_ip(other).port_id == topo.port
    run_action(res, "delete")
    assert topo.sandbox.client.get_floating_ip(other).port_id is None
    topo.sandbox.client.delete_floating_ip(other)
    run_action(res, "delete")  # the floating IP is gone: success


def test_association_waits_for_a_route(topo: Topology) -> None:
    fip = topo.sandbox.client.create_floating_ip({"floating_network_id": topo.public}).id
    res, _ctx = topo.sandbox.resource(
        FloatingIPAssociation, {"floatingip_id": fip, "port_id": "web"}
    )
    cookie = res.handle_create()
    assert not res.check_create_complete(cookie)
    topo.route()
    assert res.check_create_complete(cookie)
    assert topo.sandbox.client.get_floating_ip(fip).port_id == topo.port
