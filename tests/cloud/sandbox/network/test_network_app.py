"""The Neutron REST app over the simulated model, through Falcon's test client."""

from __future__ import annotations

from typing import Any

import pytest
from falcon import testing
from network_support import DEMO, seeded_model

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.app import create_network_app

HEADERS = {"X-Auth-Token": "demo-token"}


class _Tokens:
    def scope(self, token: str) -> CloudScope:
        if token != "demo-token":
            raise Unauthorized("bad token")
        return DEMO


@pytest.fixture
def client() -> testing.TestClient:
    model = seeded_model()
    return testing.TestClient(create_network_app(model.cloud, _Tokens()))


def _post(client: testing.TestClient, path: str, body: dict[str, Any]) -> Any:
    result = client.simulate_post(path, json=body, headers=HEADERS)
    assert result.status_code == 201, result.text
    return result.json


def test_versions_document_is_public(client: testing.TestClient) -> None:
    result = client.simulate_get("/")
    assert result.status_code == 200
    assert result.json["versions"][0]["id"] == "v2.0"
    assert result.json["versions"][0]["links"][0]["href"].endswith("/v2.0/")
    assert client.simulate_get("/v2.0/networks").status_code == 401


def test_errors_are_neutron_bodies(client: testing.TestClient) -> None:
    result = client.simulate_get("/v2.0/networks/nope", headers=HEADERS)
    assert result.status_code == 404
    assert result.json["NeutronError"]["type"] == "NetworkNotFound"
    result = client.simulate_post("/v2.0/networks", json={"nothing": {}}, headers=HEADERS)
    assert result.status_code == 400 and "NeutronError" in result.json


def test_bulk_create_filters_fields_and_paging(client: testing.TestClient) -> None:
    created = _post(client, "/v2.0/networks", {"networks": [{"name": "a"}, {"name": "b"}]})
    a, b = (n["id"] for n in created["networks"])
    result = client.simulate_get(
        "/v2.0/networks", query_string=f"id={a}&id={b}&fields=id&fields=name", headers=HEADERS
    )
    assert sorted(n["name"] for n in result.json["networks"]) == ["a", "b"]
    assert set(result.json["networks"][0]) == {"id", "name"}
    page = client.simulate_get("/v2.0/networks", query_string="limit=1", headers=HEADERS).json
    assert len(page["networks"]) == 1 and page["networks_links"][0]["rel"] == "next"
    everything = client.simulate_get("/v2.0/networks", headers=HEADERS).json
    assert "networks_links" not in everything and len(everything["networks"]) == 3


def test_tags_endpoints(client: testing.TestClient) -> None:
    network = _post(client, "/v2.0/networks", {"network": {"name": "t"}})["network"]
    base = f"/v2.0/networks/{network['id']}/tags"
    result = client.simulate_put(base, json={"tags": ["a", "b"]}, headers=HEADERS)
    assert result.json == {"tags": ["a", "b"]}
    assert client.simulate_put(base + "/c", headers=HEADERS).status_code == 201
    assert client.simulate_get(base + "/c", headers=HEADERS).status_code == 204
    assert client.simulate_delete(base + "/a", headers=HEADERS).status_code == 204
    assert client.simulate_get(base + "/a", headers=HEADERS).status_code == 404
    assert client.simulate_get(base, headers=HEADERS).json == {"tags": ["b", "c"]}
    shown = client.simulate_get(f"/v2.0/networks/{network['id']}", headers=HEADERS).json
    assert shown["network"]["revision_number"] >= 3


def test_router_interface_actions(client: testing.TestClient) -> None:
    network = _post(client, "/v2.0/networks", {"network": {}})["network"]
    subnet = _post(
        client, "/v2.0/subnets", {"subnet": {"network_id": network["id"], "cidr": "10.0.0.0/24"}}
    )["subnet"]
    router = _post(client, "/v2.0/routers", {"router": {"name": "r"}})["router"]
    path = f"/v2.0/routers/{router['id']}"
    added = client.simulate_put(
        path + "/add_router_interface", json={"subnet_id": subnet["id"]}, headers=HEADERS
    )
    assert added.status_code == 200 and added.json["subnet_ids"] == [subnet["id"]]
    assert client.simulate_delete(path, headers=HEADERS).json["NeutronError"]["type"] == (
        "RouterInUse"
    )
    removed = client.simulate_put(
        path + "/remove_router_interface", json={"subnet_id": subnet["id"]}, headers=HEADERS
    )
    assert removed.status_code == 200
    assert client.simulate_delete(path, headers=HEADERS).status_code == 204


def test_extensions_and_segments(client: testing.TestClient) -> None:
    extensions = client.simulate_get("/v2.0/extensions", headers=HEADERS).json["extensions"]
    assert "router" in {e["alias"] for e in extensions}
    assert client.simulate_get("/v2.0/extensions/qos", headers=HEADERS).status_code == 404
    network = _post(client, "/v2.0/networks", {"network": {}})["network"]
    segments = client.simulate_get(
        "/v2.0/segments", query_string=f"network_id={network['id']}", headers=HEADERS
    ).json["segments"]
    assert len(segments) == 1
    assert client.simulate_post("/v2.0/segments", json={}, headers=HEADERS).status_code == 405
