"""EC2 credentials (OS-EC2 and /v3/credentials) and /v3/ec2tokens signature checks.

Signatures are made by independent implementations: botocore's SigV2/SigV4 signers (what
boto3 sends) and keystoneclient's Ec2Signer (what Heat's EC2-signed URLs follow).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from botocore.auth import SigV2Auth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from identity_support import CFN_HOST, IdentityClient, v2_signed
from keystoneclient.contrib.ec2.utils import Ec2Signer

from kiln.cloud.sandbox.identity.ec2 import ec2_credential_id, signature_matches

pytestmark = pytest.mark.timeout(60)


def botocore_v2_signed(access: str, secret: str) -> dict[str, Any]:
    request = AWSRequest(method="POST", url=f"http://{CFN_HOST}/", data={"Action": "ListStacks"})
    SigV2Auth(Credentials(access, secret)).add_auth(request)
    params = dict(request.data)
    signature = params.pop("Signature")
    return {
        "access": access,
        "signature": signature,
        "host": CFN_HOST,
        "verb": "POST",
        "path": "/",
        "params": params,
    }


def botocore_v4_signed(access: str, secret: str) -> dict[str, Any]:
    """A boto3-style CloudFormation call: POST, form body, Authorization header."""
    body = "Action=ListStacks&Version=2010-05-15"
    request = AWSRequest(
        method="POST",
        url=f"http://{CFN_HOST}/",
        data=body,
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    SigV4Auth(Credentials(access, secret), "cloudformation", "RegionOne").add_auth(request)
    headers = dict(request.headers.items())
    headers["Host"] = CFN_HOST
    authorization = headers["Authorization"]
    return {
        "access": access,
        "signature": authorization.rsplit("Signature=", 1)[1],
        "host": CFN_HOST,
        "verb": "POST",
        "path": "/",
        "params": dict(parse_qsl(body)),
        "headers": headers,
        "body_hash": hashlib.sha256(body.encode()).hexdigest(),
    }


def botocore_v4_presigned(access: str, secret: str) -> dict[str, Any]:
    request = AWSRequest(method="GET", url=f"http://{CFN_HOST}/v1/signal/arn?Action=Signal")
    SigV4QueryAuth(Credentials(access, secret), "cloudformation", "RegionOne").add_auth(request)
    params = dict(parse_qsl(urlsplit(request.url).query))
    return {
        "access": access,
        "signature": params["X-Amz-Signature"],
        "host": CFN_HOST,
        "verb": "GET",
        "path": "/v1/signal/arn",
        "params": params,
        "headers": {"Host": CFN_HOST},
        "body_hash": hashlib.sha256(b"").hexdigest(),
    }


SIGNERS = [v2_signed, botocore_v2_signed, botocore_v4_signed, botocore_v4_presigned]


@pytest.mark.parametrize("sign", SIGNERS)
def test_signatures_from_independent_signers_verify(sign) -> None:
    good = sign("AKID", "s3cret")
    assert signature_matches("s3cret", good)
    assert not signature_matches("other", good)
    assert not signature_matches("s3cret", {**good, "path": "/elsewhere"})


def test_v2_signature_made_without_the_port_matches() -> None:
    """Clients differ on whether the signed host carries the port; both are accepted."""
    signed = v2_signed("AKID", "s3cret")
    signed_without_port = {**signed, "host": "127.0.0.1"}
    signature = Ec2Signer("s3cret").generate(
        {**signed_without_port, "params": dict(signed["params"])}
    )
    assert signature_matches("s3cret", {**signed, "signature": signature})


def test_os_ec2_round_trip_and_ec2tokens(client: IdentityClient, seed) -> None:
    token, _ = client.login("demo", "demo")
    base = f"/v3/users/{seed.demo_user.id}/credentials/OS-EC2"
    created = client.request("POST", base, token, json={"tenant_id": seed.demo_project.id})
    assert created.status_code == 201, created.text
    cred = created.json()["credential"]
    assert cred["tenant_id"] == seed.demo_project.id and cred["trust_id"] is None
    listed = client.request("GET", base, token).json()["credentials"]
    assert [c["access"] for c in listed] == [cred["access"]]
    assert (
        client.request("GET", f"{base}/{cred['access']}", token).json()["credential"]["secret"]
        == (cred["secret"])
    )

    for sign in SIGNERS:
        resp = client.request(
            "POST", "/v3/ec2tokens", json={"credentials": sign(cred["access"], cred["secret"])}
        )
        assert resp.status_code == 200, (sign.__name__, resp.text)
        doc = resp.json()["token"]
        assert doc["user"]["id"] == seed.demo_user.id
        assert doc["project"]["id"] == seed.demo_project.id
        assert doc["methods"] == ["ec2credential"]
        assert resp.headers["X-Subject-Token"]

    bad = v2_signed(cred["access"], "wrong-secret")
    resp = client.request("POST", "/v3/ec2tokens", json={"ec2Credentials": bad})
    assert resp.status_code == 401
    unknown = client.request("POST", "/v3/ec2tokens", json={"credentials": v2_signed("nope", "x")})
    assert unknown.status_code == 401
    assert client.request("POST", "/v3/ec2tokens", json={"credentials": {}}).status_code == 400

    assert client.request("DELETE", f"{base}/{cred['access']}", token).status_code == 204
    assert client.request("GET", f"{base}/{cred['access']}", token).status_code == 404
    gone = client.request(
        "POST", "/v3/ec2tokens", json={"credentials": v2_signed(cred["access"], cred["secret"])}
    )
    assert gone.status_code == 401


def test_credentials_api_as_heat_uses_it(client: IdentityClient, seed) -> None:
    admin, _ = client.login("admin", "admin")
    blob = json.dumps({"access": "a" * 32, "secret": "b" * 32})
    body = {
        "credential": {
            "type": "ec2",
            "user_id": seed.demo_user.id,
            "project_id": seed.demo_project.id,
            "blob": blob,
        }
    }
    created = client.request("POST", "/v3/credentials", admin, json=body)
    assert created.status_code == 201, created.text
    cred = created.json()["credential"]
    assert cred["id"] == ec2_credential_id("a" * 32)
    assert json.loads(cred["blob"]) == json.loads(blob)
    assert client.request("POST", "/v3/credentials", admin, json=body).status_code == 409

    listed = client.request("GET", f"/v3/credentials?user_id={seed.demo_user.id}&type=ec2", admin)
    assert [c["id"] for c in listed.json()["credentials"]] == [cred["id"]]
    demo, _ = client.login("demo", "demo")
    assert client.request("GET", f"/v3/credentials/{cred['id']}", demo).status_code == 200
    other = client.request("GET", "/v3/credentials", demo).json()["credentials"]
    assert len(other) == 1

    signed = v2_signed("a" * 32, "b" * 32)
    assert client.request("POST", "/v3/ec2tokens", json={"credentials": signed}).status_code == 200
    assert client.request("DELETE", f"/v3/credentials/{cred['id']}", admin).status_code == 204
    assert client.request("GET", f"/v3/credentials/{cred['id']}", admin).status_code == 404

    not_ec2 = {"credential": {**body["credential"], "blob": "{}"}}
    assert client.request("POST", "/v3/credentials", admin, json=not_ec2).status_code == 400


def test_secret_is_encrypted_at_rest(client: IdentityClient, store, seed) -> None:
    token, _ = client.login("demo", "demo")
    base = f"/v3/users/{seed.demo_user.id}/credentials/OS-EC2"
    secret = client.request("POST", base, token, json={"tenant_id": seed.demo_project.id}).json()[
        "credential"
    ]["secret"]
    with store.engine.connect() as conn:
        raw = conn.exec_driver_sql("SELECT encrypted_blob FROM keystone_credentials").scalar()
    assert secret not in raw
