"""Neutron scenarios through both NetworkApi adapters (in-process and openstacksdk/REST)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.cloud.api.errors import Conflict, MultipleMatches, NotFound
from kiln.cloud.api.network import NetworkApi


def _net(contract_cloud: Any) -> NetworkApi:
    client: NetworkApi = contract_cloud.client("network")
    return client


def _topology(net: NetworkApi) -> dict[str, Any]:
    public = net.find_network("public")
    network = net.create_network({"name": "private"})
    subnet = net.create_subnet(
        {"network_id": network.id, "cidr": "10.1.0.0/24", "name": "private-subnet"}
    )
    router = net.create_router({"name": "r1", "external_gateway_info": {"network_id": public.id}})
    port = net.create_port({"network_id": network.id, "name": "p1"})
    return {"public": public, "network": network, "subnet": subnet, "router": router, "port": port}


def test_seeded_public_network_and_extensions(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    public = net.find_network("public")
    assert public.is_external
    subnet = net.find_subnet("public-subnet")
    assert subnet.cidr == "172.24.4.0/24"
    assert subnet.gateway_ip == "172.24.4.1"
    assert net.has_extension("router") and net.has_extension("security-group")
    assert not net.has_extension("qos")


def test_network_subnet_port_lifecycle(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    network = net.create_network({"name": "n1"})
    assert network.status == "ACTIVE"
    subnet = net.create_subnet({"network_id": network.id, "cidr": "10.0.0.0/24"})
    assert subnet.allocation_pools == [{"start": "10.0.0.2", "end": "10.0.0.254"}]
    port = net.create_port({"network_id": network.id})
    assert port.status == "DOWN"
    assert port.fixed_ips == [{"subnet_id": subnet.id, "ip_address": "10.0.0.2"}]
    assert port.mac_address is not None and port.mac_address.startswith("fa:16:3e:")
    default = net.find_security_group("default", project_id=port.project_id)
    assert port.security_group_ids == [default.id]
    assert net.get_network(network.id).subnet_ids == [subnet.id]
    with pytest.raises(Conflict) as err:
        net.delete_network(network.id)
    assert err.value.kind == "NetworkInUse"
    with pytest.raises(Conflict) as err:
        net.create_port({"network_id": network.id, "fixed_ips": [{"ip_address": "10.0.0.2"}]})
    assert err.value.kind == "IpAddressAlreadyAllocated"
    updated = net.update_port(port.id, {"name": "renamed", "fixed_ips": []})
    assert updated.name == "renamed" and updated.fixed_ips == []
    net.delete_port(port.id)
    with pytest.raises(NotFound):
        net.get_port(port.id)
    net.delete_network(network.id)
    with pytest.raises(NotFound):
        net.get_subnet(subnet.id)


def test_list_filters_and_find(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    a = net.create_network({"name": "same"})
    b = net.create_network({"name": "same"})
    c = net.create_network({"name": "other"})
    ids = {n.id for n in net.list_networks(id=[a.id, c.id])}
    assert ids == {a.id, c.id}
    assert {n.id for n in net.list_networks(name="same")} == {a.id, b.id}
    with pytest.raises(MultipleMatches):
        net.find_network("same")
    with pytest.raises(NotFound):
        net.find_network("missing")
    assert net.find_network(c.id).name == "other"
    assert net.set_tags("networks", a.id, ["x", "y"]) == ["x", "y"]
    assert [n.id for n in net.list_networks(tags="x,y")] == [a.id]
    assert a.id not in {n.id for n in net.list_networks(**{"not-tags-any": "x"})}


def test_floating_ip_needs_router_interface(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    topo = _topology(net)
    fip = net.create_floating_ip({"floating_network_id": topo["public"].id})
    assert fip.status == "DOWN" and fip.port_id is None
    with pytest.raises(NotFound) as err:
        net.update_floating_ip(fip.id, {"port_id": topo["port"].id})
    assert err.value.kind == "ExternalGatewayForFloatingIPNotFound"
    info = net.add_router_interface(topo["router"].id, subnet_id=topo["subnet"].id)
    assert info["subnet_id"] == topo["subnet"].id and info["id"] == topo["router"].id
    associated = net.update_floating_ip(fip.id, {"port_id": topo["port"].id})
    assert associated.status == "ACTIVE"
    assert associated.router_id == topo["router"].id
    assert associated.fixed_ip_address == topo["port"].fixed_ips[0]["ip_address"]
    listed = net.list_floating_ips(port_id=topo["port"].id)
    assert [f.id for f in listed] == [fip.id]
    second = net.create_floating_ip({"floating_network_id": topo["public"].id})
    with pytest.raises(Conflict) as err:
        net.update_floating_ip(second.id, {"port_id": topo["port"].id})
    assert err.value.kind == "FloatingIPPortAlreadyAssociated"
    with pytest.raises(Conflict) as err:
        net.remove_router_interface(topo["router"].id, subnet_id=topo["subnet"].id)
    assert err.value.kind == "RouterInterfaceInUseByFloatingIP"
    with pytest.raises(Conflict) as err:
        net.delete_router(topo["router"].id)
    assert err.value.kind == "RouterInUse"
    net.update_floating_ip(fip.id, {"port_id": None})
    assert net.get_floating_ip(fip.id).status == "DOWN"
    net.remove_router_interface(topo["router"].id, subnet_id=topo["subnet"].id)
    with pytest.raises(NotFound):
        net.remove_router_interface(topo["router"].id, subnet_id=topo["subnet"].id)
    net.delete_router(topo["router"].id)
    net.delete_floating_ip(fip.id)
    with pytest.raises(NotFound):
        net.get_floating_ip(fip.id)


def test_security_groups_and_rules(contract_cloud: Any) -> None:
    net = _net(contract_cloud)
    group = net.create_security_group({"name": "web"})
    assert sorted(r.ethertype for r in group.rules) == ["IPv4", "IPv6"]
    assert all(r.direction == "egress" for r in group.rules)
    rule = net.create_security_group_rule(
        {
            "security_group_id": group.id,
            "direction": "ingress",
            "protocol": "tcp",
            "port_range_min": "80",
            "port_range_max": "80",
            "remote_ip_prefix": "10.0.0.5/24",
        }
    )
    assert rule.port_range_min == 80 and rule.raw["normalized_cidr"] == "10.0.0.0/24"
    with pytest.raises(Conflict) as err:
        net.create_security_group_rule(
            {
                "security_group_id": group.id,
                "direction": "ingress",
                "protocol": "6",
                "port_range_min": 80,
                "port_range_max": 80,
                "remote_ip_prefix": "10.0.0.0/24",
            }
        )
    assert err.value.kind == "SecurityGroupRuleExists"
    bulk = net.create_security_group_rules(
        [
            {"security_group_id": group.id, "direction": "ingress", "protocol": "icmp"},
            {
                "security_group_id": group.id,
                "direction": "ingress",
                "protocol": "udp",
                "port_range_min": 53,
                "port_range_max": 53,
            },
        ]
    )
    assert len(bulk) == 2
    assert len(net.get_security_group(group.id).rules) == 5
    network = net.create_network({"name": "sg-net"})
    net.create_subnet({"network_id": network.id, "cidr": "10.9.0.0/24"})
    port = net.create_port({"network_id": network.id, "security_groups": [group.id]})
    with pytest.raises(Conflict) as err:
        net.delete_security_group(group.id)
    assert err.value.kind == "SecurityGroupInUse"
    net.delete_port(port.id)
    net.delete_security_group_rule(rule.id)
    with pytest.raises(NotFound):
        net.get_security_group_rule(rule.id)
    net.delete_security_group(group.id)
    with pytest.raises(NotFound):
        net.get_security_group(group.id)


def test_projects_are_isolated(contract_cloud: Any) -> None:
    demo = _net(contract_cloud)
    admin: NetworkApi = contract_cloud.client("network", admin=True)
    private = admin.create_network({"name": "admin-only"})
    with pytest.raises(NotFound):
        demo.get_network(private.id)
    assert private.id not in {n.id for n in demo.list_networks()}
    mine = demo.create_network({"name": "demo-net"})
    assert admin.get_network(mine.id).project_id == mine.project_id
