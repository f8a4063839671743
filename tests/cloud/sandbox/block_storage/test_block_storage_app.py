"""The simulated Cinder REST app: version documents, project URLs, microversions, bodies."""

from __future__ import annotations

import pytest
from falcon import testing

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.app import create_block_storage_app
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image.model import ImageModel

P = "/v3/demo-project"
SCOPES = {
    "demo": CloudScope("demo-project", "demo-user", frozenset({"member"})),
    "admin": CloudScope("admin-project", "admin-user", frozenset({"admin"})),
}


class Tokens:
    def scope(self, token: str) -> CloudScope:
        if token in SCOPES:
            return SCOPES[token]
        raise Unauthorized("bad token")


@pytest.fixture
def client() -> testing.TestClient:
    cloud = SandboxCloud()
    cloud.add("image", ImageModel(cloud))
    cloud.add("block_storage", BlockStorageModel(cloud))
    cloud.image.seed()
    cloud.block_storage.seed()
    app = create_block_storage_app(cloud, Tokens())
    return testing.TestClient(app, headers={"X-Auth-Token": "demo"})


def latest(**headers: str) -> dict[str, str]:
    return {"OpenStack-API-Version": "volume 3.70", **headers}


def test_version_documents(client: testing.TestClient) -> None:
    root = client.simulate_get("/", headers={"X-Auth-Token": ""})
    assert root.status_code == 300
    version = root.json["versions"][0]
    assert (version["id"], version["version"], version["min_version"]) == ("v3.0", "3.70", "3.0")
    assert version["links"][1]["href"].endswith("/v3/")
    v3 = client.simulate_get("/v3/", headers={"X-Auth-Token": ""})
    assert v3.status_code == 200 and v3.json == root.json


def test_project_in_url_must_match_token(client: testing.TestClient) -> None:
    result = client.simulate_get("/v3/other-project/volumes/detail")
    assert result.status_code == 403 and "forbidden" in result.json
    admin = client.simulate_get(f"{P}/volumes/detail", headers={"X-Auth-Token": "admin"})
    assert admin.status_code == 200


def test_microversions(client: testing.TestClient) -> None:
    result = client.simulate_get(f"{P}/volumes", headers=latest())
    assert result.headers["OpenStack-API-Version"] == "volume 3.70"
    too_new = client.simulate_get(
        f"{P}/volumes", headers=latest(**{"OpenStack-API-Version": "volume 3.99"})
    )
    assert too_new.status_code == 406
    created = client.simulate_post(f"{P}/volumes", json={"volume": {"size": 1}})
    assert "volume_type_id" not in created.json["volume"]  # 3.63 field, default 3.0
    shown = client.simulate_get(f"{P}/volumes/{created.json['volume']['id']}", headers=latest())
    assert shown.json["volume"]["volume_type_id"]
    assert "os-vol-host-attr:host" not in shown.json["volume"]


def test_volume_crud_and_errors(client: testing.TestClient) -> None:
    created = client.simulate_post(f"{P}/volumes", json={"volume": {"size": 1, "name": "v"}})
    assert created.status_code == 202 and created.json["volume"]["status"] == "creating"
    volume_id = created.json["volume"]["id"]
    listed = client.simulate_get(f"{P}/volumes").json["volumes"]
    assert listed == [{"id": volume_id, "name": "v", "links": []}]
    updated = client.simulate_put(f"{P}/volumes/{volume_id}", json={"volume": {"name": "w"}})
    assert updated.json["volume"]["name"] == "w"

    bad = client.simulate_post(
        f"{P}/volumes/{volume_id}/action", json={"os-extend": {"new_size": 1}}
    )
    assert bad.status_code == 400 and bad.json["badRequest"]["code"] == 400
    ok = client.simulate_post(
        f"{P}/volumes/{volume_id}/action", json={"os-extend": {"new_size": 2}}
    )
    assert ok.status_code == 202
    bootable = client.simulate_post(
        f"{P}/volumes/{volume_id}/action", json={"os-set_bootable": {"bootable": True}}
    )
    assert bootable.status_code == 200

    missing = client.simulate_get(f"{P}/volumes/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404 and "itemNotFound" in missing.json
    assert client.simulate_delete(f"{P}/volumes/{volume_id}").status_code == 202
    assert client.simulate_get(f"{P}/volumes/{volume_id}").status_code == 404


def test_metadata_endpoints(client: testing.TestClient) -> None:
    volume_id = client.simulate_post(f"{P}/volumes", json={"volume": {"size": 1}}).json["volume"][
        "id"
    ]
    base = f"{P}/volumes/{volume_id}/metadata"
    assert client.simulate_post(base, json={"metadata": {"a": "1"}}).json == {
        "metadata": {"a": "1"}
    }
    assert client.simulate_put(f"{base}/b", json={"meta": {"b": "2"}}).json == {"meta": {"b": "2"}}
    assert client.simulate_get(f"{base}/b").json == {"meta": {"b": "2"}}
    assert client.simulate_put(base, json={"metadata": {"c": "3"}}).json == {"metadata": {"c": "3"}}
    assert client.simulate_delete(f"{base}/c").status_code == 200
    assert client.simulate_get(f"{base}/c").status_code == 404


def test_quota_is_413_over_limit(client: testing.TestClient) -> None:
    result = client.simulate_post(f"{P}/volumes", json={"volume": {"size": 10**7}})
    assert result.status_code == 413 and "overLimit" in result.json


def test_backups_types_encryption(client: testing.TestClient) -> None:
    volume_id = client.simulate_post(f"{P}/volumes", json={"volume": {"size": 1}}).json["volume"][
        "id"
    ]
    backup = client.simulate_post(f"{P}/backups", json={"backup": {"volume_id": volume_id}})
    assert backup.status_code == 202 and set(backup.json["backup"]) == {"id", "name", "links"}
    backup_id = backup.json["backup"]["id"]
    assert client.simulate_get(f"{P}/backups/detail").json["backups"][0]["status"] == "available"
    restore = client.simulate_post(f"{P}/backups/{backup_id}/restore", json={"restore": {}})
    assert restore.status_code == 202 and restore.json["restore"]["backup_id"] == backup_id

    types = client.simulate_get(f"{P}/types").json["volume_types"]
    assert {t["name"] for t in types} == {"__DEFAULT__", "lvmdriver-1"}
    assert client.simulate_get(f"{P}/types/default").json["volume_type"]["name"] == "__DEFAULT__"
    denied = client.simulate_post(f"{P}/types", json={"volume_type": {"name": "x"}})
    assert denied.status_code == 403
    admin = {"X-Auth-Token": "admin"}
    vtype = client.simulate_post(f"{P}/types", json={"volume_type": {"name": "x"}}, headers=admin)
    type_id = vtype.json["volume_type"]["id"]
    enc = f"{P}/types/{type_id}/encryption"
    assert client.simulate_get(enc, headers=admin).json == {}
    made = client.simulate_post(enc, json={"encryption": {"provider": "luks"}}, headers=admin)
    assert made.status_code == 200 and made.json["encryption"]["volume_type_id"] == type_id
    changed = client.simulate_put(
        f"{enc}/provider", json={"encryption": {"key_size": 256}}, headers=admin
    )
    assert changed.json == {"encryption": {"key_size": 256}}
    assert client.simulate_get(enc, headers=admin).json["key_size"] == 256
    assert client.simulate_delete(f"{enc}/provider", headers=admin).status_code == 202
    assert client.simulate_delete(f"{P}/types/{type_id}", headers=admin).status_code == 202

    aliases = {e["alias"] for e in client.simulate_get(f"{P}/extensions").json["extensions"]}
    assert "encryption" in aliases
