"""Subnet pools of the simulated Neutron: the pool rules and subnets taken from pools."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from network_support import ADMIN, DEMO, OTHER, seeded_model

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable
from kiln.cloud.sandbox.network.ipam import first_fit, free_prefixes
from kiln.cloud.sandbox.network.model import NetworkModel


def _default_pool(model: NetworkModel) -> dict[str, Any]:
    (pool,) = model.list_subnetpools(DEMO, name="shared-default-subnetpool-v4")
    return pool


def _from_pool(model: NetworkModel, pool_id: str, **extra: Any) -> dict[str, Any]:
    network = model.create_network(DEMO, {})
    return model.create_subnet(
        DEMO, {"network_id": network["id"], "subnetpool_id": pool_id, **extra}
    )


def test_the_seed_has_a_shared_default_ipv4_pool() -> None:
    model = seeded_model()
    pool = _default_pool(model)
    assert pool["prefixes"] == ["10.0.0.0/16"]
    assert (pool["ip_version"], pool["shared"], pool["is_default"]) == (4, True, True)
    assert (pool["min_prefixlen"], pool["default_prefixlen"], pool["max_prefixlen"]) == (8, 26, 32)
    assert pool["address_scope_id"] is None and pool["default_quota"] is None
    assert model.list_subnetpools(OTHER, is_default=True, shared=True) == [pool]
    assert model.list_subnetpools(DEMO, id=pool["id"]) == [pool]
    assert model.list_subnetpools(DEMO, is_default=False) == []
    model.seed()
    assert len(model.list_subnetpools(ADMIN)) == 1


def test_subnets_take_consecutive_prefixes_and_give_them_back() -> None:
    model = seeded_model()
    pool = _default_pool(model)
    first = _from_pool(model, pool["id"], prefixlen=24)
    second = _from_pool(model, pool["id"], prefixlen=24)
    assert (first["cidr"], second["cidr"]) == ("10.0.0.0/24", "10.0.1.0/24")
    assert first["subnetpool_id"] == pool["id"] and first["ip_version"] == 4
    assert first["gateway_ip"] == "10.0.0.1"
    assert first["allocation_pools"] == [{"start": "10.0.0.2", "end": "10.0.0.254"}]
    model.delete_subnet(DEMO, first["id"])
    assert _from_pool(model, pool["id"], prefixlen=24)["cidr"] == "10.0.0.0/24"
    plain = model.create_network(DEMO, {})
    unpooled = model.create_subnet(DEMO, {"network_id": plain["id"], "cidr": "10.0.1.0/24"})
    assert unpooled["subnetpool_id"] is None  # pools do not see subnets outside them


def test_default_prefixlen_default_pool_and_a_specific_cidr() -> None:
    model = seeded_model()
    pool = _default_pool(model)
    network = model.create_network(DEMO, {})
    default = model.create_subnet(
        DEMO, {"network_id": network["id"], "use_default_subnetpool": True, "ip_version": 4}
    )
    assert default["cidr"] == "10.0.0.0/26" and default["subnetpool_id"] == pool["id"]
    asked = _from_pool(model, pool["id"], cidr="10.0.7.0/24")
    assert asked["cidr"] == "10.0.7.0/24"
    assert _from_pool(model, pool["id"])["cidr"] == "10.0.0.64/26"
    with pytest.raises(Unavailable) as err:  # Neutron's SubnetAllocationError is a 500
        _from_pool(model, pool["id"], cidr="10.0.7.128/25")
    assert err.value.kind == "SubnetAllocationError"
    with pytest.raises(Unavailable, match="available set of prefixes"):
        _from_pool(model, pool["id"], cidr="192.168.0.0/24")


def test_a_full_pool_refuses_the_next_subnet() -> None:
    model = seeded_model()
    pool = model.create_subnetpool(DEMO, {"name": "small", "prefixes": ["10.9.0.0/24"]})
    assert [_from_pool(model, pool["id"], prefixlen=25)["cidr"] for _ in range(2)] == [
        "10.9.0.0/25",
        "10.9.0.128/25",
    ]
    with pytest.raises(Unavailable) as err:
        _from_pool(model, pool["id"], prefixlen=25)
    assert err.value.http_status == 500 and err.value.kind == "SubnetAllocationError"
    assert "Insufficient prefix space to allocate subnet size /25" in err.value.message


@pytest.mark.parametrize(
    ("extra", "kind", "text"),
    [
        ({"prefixlen": 33}, "MaxPrefixSubnetAllocationError", "maximum allowed prefix is 32"),
        ({"prefixlen": 7}, "MinPrefixSubnetAllocationError", "minimum allowed prefix is 8"),
        ({"prefixlen": -1}, "InvalidInput", "should be non-negative"),
        ({"prefixlen": 24, "cidr": "10.0.0.0/24"}, "BadRequest", "must not be supplied together"),
        ({"use_default_subnetpool": True}, "BadRequest", "cannot both be specified"),
        ({"ip_version": 6}, "BadRequest", "Cannot allocate IPv6 subnet from IPv4 subnet pool"),
        (
            {"allocation_pools": [{"start": "10.0.0.2", "end": "10.0.0.9"}]},
            "BadRequest",
            "allocation_pools allowed only for specific subnet requests",
        ),
    ],
)
def test_subnet_from_pool_validation(extra: dict[str, Any], kind: str, text: str) -> None:
    model = seeded_model()
    with pytest.raises(BadRequest, match=text) as err:
        _from_pool(model, _default_pool(model)["id"], **extra)
    assert err.value.kind == kind


def test_unknown_hidden_or_malformed_pools() -> None:
    model = seeded_model()
    network = model.create_network(DEMO, {})
    with pytest.raises(BadRequest, match="is not a valid UUID"):
        model.create_subnet(DEMO, {"network_id": network["id"], "subnetpool_id": "pool-name"})
    private = model.create_subnetpool(OTHER, {"prefixes": ["10.8.0.0/16"]})
    for pool_id in (private["id"], "8a4a9a30-2d9e-4b6c-9a43-0b4a4c8a0e11"):
        with pytest.raises(NotFound) as err:
            model.create_subnet(DEMO, {"network_id": network["id"], "subnetpool_id": pool_id})
        assert err.value.kind == "SubnetPoolNotFound"
    with pytest.raises(BadRequest, match="No default subnetpool found for IPv6"):
        model.create_subnet(
            DEMO, {"network_id": network["id"], "use_default_subnetpool": True, "ip_version": 6}
        )


def test_one_network_takes_one_ip_version_from_one_pool() -> None:
    model = seeded_model()
    network = model.create_network(DEMO, {})
    model.create_subnet(DEMO, {"network_id": network["id"], "cidr": "192.168.5.0/24"})
    body = {"network_id": network["id"], "subnetpool_id": _default_pool(model)["id"]}
    with pytest.raises(BadRequest) as err:
        model.create_subnet(DEMO, body)
    assert err.value.kind == "NetworkSubnetPoolAffinityError"
    v6 = model.create_subnetpool(DEMO, {"prefixes": ["2001:db8::/48"], "default_prefixlen": 64})
    subnet = model.create_subnet(DEMO, {"network_id": network["id"], "subnetpool_id": v6["id"]})
    assert (subnet["cidr"], subnet["ip_version"]) == ("2001:db8::/64", 6)


def test_pool_create_rules() -> None:
    model = seeded_model()
    pool = model.create_subnetpool(
        DEMO, {"name": "p", "prefixes": ["10.5.0.0/25", "10.5.0.128/25", "10.5.0.0/26"]}
    )
    assert pool["prefixes"] == ["10.5.0.0/24"] and pool["project_id"] == DEMO.project_id
    assert pool["default_prefixlen"] == pool["min_prefixlen"] == 8
    assert model.get_subnetpool(DEMO, pool["id"]) == pool
    with pytest.raises(NotFound):
        model.get_subnetpool(OTHER, pool["id"])
    for key in ("shared", "is_default"):
        with pytest.raises(Forbidden):
            model.create_subnetpool(DEMO, {"prefixes": ["10.6.0.0/16"], key: True})
    with pytest.raises(BadRequest, match="default subnetpool for this IP family"):
        model.create_subnetpool(ADMIN, {"prefixes": ["10.6.0.0/16"], "is_default": True})


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"prefixes": []}, "EmptySubnetPoolPrefixList"),
        ({"prefixes": ["10.0.0.0/8", "2001:db8::/32"]}, "PrefixVersionMismatch"),
        ({"prefixes": ["10.0.0.1/8"]}, "InvalidInput"),
        ({"prefixes": ["10.0.0.0/8"], "min_prefixlen": 24, "max_prefixlen": 16}, None),
        ({"prefixes": ["10.0.0.0/8"], "max_prefixlen": 33}, None),
        ({"prefixes": ["10.0.0.0/8"], "default_prefixlen": 4}, None),
        ({"prefixes": ["10.0.0.0/8"], "ip_version": 4}, "HTTPBadRequest"),
        ({"name": "no prefixes"}, "HTTPBadRequest"),
    ],
)
def test_pool_create_validation(body: dict[str, Any], kind: str | None) -> None:
    model = seeded_model()
    with pytest.raises(BadRequest) as err:
        model.create_subnetpool(DEMO, body)
    assert err.value.kind == (kind or "IllegalSubnetPoolPrefixBounds")


def test_pool_update_and_delete() -> None:
    model = seeded_model()
    pool = model.create_subnetpool(DEMO, {"name": "p", "prefixes": ["10.5.0.0/24"]})
    revision = pool["revision_number"]
    grown = model.update_subnetpool(
        DEMO, pool["id"], {"name": "q", "prefixes": ["10.5.0.0/24", "10.5.1.0/24"]}
    )
    assert grown["name"] == "q" and grown["prefixes"] == ["10.5.0.0/23"]
    assert grown["revision_number"] == revision + 1
    with pytest.raises(BadRequest) as err:
        model.update_subnetpool(DEMO, pool["id"], {"prefixes": ["10.5.0.0/24"]})
    assert err.value.kind == "IllegalSubnetPoolPrefixUpdate"
    with pytest.raises(BadRequest, match="read-only attribute shared"):
        model.update_subnetpool(DEMO, pool["id"], {"shared": True})
    with pytest.raises(Forbidden):
        model.update_subnetpool(DEMO, pool["id"], {"is_default": True})
    with pytest.raises(Forbidden):  # everyone sees the seeded pool, only its owner changes it
        model.update_subnetpool(DEMO, _default_pool(model)["id"], {"name": "mine"})
    subnet = _from_pool(model, pool["id"], prefixlen=24)
    with pytest.raises(BadRequest) as err:
        model.delete_subnetpool(DEMO, pool["id"])
    assert err.value.kind == "SubnetPoolDeleteError"
    assert "Subnet pool has existing allocations" in err.value.message
    model.delete_subnet(DEMO, subnet["id"])
    model.delete_subnetpool(DEMO, pool["id"])
    with pytest.raises(NotFound):
        model.get_subnetpool(DEMO, pool["id"])


def test_default_quota_counts_the_addresses_a_project_took() -> None:
    model = seeded_model()
    pool = model.create_subnetpool(DEMO, {"prefixes": ["10.7.0.0/16"], "default_quota": 512})
    _from_pool(model, pool["id"], prefixlen=24)
    _from_pool(model, pool["id"], prefixlen=24)
    with pytest.raises(Conflict) as err:
        _from_pool(model, pool["id"], prefixlen=30)
    assert err.value.kind == "SubnetPoolQuotaExceeded"


def test_first_fit_keeps_big_blocks_whole() -> None:
    net = ipaddress.ip_network
    taken = [net("10.0.0.0/26"), net("10.0.0.128/26")]  # a /26 hole at .64 between them
    free = free_prefixes([net("10.0.0.0/16")], taken)
    assert net("10.0.0.64/26") in free and net("10.0.1.0/24") in free
    assert first_fit(free, 26) == net("10.0.0.64/26")
    assert first_fit(free, 24) == net("10.0.1.0/24")
    assert first_fit(free, 15) is None
    assert free_prefixes([net("10.0.0.0/24")], [net("10.0.0.0/16")]) == []
