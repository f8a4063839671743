"""Helpers for the identity service tests: passwords, the catalog, a small HTTP client."""

from __future__ import annotations

from typing import Any

import requests
from keystoneclient.contrib.ec2.utils import Ec2Signer

from kiln.cloud.sandbox.identity import CatalogEntry

ADMIN_PASSWORD = "admin-secret"
DEMO_PASSWORD = "demo-secret"
SERVICE_PASSWORD = "kiln-secret"

CATALOG = [
    CatalogEntry("orchestration", "heat", "http://%(host)s:8004/v1/%(project_id)s"),
    CatalogEntry("cloudformation", "heat-cfn", "http://%(host)s:8000/v1"),
]

CFN_HOST = "127.0.0.1:8000"

PASSWORDS = {"admin": ADMIN_PASSWORD, "demo": DEMO_PASSWORD, "kiln": SERVICE_PASSWORD}


def password_auth(
    user: str, password: str | None = None, *, scope: Any = None, domain: str = "default"
) -> dict[str, Any]:
    """The body of ``POST /v3/auth/tokens`` for a password login."""
    auth: dict[str, Any] = {
        "identity": {
            "methods": ["password"],
            "password": {
                "user": {
                    "name": user,
                    "domain": {"id": domain},
                    "password": password if password is not None else PASSWORDS[user],
                }
            },
        }
    }
    if scope is not None:
        auth["scope"] = scope
    return {"auth": auth}


def project_scope(name: str) -> dict[str, Any]:
    return {"project": {"name": name, "domain": {"id": "default"}}}


class IdentityClient:
    """Raw HTTP against the running service, for what the real clients do not cover."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = requests.Session()

    def close(self) -> None:
        self.http.close()

    def request(
        self, method: str, path: str, token: str | None = None, **kwargs: Any
    ) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token is not None:
            headers["X-Auth-Token"] = token
        return self.http.request(method, self.url + path, headers=headers, timeout=30, **kwargs)

    def login(
        self, user: str, project: str | None = None, password: str | None = None
    ) -> tuple[str, dict]:
        """A token (and its document) for a user, scoped to ``project`` or unscoped."""
        scope = project_scope(project) if project else "unscoped"
        body = password_auth(user, password, scope=scope)
        resp = self.request("POST", "/v3/auth/tokens", json=body)
        assert resp.status_code == 201, resp.text
        return resp.headers["X-Subject-Token"], resp.json()["token"]

    def validate(self, caller: str, subject: str, method: str = "GET") -> requests.Response:
        return self.request(method, "/v3/auth/tokens", caller, headers={"X-Subject-Token": subject})


def v2_signed(access: str, secret: str, *, path: str = "/v1/waitcondition/arn") -> dict[str, Any]:
    """What the CFN API forwards for a pre-signed (v2) wait-condition URL."""
    params = {
        "SignatureMethod": "HmacSHA256",
        "SignatureVersion": "2",
        "AWSAccessKeyId": access,
        "Timestamp": "2026-01-01T00:00:00Z",
    }
    credentials = {"access": access, "host": CFN_HOST, "verb": "GET", "path": path}
    signature = Ec2Signer(secret).generate({**credentials, "params": dict(params)})
    return {**credentials, "params": params, "signature": signature}
