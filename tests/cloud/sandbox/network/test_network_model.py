"""Rules of the simulated Neutron model: addresses, ports, routers, floating IPs, groups."""

from __future__ import annotations

import pytest
from network_support import ADMIN, DEMO, OTHER, seeded_model

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound, OverLimit
from kiln.cloud.sandbox.network.model import NetworkModel


def _net(model: NetworkModel, cidr: str = "10.0.0.0/24") -> tuple[dict, dict]:
    network = model.create_network(DEMO, {"name": "n"})
    subnet = model.create_subnet(DEMO, {"network_id": network["id"], "cidr": cidr})
    return network, subnet


def test_seed_is_idempotent() -> None:
    model = seeded_model()
    model.seed()
    publics = model.list_networks(DEMO, name="public")
    assert len(publics) == 1 and publics[0]["router:external"]
    assert len(model.list_subnets(DEMO, name="public-subnet")) == 1


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"cidr": "10.0.0.5/24"}, "InvalidInput"),
        ({"cidr": "10.0.0.0/24", "ip_version": 6}, "InvalidInput"),
        (
            {
                "cidr": "10.0.0.0/24",
                "gateway_ip": "10.0.0.2",
                "allocation_pools": [{"start": "10.0.0.2", "end": "10.0.0.9"}],
            },
            "GatewayConflictWithAllocationPools",
        ),
        (
            {"cidr": "10.0.0.0/24", "allocation_pools": [{"start": "10.0.1.2", "end": "10.0.1.9"}]},
            "OutOfBoundsAllocationPool",
        ),
    ],
)
def test_subnet_validation(body: dict, kind: str) -> None:
    model = seeded_model()
    network = model.create_network(DEMO, {})
    with pytest.raises(BadRequest) as err:
        model.create_subnet(DEMO, {"network_id": network["id"], **body})
    assert err.value.kind == kind


def test_subnet_gateway_and_pools() -> None:
    model = seeded_model()
    network = model.create_network(DEMO, {})
    middle = model.create_subnet(
        DEMO, {"network_id": network["id"], "cidr": "10.0.0.0/29", "gateway_ip": "10.0.0.3"}
    )
    assert middle["allocation_pools"] == [
        {"start": "10.0.0.1", "end": "10.0.0.2"},
        {"start": "10.0.0.4", "end": "10.0.0.6"},
    ]
    with pytest.raises(BadRequest):  # overlaps
        model.create_subnet(DEMO, {"network_id": network["id"], "cidr": "10.0.0.0/28"})
    none = model.create_subnet(
        DEMO, {"network_id": network["id"], "cidr": "10.0.1.0/30", "gateway_ip": None}
    )
    assert none["gateway_ip"] is None
    assert none["allocation_pools"] == [{"start": "10.0.1.1", "end": "10.0.1.2"}]
    v6 = model.create_subnet(
        DEMO, {"network_id": network["id"], "cidr": "fd00::/64", "ip_version": 6}
    )
    assert v6["gateway_ip"] == "fd00::1"


def test_other_projects_network_is_hidden_and_subnets_forbidden() -> None:
    model = seeded_model()
    network = model.create_network(OTHER, {})
    with pytest.raises(NotFound):
        model.create_subnet(DEMO, {"network_id": network["id"], "cidr": "10.0.0.0/24"})
    public = model.find_network_internal(DEMO.project_id, "public")
    with pytest.raises(Forbidden):
        model.create_subnet(DEMO, {"network_id": public["id"], "cidr": "10.5.0.0/24"})
    with pytest.raises(Forbidden):
        model.create_network(DEMO, {"shared": True})


def test_pool_exhaustion_and_ip_rules() -> None:
    model = seeded_model()
    network, subnet = _net(model, "10.0.0.0/30")  # one address: .2 (.1 is the gateway)
    model.create_port(DEMO, {"network_id": network["id"]})
    with pytest.raises(Conflict) as err:
        model.create_port(DEMO, {"network_id": network["id"]})
    assert err.value.kind == "IpAddressGenerationFailure"
    with pytest.raises(BadRequest):
        model.create_port(
            DEMO, {"network_id": network["id"], "fixed_ips": [{"ip_address": "10.9.9.9"}]}
        )
    empty = model.create_port(DEMO, {"network_id": network["id"], "fixed_ips": []})
    assert empty["fixed_ips"] == []
    with pytest.raises(Conflict) as err:
        model.create_port(DEMO, {"network_id": network["id"], "mac_address": empty["mac_address"]})
    assert err.value.kind == "MacAddressInUse"
    with pytest.raises(Conflict) as err:
        model.delete_subnet(DEMO, subnet["id"])
    assert err.value.kind == "SubnetInUse"


def test_port_security_groups_rules() -> None:
    model = seeded_model()
    network, _ = _net(model)
    with pytest.raises(NotFound):
        model.create_port(DEMO, {"network_id": network["id"], "security_groups": ["nope"]})
    with pytest.raises(BadRequest):
        sg = model.list_security_groups(DEMO)[0]["id"]
        model.create_port(
            DEMO,
            {"network_id": network["id"], "port_security_enabled": False, "security_groups": [sg]},
        )
    bare = model.create_port(DEMO, {"network_id": network["id"], "port_security_enabled": False})
    assert bare["security_groups"] == []


def test_bind_and_unbind_port() -> None:
    model = seeded_model()
    network, _ = _net(model)
    port = model.create_port_internal(DEMO.project_id, {"network_id": network["id"]})
    bound = model.bind_port(port["id"], "server-1", "compute:nova")
    assert bound["status"] == "ACTIVE" and bound["binding:vif_type"] == "ovs"
    assert [p["id"] for p in model.ports_of_device("server-1")] == [port["id"]]
    addresses = model.addresses_of_device("server-1")
    assert addresses["n"][0]["OS-EXT-IPS:type"] == "fixed"
    unbound = model.unbind_port(port["id"])
    assert unbound["status"] == "DOWN" and unbound["device_id"] == ""
    model.delete_port_internal(port["id"])
    with pytest.raises(NotFound):
        model.delete_port_internal(port["id"])


def test_bind_delay_passes_through_build() -> None:
    model = seeded_model()
    model.sim.delays["network.port.bind"] = float("inf")
    network, _ = _net(model)
    port = model.create_port(DEMO, {"network_id": network["id"]})
    assert model.bind_port(port["id"], "s", "compute:nova")["status"] == "BUILD"


def test_router_interface_by_port_and_l3_port_delete() -> None:
    model = seeded_model()
    network, subnet = _net(model)
    router = model.create_router(DEMO, {"name": "r"})
    port = model.create_port(DEMO, {"network_id": network["id"]})
    info = model.add_router_interface(DEMO, router["id"], {"port_id": port["id"]})
    assert info["port_id"] == port["id"]
    with pytest.raises(BadRequest):
        model.add_router_interface(DEMO, router["id"], {"subnet_id": subnet["id"]})
    with pytest.raises(Conflict) as err:
        model.delete_port(DEMO, port["id"])
    assert err.value.kind == "L3PortInUse"
    model.remove_router_interface(DEMO, router["id"], {"port_id": port["id"]})
    released = model.get_port(DEMO, port["id"])
    assert released["device_owner"] == "" and released["status"] == "DOWN"


def test_router_gateway_rules() -> None:
    model = seeded_model()
    network, _ = _net(model)
    with pytest.raises(BadRequest):
        model.create_router(DEMO, {"external_gateway_info": {"network_id": network["id"]}})
    public = model.find_network_internal(DEMO.project_id, "public")
    with pytest.raises(Forbidden):
        model.create_router(
            DEMO, {"external_gateway_info": {"network_id": public["id"], "enable_snat": False}}
        )
    router = model.create_router(DEMO, {"external_gateway_info": {"network_id": public["id"]}})
    cleared = model.update_router(DEMO, router["id"], {"external_gateway_info": None})
    assert cleared["external_gateway_info"] is None
    assert not model.list_ports(ADMIN, device_id=router["id"])


def test_auto_network_and_security_group_lookup() -> None:
    model = seeded_model()
    with pytest.raises(BadRequest):
        model.auto_network_internal(DEMO.project_id)
    network = model.create_network(DEMO, {"name": "only"})
    assert model.auto_network_internal(DEMO.project_id)["id"] == network["id"]
    model.create_network(DEMO, {"name": "second"})
    with pytest.raises(BadRequest, match="Multiple possible networks"):
        model.auto_network_internal(DEMO.project_id)
    ids = model.security_group_ids_internal(DEMO.project_id, ["default"])
    assert len(ids) == 1
    with pytest.raises(BadRequest):
        model.security_group_ids_internal(DEMO.project_id, ["missing"])


def test_security_group_rule_validation() -> None:
    model = seeded_model()
    group = model.create_security_group(DEMO, {"name": "g"})
    base = {"security_group_id": group["id"], "direction": "ingress"}
    for bad in (
        {"port_range_min": 1, "port_range_max": 2},
        {"protocol": "tcp", "port_range_min": 10, "port_range_max": 2},
        {"protocol": "gre", "port_range_min": 1, "port_range_max": 2},
        {"remote_ip_prefix": "10.0.0.0/8", "remote_group_id": group["id"]},
        {"ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"},
        {"protocol": "bogus"},
    ):
        with pytest.raises(BadRequest):
            model.create_security_group_rule(DEMO, {**base, **bad})
    with pytest.raises(Conflict):  # the bulk create is all or nothing
        model.create_security_group_rules(DEMO, [{**base, "protocol": "47"}] * 2)
    assert len(model.get_security_group(DEMO, group["id"])["security_group_rules"]) == 2
    with pytest.raises(Conflict):
        model.create_security_group(DEMO, {"name": "default"})
    default = model.list_security_groups(DEMO, name="default")[0]
    with pytest.raises(Conflict):
        model.delete_security_group(DEMO, default["id"])


def test_quota_is_409_over_quota() -> None:
    model = seeded_model()
    model.sim.project_quotas[DEMO.project_id] = {"networks": 1}
    model.create_network(DEMO, {})
    with pytest.raises(OverLimit) as err:
        model.create_network(DEMO, {})
    assert err.value.http_status == 409 and err.value.kind == "OverQuota"


def test_unknown_attribute_is_rejected() -> None:
    model = seeded_model()
    with pytest.raises(BadRequest):
        model.create_network(DEMO, {"bogus": 1})
