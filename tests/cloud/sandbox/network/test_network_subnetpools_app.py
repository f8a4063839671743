"""``/v2.0/subnetpools`` and subnets from pools through the Neutron REST app."""

from __future__ import annotations

from typing import Any

import pytest
from falcon import testing
from network_support import ADMIN, DEMO, seeded_model

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.app import create_network_app

DEMO_HEADERS = {"X-Auth-Token": "demo-token"}
ADMIN_HEADERS = {"X-Auth-Token": "admin-token"}
#: Neutron's representation of a subnet pool (with the address-scope and standard attributes)
POOL_FIELDS = {
    "id",
    "name",
    "prefixes",
    "default_prefixlen",
    "min_prefixlen",
    "max_prefixlen",
    "ip_version",
    "shared",
    "is_default",
    "default_quota",
    "address_scope_id",
    "tenant_id",
    "project_id",
    "description",
    "tags",
    "created_at",
    "updated_at",
    "revision_number",
}


class _Tokens:
    def scope(self, token: str) -> CloudScope:
        scopes = {"demo-token": DEMO, "admin-token": ADMIN}
        if token not in scopes:
            raise Unauthorized("bad token")
        return scopes[token]


@pytest.fixture
def client() -> testing.TestClient:
    return testing.TestClient(create_network_app(seeded_model().cloud, _Tokens()))


def _post(client: testing.TestClient, path: str, body: dict[str, Any], **kw: Any) -> Any:
    result = client.simulate_post(path, json=body, headers=kw.get("headers", DEMO_HEADERS))
    assert result.status_code == 201, result.text
    return result.json


def _pools(client: testing.TestClient, query: str) -> list[dict[str, Any]]:
    result = client.simulate_get("/v2.0/subnetpools", query_string=query, headers=DEMO_HEADERS)
    assert result.status_code == 200, result.text
    pools: list[dict[str, Any]] = result.json["subnetpools"]
    return pools


def test_list_filters_and_representation(client: testing.TestClient) -> None:
    (seeded,) = _pools(client, "is_default=true&shared=true")
    assert set(seeded) == POOL_FIELDS
    assert seeded["name"] == "shared-default-subnetpool-v4"
    assert _pools(client, "name=shared-default-subnetpool-v4") == [seeded]
    assert _pools(client, f"id={seeded['id']}") == [seeded]
    assert _pools(client, "shared=false") == []
    shown = client.simulate_get(f"/v2.0/subnetpools/{seeded['id']}", headers=DEMO_HEADERS)
    assert shown.json == {"subnetpool": seeded}
    missing = client.simulate_get("/v2.0/subnetpools/nope", headers=DEMO_HEADERS)
    assert missing.status_code == 404
    assert missing.json["NeutronError"]["type"] == "SubnetPoolNotFound"
    extensions = client.simulate_get("/v2.0/extensions", headers=DEMO_HEADERS).json
    names = {e["alias"] for e in extensions["extensions"]}
    assert {"subnet_allocation", "default-subnetpools"} <= names


def test_pool_lifecycle_over_rest(client: testing.TestClient) -> None:
    made = _post(
        client, "/v2.0/subnetpools", {"subnetpool": {"name": "p", "prefixes": ["10.3.0.0/24"]}}
    )["subnetpool"]
    assert set(made) == POOL_FIELDS and made["ip_version"] == 4
    path = f"/v2.0/subnetpools/{made['id']}"
    tagged = client.simulate_put(path + "/tags", json={"tags": ["x"]}, headers=DEMO_HEADERS)
    assert tagged.json == {"tags": ["x"]}
    updated = client.simulate_put(
        path,
        json={"subnetpool": {"default_prefixlen": 28, "min_prefixlen": 24}},
        headers=DEMO_HEADERS,
    )
    assert updated.status_code == 200, updated.text
    shown = updated.json["subnetpool"]
    assert (shown["default_prefixlen"], shown["min_prefixlen"], shown["tags"]) == (28, 24, ["x"])
    network = _post(client, "/v2.0/networks", {"network": {}})["network"]
    subnet = _post(
        client,
        "/v2.0/subnets",
        {"subnet": {"network_id": network["id"], "subnetpool_id": made["id"], "ip_version": 4}},
    )["subnet"]
    assert (subnet["cidr"], subnet["subnetpool_id"]) == ("10.3.0.0/28", made["id"])
    refused = client.simulate_delete(path, headers=DEMO_HEADERS)
    assert refused.status_code == 400
    assert refused.json["NeutronError"]["type"] == "SubnetPoolDeleteError"
    gone = client.simulate_delete(f"/v2.0/subnets/{subnet['id']}", headers=DEMO_HEADERS)
    assert gone.status_code == 204
    assert client.simulate_delete(path, headers=DEMO_HEADERS).status_code == 204
    assert client.simulate_get(path, headers=DEMO_HEADERS).status_code == 404


def test_admin_only_attributes_and_exhaustion(client: testing.TestClient) -> None:
    body = {"subnetpool": {"prefixes": ["10.4.0.0/30"], "shared": True}}
    denied = client.simulate_post("/v2.0/subnetpools", json=body, headers=DEMO_HEADERS)
    assert denied.status_code == 403
    pool = _post(client, "/v2.0/subnetpools", body, headers=ADMIN_HEADERS)["subnetpool"]
    assert pool["shared"] is True and pool["min_prefixlen"] == 8
    network = _post(client, "/v2.0/networks", {"network": {}})["network"]
    request = {
        "subnet": {"network_id": network["id"], "subnetpool_id": pool["id"], "prefixlen": 30}
    }
    assert _post(client, "/v2.0/subnets", request)["subnet"]["cidr"] == "10.4.0.0/30"
    other = _post(client, "/v2.0/networks", {"network": {}})["network"]
    request["subnet"]["network_id"] = other["id"]
    full = client.simulate_post("/v2.0/subnets", json=request, headers=DEMO_HEADERS)
    assert full.status_code == 500
    assert full.json["NeutronError"]["type"] == "SubnetAllocationError"
    assert "Insufficient prefix space" in full.json["NeutronError"]["message"]
