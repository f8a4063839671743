"""The compute REST app: version documents, microversions, status codes and error bodies."""

from __future__ import annotations

from typing import Any

from falcon import testing

DEMO = {"X-Auth-Token": "demo-token"}


def mv(version: str) -> dict[str, str]:
    return {**DEMO, "OpenStack-API-Version": f"compute {version}"}


SERVER: dict[str, Any] = {
    "server": {"name": "a", "imageRef": "img", "flavorRef": "1", "networks": "none"}
}


def test_version_documents_are_public(client: testing.TestClient):
    root = client.simulate_get("/")
    assert [v["id"] for v in root.json["versions"]] == ["v2.0", "v2.1"]
    version = client.simulate_get("/v2.1/").json["version"]
    assert (version["version"], version["min_version"]) == ("2.90", "2.1")
    assert version["links"][0]["href"].endswith("/v2.1/")


def test_token_required(client: testing.TestClient):
    response = client.simulate_get("/v2.1/servers")
    assert response.status_code == 401
    assert response.json["unauthorized"]["code"] == 401


def test_microversion_negotiation(client: testing.TestClient):
    response = client.simulate_get("/v2.1/servers", headers=mv("2.99"))
    assert response.status_code == 406
    assert "maximum is 2.90" in response.json["computeFault"]["message"]
    assert client.simulate_get("/v2.1/servers", headers=mv("two")).status_code == 400
    response = client.simulate_get("/v2.1/servers", headers=mv("latest"))
    assert response.headers["OpenStack-API-Version"] == "compute 2.90"
    legacy = client.simulate_get(
        "/v2.1/servers", headers={**DEMO, "X-OpenStack-Nova-API-Version": "2.37"}
    )
    assert legacy.headers["X-OpenStack-Nova-API-Version"] == "2.37"
    assert (
        client.simulate_get("/v2.1/servers", headers=DEMO).headers["OpenStack-API-Version"]
        == "compute 2.1"
    )


def test_server_create_show_delete(client: testing.TestClient):
    created = client.simulate_post("/v2.1/servers", json=SERVER, headers=mv("2.90"))
    assert created.status_code == 202
    server_id = created.json["server"]["id"]
    assert created.json["server"]["adminPass"]
    assert created.headers["Location"].endswith(f"/servers/{server_id}")
    shown = client.simulate_get(f"/v2.1/servers/{server_id}", headers=mv("2.90")).json["server"]
    assert shown["status"] == "ACTIVE" and shown["flavor"]["original_name"] == "m1.tiny"
    assert "OS-EXT-SRV-ATTR:host" not in shown  # admin only
    legacy = client.simulate_get(f"/v2.1/demo-project/servers/{server_id}", headers=DEMO)
    assert legacy.json["server"]["flavor"]["id"] == "1"
    listed = client.simulate_get("/v2.1/servers", headers=DEMO).json["servers"]
    assert listed[0].keys() == {"id", "name", "links"}
    assert client.simulate_delete(f"/v2.1/servers/{server_id}", headers=DEMO).status_code == 204
    gone = client.simulate_get(f"/v2.1/servers/{server_id}", headers=DEMO)
    assert gone.status_code == 404 and "itemNotFound" in gone.json


def test_actions_and_conflicts(client: testing.TestClient):
    server_id = client.simulate_post("/v2.1/servers", json=SERVER, headers=mv("2.90")).json[
        "server"
    ]["id"]
    url = f"/v2.1/servers/{server_id}/action"
    assert client.simulate_post(url, json={"resume": None}, headers=DEMO).status_code == 409
    assert client.simulate_post(url, json={"suspend": None}, headers=DEMO).status_code == 202
    assert client.simulate_post(url, json={"resume": None}, headers=DEMO).status_code == 202
    assert (
        client.simulate_post(url, json={"resize": {"flavorRef": "2"}}, headers=DEMO).status_code
        == 202
    )
    assert client.simulate_post(url, json={"confirmResize": None}, headers=DEMO).status_code == 204
    assert client.simulate_post(url, json={"bogus": None}, headers=DEMO).status_code == 400


def test_metadata_and_tag_endpoints(client: testing.TestClient):
    server_id = client.simulate_post("/v2.1/servers", json=SERVER, headers=mv("2.90")).json[
        "server"
    ]["id"]
    base = f"/v2.1/servers/{server_id}"
    merged = client.simulate_post(f"{base}/metadata", json={"metadata": {"a": "1"}}, headers=DEMO)
    assert merged.json == {"metadata": {"a": "1"}}
    item = client.simulate_put(f"{base}/metadata/b", json={"meta": {"b": "2"}}, headers=DEMO)
    assert item.json == {"meta": {"b": "2"}}
    assert (
        client.simulate_put(
            f"{base}/metadata/b", json={"meta": {"c": "2"}}, headers=DEMO
        ).status_code
        == 400
    )
    assert client.simulate_delete(f"{base}/metadata/a", headers=DEMO).status_code == 204
    assert client.simulate_get(f"{base}/tags", headers=DEMO).status_code == 404  # below 2.26
    assert client.simulate_put(f"{base}/tags/x", headers=mv("2.26")).status_code == 201
    assert client.simulate_put(f"{base}/tags/x", headers=mv("2.26")).status_code == 204
    assert client.simulate_get(f"{base}/tags", headers=mv("2.26")).json == {"tags": ["x"]}
    assert client.simulate_get(f"{base}/tags/y", headers=mv("2.26")).status_code == 404


def test_keypair_shapes_by_microversion(client: testing.TestClient):
    old = client.simulate_post("/v2.1/os-keypairs", json={"keypair": {"name": "k1"}}, headers=DEMO)
    assert old.status_code == 200 and "type" not in old.json["keypair"]
    assert old.json["keypair"]["private_key"]
    new = client.simulate_post(
        "/v2.1/os-keypairs", json={"keypair": {"name": "k2"}}, headers=mv("2.10")
    )
    assert new.status_code == 201 and new.json["keypair"]["type"] == "ssh"
    listed = client.simulate_get("/v2.1/os-keypairs", headers=mv("2.10")).json["keypairs"]
    assert [k["keypair"]["name"] for k in listed] == ["k1", "k2"]
    shown = client.simulate_get("/v2.1/os-keypairs/k2", headers=mv("2.10")).json["keypair"]
    assert shown["deleted"] is False and "private_key" not in shown
    assert client.simulate_delete("/v2.1/os-keypairs/k1", headers=DEMO).status_code == 202
    assert client.simulate_delete("/v2.1/os-keypairs/k2", headers=mv("2.10")).status_code == 204


def test_server_group_shapes(client: testing.TestClient):
    body = {"server_group": {"name": "g", "policies": ["affinity"]}}
    old = client.simulate_post("/v2.1/os-server-groups", json=body, headers=DEMO).json
    assert old["server_group"]["policies"] == ["affinity"]
    shown = client.simulate_get(
        f"/v2.1/os-server-groups/{old['server_group']['id']}", headers=mv("2.64")
    ).json["server_group"]
    assert shown["policy"] == "affinity" and "policies" not in shown
    assert (
        client.simulate_post("/v2.1/os-server-groups", json=body, headers=mv("2.64")).status_code
        == 400
    )


def test_flavors_limits_zones(client: testing.TestClient):
    admin = {"X-Auth-Token": "admin-token", "OpenStack-API-Version": "compute 2.61"}
    flavor = client.simulate_get("/v2.1/flavors/1", headers=DEMO).json["flavor"]
    assert flavor["swap"] == "" and "extra_specs" not in flavor
    made = client.simulate_post(
        "/v2.1/flavors",
        json={"flavor": {"name": "x", "ram": 64, "vcpus": 1, "disk": 1}},
        headers=admin,
    )
    assert made.status_code == 200 and made.json["flavor"]["extra_specs"] == {}
    denied = client.simulate_post(
        "/v2.1/flavors",
        json={"flavor": {"name": "y", "ram": 64, "vcpus": 1, "disk": 1}},
        headers=DEMO,
    )
    assert denied.status_code == 403 and "forbidden" in denied.json
    detail = client.simulate_get("/v2.1/flavors/detail", params={"is_public": "None"}, headers=DEMO)
    assert len(detail.json["flavors"]) == 6
    limits = client.simulate_get("/v2.1/limits", headers=mv("2.57")).json["limits"]["absolute"]
    assert limits["maxServerMeta"] == 128 and "maxPersonality" not in limits
    zones = client.simulate_get("/v2.1/os-availability-zone", headers=DEMO).json
    assert zones["availabilityZoneInfo"][0]["zoneName"] == "nova"
