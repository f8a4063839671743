"""Trusts: create, show, list, delete, and trust-scoped tokens (the way Heat uses them)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from identity_support import IdentityClient, password_auth, v2_signed

pytestmark = pytest.mark.timeout(60)


def trust_body(seed, **overrides: Any) -> dict[str, Any]:
    trust = {
        "trustor_user_id": seed.demo_user.id,
        "trustee_user_id": seed.service_user.id,
        "project_id": seed.demo_project.id,
        "impersonation": True,
        "roles": [{"name": "member"}],
    }
    trust.update(overrides)
    return {"trust": trust}


def trust_login(client: IdentityClient, trust_id: str, user: str = "kiln"):
    body = password_auth(user, scope={"OS-TRUST:trust": {"id": trust_id}})
    return client.request("POST", "/v3/auth/tokens", json=body)


def test_trust_round_trip_and_impersonating_token(client: IdentityClient, seed) -> None:
    demo, _ = client.login("demo", "demo")
    created = client.request("POST", "/v3/OS-TRUST/trusts", demo, json=trust_body(seed))
    assert created.status_code == 201, created.text
    trust = created.json()["trust"]
    assert trust["impersonation"] is True
    assert [r["name"] for r in trust["roles"]] == ["member"]
    assert trust["expires_at"] is None and trust["remaining_uses"] is None

    shown = client.request("GET", f"/v3/OS-TRUST/trusts/{trust['id']}", demo)
    assert shown.json()["trust"]["id"] == trust["id"]
    listed = client.request(
        "GET", f"/v3/OS-TRUST/trusts?trustor_user_id={seed.demo_user.id}", demo
    ).json()["trusts"]
    assert [t["id"] for t in listed] == [trust["id"]]
    roles = client.request("GET", f"/v3/OS-TRUST/trusts/{trust['id']}/roles", demo)
    assert [r["name"] for r in roles.json()["roles"]] == ["member"]

    login = trust_login(client, trust["id"])
    assert login.status_code == 201, login.text
    token = login.json()["token"]
    assert token["user"]["id"] == seed.demo_user.id  # impersonation: acts as the trustor
    assert token["project"]["id"] == seed.demo_project.id
    assert {r["name"] for r in token["roles"]} == {"member", "reader"}
    assert token["OS-TRUST:trust"] == {
        "id": trust["id"],
        "impersonation": True,
        "trustor_user": {"id": seed.demo_user.id},
        "trustee_user": {"id": seed.service_user.id},
    }
    trust_token = login.headers["X-Subject-Token"]
    service, _ = client.login("kiln", "admin")
    assert client.validate(service, trust_token).status_code == 200

    # Heat deletes the stack's trust: its tokens stop working.
    assert client.request("DELETE", f"/v3/OS-TRUST/trusts/{trust['id']}", demo).status_code == 204
    assert client.validate(service, trust_token).status_code == 404
    assert client.request("GET", f"/v3/OS-TRUST/trusts/{trust['id']}", demo).status_code == 404
    assert trust_login(client, trust["id"]).status_code == 401


def test_trust_without_impersonation_acts_as_trustee(client: IdentityClient, seed) -> None:
    demo, _ = client.login("demo", "demo")
    trust = client.request(
        "POST", "/v3/OS-TRUST/trusts", demo, json=trust_body(seed, impersonation=False)
    ).json()["trust"]
    token = trust_login(client, trust["id"]).json()["token"]
    assert token["user"]["id"] == seed.service_user.id
    assert token["project"]["id"] == seed.demo_project.id


def test_trust_rules(client: IdentityClient, seed, clock) -> None:
    demo, _ = client.login("demo", "demo")
    admin, _ = client.login("admin", "admin")
    post = "/v3/OS-TRUST/trusts"
    # Only the trustor may create it, with roles it holds on the project.
    assert client.request("POST", post, admin, json=trust_body(seed)).status_code == 403
    too_much = trust_body(seed, roles=[{"name": "admin"}])
    assert client.request("POST", post, demo, json=too_much).status_code == 403
    unknown_role = trust_body(seed, roles=[{"name": "nope"}])
    assert client.request("POST", post, demo, json=unknown_role).status_code == 404
    past = (clock.now() - timedelta(minutes=1)).isoformat()
    assert (
        client.request("POST", post, demo, json=trust_body(seed, expires_at=past)).status_code
        == 400
    )
    assert client.request("POST", post, demo, json={"trust": {}}).status_code == 400

    limited = client.request(
        "POST",
        post,
        demo,
        json=trust_body(
            seed,
            remaining_uses=1,
            expires_at=(clock.now() + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        ),
    ).json()["trust"]
    # Only the trustee may use it.
    assert trust_login(client, limited["id"], user="admin").status_code == 401
    first = trust_login(client, limited["id"])
    assert first.status_code == 201
    # The token cannot outlive the trust.
    assert first.json()["token"]["expires_at"] == limited["expires_at"]
    assert trust_login(client, limited["id"]).status_code == 401  # used up
    service, _ = client.login("kiln", "admin")
    # ... but the token made with the last use stays valid.
    assert client.validate(service, first.headers["X-Subject-Token"]).status_code == 200

    expiring = client.request(
        "POST",
        post,
        demo,
        json=trust_body(seed, expires_at=(clock.now() + timedelta(minutes=5)).isoformat()),
    ).json()["trust"]
    token = trust_login(client, expiring["id"]).headers["X-Subject-Token"]
    clock.advance(301)
    assert client.validate(service, token).status_code == 404
    assert trust_login(client, expiring["id"]).status_code == 401

    # A trust-scoped token cannot make new trusts nor be rescoped.
    fresh = client.request("POST", post, demo, json=trust_body(seed)).json()["trust"]
    trust_token = trust_login(client, fresh["id"]).headers["X-Subject-Token"]
    again = trust_body(seed, trustee_user_id=seed.admin_user.id)
    assert client.request("POST", post, trust_token, json=again).status_code == 403
    rescope = {
        "auth": {
            "identity": {"methods": ["token"], "token": {"id": trust_token}},
            "scope": {"project": {"id": seed.admin_project.id}},
        }
    }
    assert client.request("POST", "/v3/auth/tokens", json=rescope).status_code == 403


def test_trustor_losing_the_role_invalidates_trust_tokens(
    client: IdentityClient, store, seed
) -> None:
    demo, _ = client.login("demo", "demo")
    trust = client.request("POST", "/v3/OS-TRUST/trusts", demo, json=trust_body(seed)).json()
    token = trust_login(client, trust["trust"]["id"]).headers["X-Subject-Token"]
    store.revoke_grant(
        seed.demo_user.id,
        seed.roles["member"].id,
        target_type="project",
        target_id=seed.demo_project.id,
    )
    service, _ = client.login("kiln", "admin")
    assert client.validate(service, token).status_code == 404


def test_ec2_credential_made_under_a_trust_acts_through_it(client: IdentityClient, seed) -> None:
    demo, _ = client.login("demo", "demo")
    trust = client.request("POST", "/v3/OS-TRUST/trusts", demo, json=trust_body(seed)).json()
    trust_token = trust_login(client, trust["trust"]["id"]).headers["X-Subject-Token"]
    cred = client.request(
        "POST",
        f"/v3/users/{seed.demo_user.id}/credentials/OS-EC2",
        trust_token,
        json={"tenant_id": seed.demo_project.id},
    ).json()["credential"]
    assert cred["trust_id"] == trust["trust"]["id"]
    resp = client.request(
        "POST", "/v3/ec2tokens", json={"credentials": v2_signed(cred["access"], cred["secret"])}
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["token"]["OS-TRUST:trust"]["id"] == trust["trust"]["id"]
