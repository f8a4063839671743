"""The simulated Glance REST app: version document, status codes, error bodies, patches."""

from __future__ import annotations

import json

import pytest
from falcon import testing

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image.app import create_image_app
from kiln.cloud.sandbox.image.model import ImageModel

PATCH = "application/openstack-images-v2.1-json-patch"


class Tokens:
    def scope(self, token: str) -> CloudScope:
        if token == "demo":
            return CloudScope("demo-project", "demo-user", frozenset({"member"}))
        raise Unauthorized("bad token")


@pytest.fixture
def client() -> testing.TestClient:
    cloud = SandboxCloud()
    cloud.add("image", ImageModel(cloud))
    cloud.image.seed()
    return testing.TestClient(create_image_app(cloud, Tokens()), headers={"X-Auth-Token": "demo"})


def test_versions_are_public(client: testing.TestClient) -> None:
    for path in ("/", "/versions"):
        result = client.simulate_get(path, headers={"X-Auth-Token": ""})
        assert result.status_code == 300
        versions = result.json["versions"]
        assert versions[0]["id"] == "v2.16" and versions[0]["status"] == "CURRENT"
        assert versions[0]["links"][0]["href"].endswith("/v2/")
        assert versions[-1]["id"] == "v2.0"


def test_token_required(client: testing.TestClient) -> None:
    assert client.simulate_get("/v2/images", headers={"X-Auth-Token": "bad"}).status_code == 401


def test_list_and_get(client: testing.TestClient) -> None:
    body = client.simulate_get("/v2/images", params={"name": "cirros"}).json
    assert body["first"] == "/v2/images" and len(body["images"]) == 1
    image = body["images"][0]
    got = client.simulate_get(f"/v2/images/{image['id']}")
    assert got.status_code == 200 and got.json["self"] == f"/v2/images/{image['id']}"
    paged = client.simulate_get("/v2/images", params={"limit": "1"}).json
    assert "next" in paged


def test_errors_are_plain_text(client: testing.TestClient) -> None:
    result = client.simulate_get("/v2/images/not-a-uuid")
    assert result.status_code == 404
    assert result.text.startswith("404 Not Found") and "not-a-uuid" in result.text


def test_create_import_patch_delete(client: testing.TestClient) -> None:
    created = client.simulate_post(
        "/v2/images", json={"name": "w", "disk_format": "raw", "container_format": "bare"}
    )
    assert created.status_code == 201 and created.json["status"] == "queued"
    image_id = created.json["id"]
    imported = client.simulate_post(
        f"/v2/images/{image_id}/import",
        json={"method": {"name": "web-download", "uri": "https://example.com/x.img"}},
    )
    assert imported.status_code == 202
    assert client.simulate_get(f"/v2/images/{image_id}").json["status"] == "active"

    ops = [{"op": "replace", "path": "/name", "value": "w2"}]
    wrong_type = client.simulate_patch(f"/v2/images/{image_id}", json=ops)
    assert wrong_type.status_code == 415
    patched = client.simulate_patch(
        f"/v2/images/{image_id}", body=json.dumps(ops), headers={"Content-Type": PATCH}
    )
    assert patched.status_code == 200 and patched.json["name"] == "w2"

    assert client.simulate_put(f"/v2/images/{image_id}/tags/t").status_code == 204
    assert client.simulate_delete(f"/v2/images/{image_id}/tags/t").status_code == 204
    assert client.simulate_delete(f"/v2/images/{image_id}/tags/t").status_code == 404
    assert client.simulate_delete(f"/v2/images/{image_id}").status_code == 204
    assert client.simulate_get(f"/v2/images/{image_id}").status_code == 404


def test_import_methods_are_advertised(client: testing.TestClient) -> None:
    info = client.simulate_get("/v2/info/import").json
    assert "web-download" in info["import-methods"]["value"]
