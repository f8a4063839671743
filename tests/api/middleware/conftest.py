"""A minimal Keystone v3 for keystonemiddleware tests, served by cheroot on 127.0.0.1.

Just what keystonemiddleware's token validation uses: version discovery, the
service user's password login (``POST /v3/auth/tokens`` with a catalog), and
token validation (``GET /v3/auth/tokens`` with ``X-Subject-Token``). The
sandbox's real identity service replaces it in later tests.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from cheroot import wsgi

SERVICE_USER = "kiln"
SERVICE_PASSWORD = "service-secret"
SERVICE_TOKEN = "service-token-1"
EXPIRES = "2099-01-01T00:00:00.000000Z"
ISSUED = "2024-01-01T00:00:00.000000Z"
DOMAIN = {"id": "default", "name": "Default"}


def _token_doc(url: str, user: dict[str, Any], project: dict[str, Any], roles: list[str]) -> dict:
    endpoints = [
        {
            "id": f"e-{i}",
            "interface": i,
            "region": "RegionOne",
            "region_id": "RegionOne",
            "url": f"{url}/v3",
        }
        for i in ("public", "internal", "admin")
    ]
    return {
        "token": {
            "methods": ["password"],
            "expires_at": EXPIRES,
            "issued_at": ISSUED,
            "audit_ids": ["a1"],
            "user": {**user, "domain": DOMAIN, "password_expires_at": None},
            "project": {**project, "domain": DOMAIN},
            "roles": [{"id": f"r-{r}", "name": r} for r in roles],
            "is_domain": False,
            "catalog": [
                {"id": "s-identity", "type": "identity", "name": "keystone", "endpoints": endpoints}
            ],
        }
    }


@dataclass
class FakeKeystone:
    service_user = SERVICE_USER
    service_password = SERVICE_PASSWORD

    url: str = ""
    #: user token -> (user id, user name, project id, project name, roles)
    tokens: dict[str, tuple[str, str, str, str, list[str]]] = field(default_factory=dict)
    validations: int = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"].rstrip("/")
        if method == "GET" and path in ("", "/v3"):
            return self._json(start_response, "200 OK", self._version_doc(path))
        if method == "POST" and path == "/v3/auth/tokens":
            body = json.loads(environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"])))
            user = body["auth"]["identity"]["password"]["user"]
            if (user.get("name"), user.get("password")) != (SERVICE_USER, SERVICE_PASSWORD):
                return self._json(start_response, "401 Unauthorized", {"error": {"code": 401}})
            doc = _token_doc(
                self.url,
                {"id": "u-kiln", "name": SERVICE_USER},
                {"id": "p-service", "name": "service"},
                ["service", "admin"],
            )
            return self._json(
                start_response, "201 Created", doc, [("X-Subject-Token", SERVICE_TOKEN)]
            )
        if method == "GET" and path == "/v3/auth/tokens":
            if environ.get("HTTP_X_AUTH_TOKEN") != SERVICE_TOKEN:
                return self._json(start_response, "401 Unauthorized", {"error": {"code": 401}})
            self.validations += 1
            found = self.tokens.get(environ.get("HTTP_X_SUBJECT_TOKEN", ""))
            if found is None:
                return self._json(start_response, "404 Not Found", {"error": {"code": 404}})
            user_id, user_name, project_id, project_name, roles = found
            doc = _token_doc(
                self.url,
                {"id": user_id, "name": user_name},
                {"id": project_id, "name": project_name},
                roles,
            )
            subject = environ["HTTP_X_SUBJECT_TOKEN"]
            return self._json(start_response, "200 OK", doc, [("X-Subject-Token", subject)])
        return self._json(start_response, "404 Not Found", {"error": {"code": 404}})

    def _version_doc(self, path: str) -> dict[str, Any]:
        version = {
            "id": "v3.14",
            "status": "stable",
            "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": f"{self.url}/v3/"}],
            "media-types": [
                {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
            ],
        }
        return {"version": version} if path == "/v3" else {"versions": {"values": [version]}}

    @staticmethod
    def _json(start_response: Any, status: str, doc: Any, headers: Any = ()) -> list[bytes]:
        data = json.dumps(doc).encode()
        start_response(
            status,
            [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *headers],
        )
        return [data]


@pytest.fixture(scope="module")
def keystone() -> Iterator[FakeKeystone]:
    fake = FakeKeystone()
    server = wsgi.Server(("127.0.0.1", 0), fake, numthreads=4)
    server.timeout = 1
    server.prepare()
    fake.url = f"http://127.0.0.1:{server.bind_addr[1]}"
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.stop()
        thread.join(10)
