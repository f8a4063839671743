"""Octavia scenarios through both adapters: in process and openstacksdk over HTTP."""

from __future__ import annotations

import math

import pytest

from kiln.cloud.api.errors import BadRequest, Conflict, MultipleMatches, NotFound
from kiln.cloud.api.load_balancer import LoadBalancer


@pytest.fixture
def subnet(contract_cloud):
    network = contract_cloud.client("network")
    net = network.create_network({"name": "lb-net"})
    return network.create_subnet(
        {"network_id": net.id, "cidr": "10.20.0.0/24", "ip_version": 4, "name": "lb-subnet"}
    )


def test_tree_lifecycle(contract_cloud, subnet):
    lbaas = contract_cloud.client("load_balancer")
    lb = lbaas.create_load_balancer({"vip_subnet_id": subnet.id, "name": "web"})
    assert isinstance(lb, LoadBalancer)
    assert lb.provisioning_status == "PENDING_CREATE"
    assert lb.vip_subnet_id == subnet.id and lb.vip_address.startswith("10.20.0.")
    port = contract_cloud.client("network").get_port(lb.vip_port_id)
    assert port["device_owner"] == "Octavia"
    assert lbaas.get_load_balancer(lb.id).status == "ACTIVE"
    assert lbaas.find_load_balancer("web").id == lb.id

    listener = lbaas.create_listener(
        {"loadbalancer_id": lb.id, "protocol": "HTTP", "protocol_port": 80, "name": "l"}
    )
    pool = lbaas.create_pool(
        {"listener_id": listener.id, "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}
    )
    member = lbaas.create_member(pool.id, {"address": "10.20.0.40", "protocol_port": 8080})
    monitor = lbaas.create_health_monitor(
        {"pool_id": pool.id, "type": "HTTP", "delay": 5, "timeout": 5, "max_retries": 3}
    )
    assert lbaas.get_listener(listener.id).default_pool_id == pool.id
    shown = lbaas.get_pool(pool.id)
    assert shown.member_ids == [member.id] and shown.healthmonitor_id == monitor.id
    assert lbaas.get_member(pool.id, member.id).operating_status == "ONLINE"
    assert lbaas.find_member(pool.id, member.id).address == "10.20.0.40"
    assert [m.id for m in lbaas.list_members(pool.id)] == [member.id]
    assert lbaas.get_load_balancer(lb.id).pool_ids == [pool.id]

    updated = lbaas.update_member(pool.id, member.id, {"weight": 7})
    assert updated.weight == 7
    lbaas.update_health_monitor(monitor.id, {"delay": 10})
    assert lbaas.get_health_monitor(monitor.id).delay == 10
    lbaas.update_load_balancer(lb.id, {"description": "front"})
    assert lbaas.get_load_balancer(lb.id)["description"] == "front"

    with pytest.raises(BadRequest, match="it has children"):
        lbaas.delete_load_balancer(lb.id)
    lbaas.delete_health_monitor(monitor.id)
    lbaas.delete_member(pool.id, member.id)
    lbaas.delete_pool(pool.id)
    lbaas.delete_listener(listener.id)
    lbaas.delete_load_balancer(lb.id)
    with pytest.raises(NotFound):
        lbaas.get_load_balancer(lb.id)
    with pytest.raises(NotFound):
        lbaas.delete_load_balancer(lb.id)
    with pytest.raises(NotFound):
        contract_cloud.client("network").get_port(lb.vip_port_id)


def test_immutable_while_pending(contract_cloud, subnet):
    contract_cloud.sandbox.sim.delays["load_balancer.loadbalancer.create"] = math.inf
    lbaas = contract_cloud.client("load_balancer")
    lb = lbaas.create_load_balancer({"vip_subnet_id": subnet.id})
    with pytest.raises(Conflict, match=f"Load Balancer {lb.id} is immutable"):
        lbaas.create_listener({"loadbalancer_id": lb.id, "protocol": "TCP", "protocol_port": 22})
    with pytest.raises(Conflict):
        lbaas.update_load_balancer(lb.id, {"name": "x"})


def test_validation_errors(contract_cloud, subnet):
    lbaas = contract_cloud.client("load_balancer")
    lb = lbaas.create_load_balancer({"vip_subnet_id": subnet.id, "name": "dup"})
    lbaas.create_load_balancer({"vip_subnet_id": subnet.id, "name": "dup"})
    with pytest.raises(MultipleMatches):
        lbaas.find_load_balancer("dup")
    lbaas.create_listener({"loadbalancer_id": lb.id, "protocol": "TCP", "protocol_port": 22})
    with pytest.raises(Conflict):
        lbaas.create_listener({"loadbalancer_id": lb.id, "protocol": "TCP", "protocol_port": 22})
    pool = lbaas.create_pool(
        {"loadbalancer_id": lb.id, "protocol": "TCP", "lb_algorithm": "ROUND_ROBIN"}
    )
    with pytest.raises(BadRequest, match="timeout"):
        lbaas.create_health_monitor(
            {"pool_id": pool.id, "type": "TCP", "delay": 1, "timeout": 5, "max_retries": 3}
        )
    with pytest.raises(NotFound):
        lbaas.create_load_balancer({"vip_subnet_id": "no-such-subnet"})
    with pytest.raises(NotFound):
        lbaas.find_pool("nothing-called-this")


def test_catalogs(contract_cloud):
    lbaas = contract_cloud.client("load_balancer")
    assert "amphora" in [p.id for p in lbaas.list_providers()]
    assert lbaas.list_flavors() == []
    assert lbaas.list_availability_zones() == []
    with pytest.raises(NotFound):
        lbaas.find_flavor("small")
    with pytest.raises(NotFound):
        lbaas.find_availability_zone("az1")
