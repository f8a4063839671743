"""Token issue, validation, revocation and expiry over HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest
from identity_support import CATALOG, IdentityClient, password_auth, project_scope

from kiln.cloud.sandbox.http_server import serve_in_thread
from kiln.cloud.sandbox.identity import create_identity_app

pytestmark = pytest.mark.timeout(60)


def test_version_discovery_uses_the_request_url(client: IdentityClient) -> None:
    root = client.request("GET", "/")
    assert root.status_code == 300
    (entry,) = root.json()["versions"]["values"]
    assert entry["id"].startswith("v3.")
    assert entry["links"][0]["href"] == f"{client.url}/v3/"
    for path in ("/v3", "/v3/"):
        version = client.request("GET", path)
        assert version.status_code == 200
        assert version.json()["version"]["status"] == "stable"


def test_project_token_lists_implied_roles_and_the_catalog(client: IdentityClient, seed) -> None:
    token, doc = client.login("demo", "demo")
    assert token
    assert doc["project"]["id"] == seed.demo_project.id
    assert doc["project"]["domain"] == {"id": "default", "name": "Default"}
    assert doc["user"]["name"] == "demo"
    assert {r["name"] for r in doc["roles"]} == {"member", "reader"}
    assert doc["methods"] == ["password"]
    assert len(doc["audit_ids"]) == 1
    services = {s["type"]: s for s in doc["catalog"]}
    assert set(services) == {"identity", "orchestration", "cloudformation"}
    urls = {e["interface"]: e["url"] for e in services["orchestration"]["endpoints"]}
    assert set(urls) == {"public", "internal", "admin"}
    assert urls["public"] == f"http://127.0.0.1:8004/v1/{seed.demo_project.id}"
    assert services["identity"]["endpoints"][0]["url"] == client.url
    assert services["identity"]["endpoints"][0]["region_id"] == "RegionOne"

    _admin_token, admin_doc = client.login("admin", "admin")
    assert {r["name"] for r in admin_doc["roles"]} == {"admin", "member", "reader"}
    assert admin_doc["is_admin_project"] is True


def test_unscoped_domain_scoped_and_nocatalog(client: IdentityClient, store, seed) -> None:
    _token, unscoped = client.login("demo")
    assert "project" not in unscoped and "roles" not in unscoped and "catalog" not in unscoped

    store.grant(
        seed.admin_user.id, seed.roles["admin"].id, target_type="domain", target_id="default"
    )
    body = password_auth("admin", scope={"domain": {"name": "Default"}})
    resp = client.request("POST", "/v3/auth/tokens", json=body)
    assert resp.status_code == 201, resp.text
    token = resp.json()["token"]
    assert token["domain"] == {"id": "default", "name": "Default"}
    # Project-specific endpoints are left out of a token without a project.
    assert {s["type"] for s in token["catalog"]} == {"identity", "cloudformation"}

    body = password_auth("demo", scope=project_scope("demo"))
    resp = client.request("POST", "/v3/auth/tokens?nocatalog", json=body)
    assert resp.status_code == 201 and "catalog" not in resp.json()["token"]


def test_validate_head_and_revoke(client: IdentityClient) -> None:
    service_token, _ = client.login("kiln", "admin")
    user_token, doc = client.login("demo", "demo")

    got = client.validate(service_token, user_token)
    assert got.status_code == 200
    assert got.headers["X-Subject-Token"] == user_token
    assert got.json()["token"]["audit_ids"] == doc["audit_ids"]
    assert client.validate(service_token, user_token, "HEAD").status_code == 200
    # A user may look at its own token; another (non-admin) user may not.
    assert client.validate(user_token, user_token).status_code == 200

    assert client.validate(user_token, service_token).status_code == 403
    assert client.validate(user_token, user_token, "DELETE").status_code == 204
    assert client.validate(service_token, user_token).status_code == 404
    assert client.validate(service_token, user_token, "HEAD").status_code == 404
    # A revoked token no longer authenticates its own requests either.
    assert client.request("GET", "/v3/auth/catalog", user_token).status_code == 401


def test_token_method_rescopes_and_revoking_the_parent_revokes_the_child(
    client: IdentityClient, seed
) -> None:
    service_token, _ = client.login("kiln", "admin")
    unscoped, unscoped_doc = client.login("demo")
    body = {
        "auth": {
            "identity": {"methods": ["token"], "token": {"id": unscoped}},
            "scope": project_scope("demo"),
        }
    }
    resp = client.request("POST", "/v3/auth/tokens", json=body)
    assert resp.status_code == 201, resp.text
    scoped = resp.headers["X-Subject-Token"]
    doc = resp.json()["token"]
    assert doc["project"]["id"] == seed.demo_project.id
    assert doc["expires_at"] == unscoped_doc["expires_at"]
    assert doc["audit_ids"][1] == unscoped_doc["audit_ids"][0]

    assert client.validate(service_token, unscoped, "DELETE").status_code == 204
    assert client.validate(service_token, scoped).status_code == 404


def test_expiry_follows_the_store_clock(client: IdentityClient, clock) -> None:
    service_token, _ = client.login("kiln", "admin")
    user_token, _ = client.login("demo", "demo")
    clock.advance(3599)
    assert client.validate(service_token, user_token).status_code == 200
    clock.advance(2)
    assert client.request("GET", "/v3/auth/catalog", service_token).status_code == 401
    fresh, _ = client.login("kiln", "admin")
    assert client.validate(fresh, user_token).status_code == 404
    allowed = client.request(
        "GET",
        "/v3/auth/tokens?allow_expired=1",
        fresh,
        headers={"X-Subject-Token": user_token},
    )
    assert allowed.status_code == 200


def test_token_lifetime_is_configurable(store, seed, clock) -> None:
    with serve_in_thread(create_identity_app(store, token_lifetime=timedelta(minutes=5))) as handle:
        api = IdentityClient(handle.url)
        token, _doc = api.login("demo", "demo")
        clock.advance(301)
        assert api.request("GET", "/v3/auth/catalog", token).status_code == 401
        api.close()


def test_bad_credentials_and_bad_input(client: IdentityClient, store, seed) -> None:
    wrong = client.request("POST", "/v3/auth/tokens", json=password_auth("demo", "nope"))
    assert wrong.status_code == 401
    assert wrong.headers["WWW-Authenticate"] == f'Keystone uri="{client.url}"'
    error = wrong.json()["error"]
    assert error["code"] == 401 and error["title"] == "Unauthorized"
    unknown = client.request("POST", "/v3/auth/tokens", json=password_auth("ghost", "x"))
    assert unknown.status_code == 401
    no_role = client.request(
        "POST", "/v3/auth/tokens", json=password_auth("demo", scope=project_scope("admin"))
    )
    assert no_role.status_code == 401
    no_project = client.request(
        "POST", "/v3/auth/tokens", json=password_auth("demo", scope=project_scope("nowhere"))
    )
    assert no_project.status_code == 401

    for body in (b"{not json", b"[]", b'{"auth": 3}', b'{"auth": {"identity": {"methods": []}}}'):
        resp = client.request(
            "POST", "/v3/auth/tokens", data=body, headers={"Content-Type": "application/json"}
        )
        assert resp.status_code == 400, (body, resp.text)
        assert resp.json()["error"]["code"] == 400
    garbage = client.request("GET", "/v3/auth/catalog", "garbage")
    assert garbage.status_code == 401
    assert client.request("GET", "/v3/no/such/thing").json()["error"]["code"] == 404

    store.update_user(seed.demo_user.id, enabled=False)
    assert client.request("POST", "/v3/auth/tokens", json=password_auth("demo")).status_code == 401


def test_disabling_a_user_invalidates_its_tokens(client: IdentityClient, store, seed) -> None:
    service_token, _ = client.login("kiln", "admin")
    user_token, _ = client.login("demo", "demo")
    store.update_user(seed.demo_user.id, enabled=False)
    assert client.validate(service_token, user_token).status_code == 404


def test_auth_projects_and_catalog(client: IdentityClient, seed) -> None:
    token, _ = client.login("demo", "demo")
    projects = client.request("GET", "/v3/auth/projects", token).json()["projects"]
    assert [p["name"] for p in projects] == ["demo"]
    catalog = client.request("GET", "/v3/auth/catalog", token).json()["catalog"]
    assert {s["type"] for s in catalog} == {"identity", "orchestration", "cloudformation"}


def test_public_url_overrides_the_request(store, seed) -> None:
    app = create_identity_app(store, catalog=CATALOG, public_url="https://cloud.example:5000/")
    with serve_in_thread(app) as handle:
        api = IdentityClient(handle.url)
        _token, doc = api.login("demo", "demo")
        urls = {s["type"]: s["endpoints"][0]["url"] for s in doc["catalog"]}
        assert urls["identity"] == "https://cloud.example:5000"
        assert urls["cloudformation"] == "http://cloud.example:8000/v1"
        assert api.request("GET", "/v3").json()["version"]["links"][0]["href"] == (
            "https://cloud.example:5000/v3/"
        )
        api.close()
