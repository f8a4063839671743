"""Subnet pools through both NetworkApi adapters (in-process and openstacksdk/REST), and
Nova's "port still in use" through both ComputeApi adapters."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable
from kiln.cloud.api.network import NetworkApi

DEFAULT_POOL = "shared-default-subnetpool-v4"


def _net(contract_cloud: Any, *, admin: bool = False) -> NetworkApi:
    client: NetworkApi = contract_cloud.client("network", admin=admin)
    return client


def test_the_seeded_default_pool(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    pool = net.find_subnetpool(DEFAULT_POOL)
    assert pool.prefixes == ["10.0.0.0/16"] and pool.ip_version == 4
    assert pool.shared and pool.is_default and pool.address_scope_id is None
    assert (pool.min_prefixlen, pool.default_prefixlen, pool.max_prefixlen) == (8, 26, 32)
    assert net.get_subnetpool(pool.id).name == DEFAULT_POOL
    assert [p.id for p in net.list_subnetpools(is_default=True, shared=True)] == [pool.id]
    assert net.list_subnetpools(shared=False) == []
    with pytest.raises(NotFound):
        net.find_subnetpool("no-such-pool")
    assert net.has_extension("subnet_allocation")


def test_subnets_from_a_pool(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    pool = net.find_subnetpool(DEFAULT_POOL)
    networks = [net.create_network({"name": f"n{i}"}) for i in range(3)]
    first = net.create_subnet(
        {"network_id": networks[0].id, "subnetpool_id": pool.id, "prefixlen": 24}
    )
    second = net.create_subnet(
        {"network_id": networks[1].id, "subnetpool_id": pool.id, "prefixlen": 24}
    )
    assert (first.cidr, second.cidr) == ("10.0.0.0/24", "10.0.1.0/24")
    assert first.subnetpool_id == pool.id and first.gateway_ip == "10.0.0.1"
    default = net.create_subnet(
        {"network_id": networks[2].id, "use_default_subnetpool": True, "ip_version": 4}
    )
    assert default.cidr == "10.0.2.0/26"
    with pytest.raises(BadRequest) as err:
        net.create_subnet({"network_id": networks[2].id, "subnetpool_id": pool.id, "prefixlen": 40})
    assert err.value.kind == "MaxPrefixSubnetAllocationError"
    net.delete_subnet(first.id)
    again = net.create_subnet(
        {"network_id": networks[0].id, "subnetpool_id": pool.id, "prefixlen": 24}
    )
    assert again.cidr == "10.0.0.0/24"


def test_pool_lifecycle(contract_cloud: Any) -> None:
    net, admin = _net(contract_cloud), _net(contract_cloud, admin=True)
    with pytest.raises(Forbidden):
        net.create_subnetpool({"name": "p", "prefixes": ["10.20.0.0/24"], "shared": True})
    pool = admin.create_subnetpool({"name": "p", "prefixes": ["10.20.0.0/24"], "shared": True})
    assert pool.shared and pool.prefixes == ["10.20.0.0/24"]
    grown = admin.update_subnetpool(pool.id, {"prefixes": ["10.20.0.0/24", "10.20.1.0/24"]})
    assert grown.prefixes == ["10.20.0.0/23"]
    network = net.create_network({})
    subnet = net.create_subnet(
        {"network_id": network.id, "subnetpool_id": pool.id, "prefixlen": 23}
    )
    assert subnet.cidr == "10.20.0.0/23"
    other = net.create_network({})
    with pytest.raises(Unavailable) as full:  # Neutron answers a full pool with a 500
        net.create_subnet({"network_id": other.id, "subnetpool_id": pool.id, "prefixlen": 28})
    assert full.value.kind == "SubnetAllocationError"
    with pytest.raises(BadRequest) as err:
        admin.delete_subnetpool(pool.id)
    assert err.value.kind == "SubnetPoolDeleteError"
    net.delete_subnet(subnet.id)
    admin.delete_subnetpool(pool.id)
    with pytest.raises(NotFound):
        admin.get_subnetpool(pool.id)


def test_a_port_in_use_is_refused_by_nova(contract_cloud: Any) -> None:
    images = contract_cloud.sandbox.store.list("image")
    active = [i for i in images if i.get("status") == "active" and i.get("visibility") == "public"]
    if not active:
        pytest.skip("the sandbox has no public active image to boot from")
    net, compute = _net(contract_cloud), contract_cloud.client("compute")
    network = net.create_network({})
    net.create_subnet({"network_id": network.id, "cidr": "10.30.0.0/24"})
    port = net.create_port({"network_id": network.id})
    body = {"name": "vm", "imageRef": active[0]["id"], "flavorRef": "1"}
    holder = compute.create_server({**body, "networks": [{"port": port.id}]})
    other = compute.create_server({**body, "networks": "none"})
    with pytest.raises(Conflict) as err:
        compute.create_server({**body, "networks": [{"port": port.id}]})
    assert err.value.message == f"Port {port.id} is still in use."
    with pytest.raises(Conflict, match="is still in use"):
        compute.create_server_interface(other.id, {"port_id": port.id})
    assert net.get_port(port.id).device_id == holder.id
