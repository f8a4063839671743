"""Projects, users, roles, grants and role assignments; admin-only rules; error codes."""

from __future__ import annotations

import pytest
import requests
from identity_support import ADMIN_PASSWORD, IdentityClient, password_auth

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def admin(client: IdentityClient) -> str:
    return client.login("admin", "admin")[0]


def test_create_project_user_grant_and_log_in(client: IdentityClient, admin: str) -> None:
    project = client.request(
        "POST", "/v3/projects", admin, json={"project": {"name": "web", "description": "d"}}
    )
    assert project.status_code == 201, project.text
    project_doc = project.json()["project"]
    assert project_doc["domain_id"] == "default" and project_doc["enabled"] is True
    assert project_doc["links"]["self"] == f"{client.url}/v3/projects/{project_doc['id']}"

    user = client.request(
        "POST",
        "/v3/users",
        admin,
        json={"user": {"name": "alice", "password": "pw", "domain_id": "default"}},
    )
    assert user.status_code == 201, user.text
    user_id = user.json()["user"]["id"]
    assert "password" not in user.json()["user"]

    member = client.request("GET", "/v3/roles?name=member", admin).json()["roles"][0]
    grant = f"/v3/projects/{project_doc['id']}/users/{user_id}/roles/{member['id']}"
    assert client.request("HEAD", grant, admin).status_code == 404
    assert client.request("PUT", grant, admin).status_code == 204
    assert client.request("PUT", grant, admin).status_code == 204  # again: harmless
    assert client.request("HEAD", grant, admin).status_code == 204

    body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"id": user_id, "password": "pw"}},
            },
            "scope": {"project": {"id": project_doc["id"]}},
        }
    }
    login = client.request("POST", "/v3/auth/tokens", json=body)
    assert login.status_code == 201, login.text
    assert {r["name"] for r in login.json()["token"]["roles"]} == {"member", "reader"}

    listed = client.request("GET", f"/v3/projects/{project_doc['id']}/users/{user_id}/roles", admin)
    assert [r["name"] for r in listed.json()["roles"]] == ["member"]
    assert client.request("DELETE", grant, admin).status_code == 204
    assert client.request("DELETE", grant, admin).status_code == 404
    assert client.request("POST", "/v3/auth/tokens", json=body).status_code == 401


def test_lists_and_filters(client: IdentityClient, admin: str, seed) -> None:
    names = [p["name"] for p in client.request("GET", "/v3/projects", admin).json()["projects"]]
    assert names == ["admin", "demo", "service"]
    demo = client.request("GET", "/v3/projects?name=demo", admin).json()["projects"]
    assert [p["id"] for p in demo] == [seed.demo_project.id]
    users = [u["name"] for u in client.request("GET", "/v3/users", admin).json()["users"]]
    assert users == ["admin", "demo", "heat_domain_admin", "kiln"]
    roles = {r["name"] for r in client.request("GET", "/v3/roles", admin).json()["roles"]}
    assert roles == {"admin", "member", "reader", "heat_stack_owner", "heat_stack_user"}
    domains = client.request("GET", "/v3/domains", admin).json()["domains"]
    assert [(d["id"], d["name"]) for d in domains] == [
        ("default", "Default"),
        (seed.stack_domain.id, "heat"),
    ]
    assert client.request("GET", f"/v3/users/{seed.demo_user.id}", admin).status_code == 200
    own = client.request("GET", f"/v3/users/{seed.admin_user.id}/projects", admin).json()
    assert [p["name"] for p in own["projects"]] == ["admin"]


def test_role_assignments(client: IdentityClient, admin: str, seed) -> None:
    query = (
        f"/v3/role_assignments?user.id={seed.demo_user.id}&scope.project.id={seed.demo_project.id}"
    )
    direct = client.request("GET", query, admin).json()["role_assignments"]
    assert [a["role"]["id"] for a in direct] == [seed.roles["member"].id]
    assert direct[0]["scope"] == {"project": {"id": seed.demo_project.id}}

    effective = client.request("GET", query + "&effective&include_names", admin).json()
    names = {a["role"]["name"] for a in effective["role_assignments"]}
    assert names == {"member", "reader"}
    first = effective["role_assignments"][0]
    assert first["user"]["name"] == "demo"
    assert first["scope"]["project"]["name"] == "demo"

    everything = client.request("GET", "/v3/role_assignments", admin).json()["role_assignments"]
    assert len(everything) == 4  # and heat_domain_admin's admin on domain heat


def test_member_is_forbidden_admin_operations(client: IdentityClient, seed) -> None:
    member, _ = client.login("demo", "demo")
    for method, path, body in (
        ("POST", "/v3/projects", {"project": {"name": "x"}}),
        ("POST", "/v3/users", {"user": {"name": "x"}}),
        ("GET", "/v3/projects", None),
        ("GET", "/v3/users", None),
        ("GET", "/v3/role_assignments", None),
        ("GET", f"/v3/users/{seed.admin_user.id}", None),
        ("GET", f"/v3/projects/{seed.admin_project.id}", None),
        (
            "PUT",
            f"/v3/projects/{seed.demo_project.id}/users/{seed.demo_user.id}"
            f"/roles/{seed.roles['admin'].id}",
            None,
        ),
    ):
        resp = client.request(method, path, member, json=body)
        assert resp.status_code == 403, (method, path, resp.text)
        assert resp.json()["error"]["title"] == "Forbidden"
    # What a member may read: itself, its project, the roles.
    assert client.request("GET", f"/v3/users/{seed.demo_user.id}", member).status_code == 200
    assert client.request("GET", f"/v3/projects/{seed.demo_project.id}", member).status_code == 200
    assert client.request("GET", "/v3/roles", member).status_code == 200
    assert client.request("GET", "/v3/projects").status_code == 401


def test_conflicts_not_found_and_bad_input(client: IdentityClient, admin: str, seed) -> None:
    dup = client.request("POST", "/v3/projects", admin, json={"project": {"name": "demo"}})
    assert dup.status_code == 409 and dup.json()["error"]["title"] == "Conflict"
    dup_user = client.request("POST", "/v3/users", admin, json={"user": {"name": "demo"}})
    assert dup_user.status_code == 409
    for path in ("/v3/projects/nope", "/v3/users/nope", "/v3/roles/nope", "/v3/domains/nope"):
        resp = client.request("GET", path, admin)
        assert resp.status_code == 404, path
        assert resp.json()["error"]["message"].startswith("Could not find")
    for body in ({"project": {"name": 3}}, {"project": "x"}, {}, {"project": {"enabled": "y"}}):
        resp = client.request("POST", "/v3/projects", admin, json=body)
        assert resp.status_code == 400, (body, resp.text)
    for raw in (b"{", b"[" * 100_000):
        bad_json = client.request(
            "POST", "/v3/users", admin, data=raw, headers={"Content-Type": "application/json"}
        )
        assert bad_json.status_code == 400
    too_long = client.request("POST", "/v3/projects", admin, json={"project": {"name": "x" * 256}})
    assert too_long.status_code == 400
    null_flag = client.request(
        "PATCH", f"/v3/users/{seed.demo_user.id}", admin, json={"user": {"enabled": None}}
    )
    assert null_flag.status_code == 400
    grant = f"/v3/projects/{seed.demo_project.id}/users/nope/roles/{seed.roles['admin'].id}"
    assert client.request("PUT", grant, admin).status_code == 404


def test_update_and_delete(client: IdentityClient, admin: str, seed) -> None:
    created = client.request("POST", "/v3/users", admin, json={"user": {"name": "bob"}})
    user_id = created.json()["user"]["id"]
    patched = client.request(
        "PATCH", f"/v3/users/{user_id}", admin, json={"user": {"enabled": False, "email": "b@x"}}
    )
    assert patched.json()["user"]["enabled"] is False
    assert patched.json()["user"]["email"] == "b@x"
    assert client.request("DELETE", f"/v3/users/{user_id}", admin).status_code == 204
    assert client.request("GET", f"/v3/users/{user_id}", admin).status_code == 404

    project = client.request("POST", "/v3/projects", admin, json={"project": {"name": "tmp"}})
    project_id = project.json()["project"]["id"]
    renamed = client.request(
        "PATCH", f"/v3/projects/{project_id}", admin, json={"project": {"name": "tmp2"}}
    )
    assert renamed.json()["project"]["name"] == "tmp2"
    assert client.request("DELETE", f"/v3/projects/{project_id}", admin).status_code == 204
    assert client.request("DELETE", f"/v3/projects/{project_id}", admin).status_code == 404


def test_services_and_endpoints(client: IdentityClient, admin: str) -> None:
    services = client.request("GET", "/v3/services", admin).json()["services"]
    assert {s["type"] for s in services} == {"identity", "orchestration", "cloudformation"}
    endpoints = client.request("GET", "/v3/endpoints?interface=public", admin).json()["endpoints"]
    urls = sorted(e["url"] for e in endpoints)
    assert "http://127.0.0.1:8004/v1/%(project_id)s" in urls
    regions = client.request("GET", "/v3/regions", admin).json()["regions"]
    assert regions[0]["id"] == "RegionOne"


def test_domain_admin_manages_its_own_domain_only(client: IdentityClient, admin: str, seed) -> None:
    heat = seed.stack_domain
    login = client.request(
        "POST",
        "/v3/auth/tokens",
        json=password_auth(
            "heat_domain_admin", ADMIN_PASSWORD, scope={"domain": {"id": heat.id}}, domain=heat.id
        ),
    )
    assert login.status_code == 201, login.text
    assert login.json()["token"]["domain"] == {"id": heat.id, "name": "heat"}
    token = login.headers["X-Subject-Token"]

    def call(method: str, path: str, body: dict | None = None) -> requests.Response:
        return client.request(method, path, token, json=body)

    # in domain heat: projects (the token's domain when the body names none), users,
    # grants, credentials
    project = call("POST", "/v3/projects", {"project": {"name": "stack-p"}})
    assert project.status_code == 201, project.text
    project_id = project.json()["project"]["id"]
    assert project.json()["project"]["domain_id"] == heat.id
    user = call(
        "POST",
        "/v3/users",
        {"user": {"name": "stack-u", "password": "pw", "default_project_id": project_id}},
    )
    assert user.status_code == 201, user.text
    user_id = user.json()["user"]["id"]
    assert user.json()["user"]["domain_id"] == heat.id
    role = call("GET", "/v3/roles?name=heat_stack_user").json()["roles"][0]
    assert (
        call("PUT", f"/v3/projects/{project_id}/users/{user_id}/roles/{role['id']}").status_code
        == 204
    )
    listed = call("GET", f"/v3/projects?name=stack-p&domain_id={heat.id}").json()["projects"]
    assert [p["id"] for p in listed] == [project_id]
    users = [u["name"] for u in call("GET", "/v3/users").json()["users"]]
    assert users == ["heat_domain_admin", "stack-u"]
    patched = call("PATCH", f"/v3/users/{user_id}", {"user": {"enabled": False}})
    assert patched.status_code == 200 and patched.json()["user"]["enabled"] is False
    blob = '{"access": "a1", "secret": "s1"}'
    credential = {"type": "ec2", "user_id": user_id, "project_id": project_id, "blob": blob}
    created = call("POST", "/v3/credentials", {"credential": credential})
    assert created.status_code == 201, created.text
    own = call("GET", f"/v3/credentials?user_id={user_id}&type=ec2").json()["credentials"]
    assert [c["id"] for c in own] == [created.json()["credential"]["id"]]

    # anywhere else, or making cloud admins: 403
    demo_user, demo_project = seed.demo_user.id, seed.demo_project.id
    admin_role = seed.roles["admin"].id
    for method, path, body in (
        ("POST", "/v3/projects", {"project": {"name": "x", "domain_id": "default"}}),
        ("POST", "/v3/users", {"user": {"name": "x", "domain_id": "default"}}),
        ("POST", "/v3/users", {"user": {"name": "x", "default_project_id": demo_project}}),
        ("GET", "/v3/projects?domain_id=default", None),
        ("GET", "/v3/users?domain_id=default", None),
        ("GET", f"/v3/projects/{demo_project}", None),
        ("PATCH", f"/v3/projects/{demo_project}", {"project": {"description": "x"}}),
        ("DELETE", f"/v3/projects/{demo_project}", None),
        ("GET", f"/v3/users/{demo_user}", None),
        ("PATCH", f"/v3/users/{demo_user}", {"user": {"enabled": False}}),
        ("DELETE", f"/v3/users/{demo_user}", None),
        ("PUT", f"/v3/projects/{demo_project}/users/{user_id}/roles/{role['id']}", None),
        ("PUT", f"/v3/projects/{project_id}/users/{demo_user}/roles/{role['id']}", None),
        ("PUT", f"/v3/projects/{project_id}/users/{user_id}/roles/{admin_role}", None),
        ("PUT", f"/v3/domains/{heat.id}/users/{user_id}/roles/{admin_role}", None),
        ("POST", "/v3/credentials", {"credential": {**credential, "user_id": demo_user}}),
        ("GET", "/v3/role_assignments", None),
        ("POST", "/v3/roles", {"role": {"name": "x"}}),
        ("POST", "/v3/domains", {"domain": {"name": "x"}}),
    ):
        resp = call(method, path, body)
        assert resp.status_code == 403, (method, path, resp.text)
    assert call("GET", f"/v3/credentials?user_id={demo_user}").json()["credentials"] == []

    # its objects: deleted by it, or by a cloud admin
    credential_id = created.json()["credential"]["id"]
    assert call("DELETE", f"/v3/credentials/{credential_id}").status_code == 204
    assert call("DELETE", f"/v3/users/{user_id}").status_code == 204
    assert call("DELETE", f"/v3/users/{user_id}").status_code == 404
    assert client.request("DELETE", f"/v3/projects/{project_id}", admin).status_code == 204
