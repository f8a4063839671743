"""keystonemiddleware's auth_token in front of a WSGI app, validating against the sandbox.

The settings come from ``kiln.cloud.sandbox.identity.middleware_conf``, which documents
what works.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
import requests
from identity_support import SERVICE_PASSWORD, IdentityClient

from kiln.cloud.sandbox.http_server import ServerHandle, serve_in_thread
from kiln.cloud.sandbox.identity.middleware_conf import auth_token_conf

with warnings.catch_warnings():
    # WebOb (under keystonemiddleware) imports the deprecated ``cgi`` module.
    warnings.simplefilter("ignore", DeprecationWarning)
    from keystonemiddleware import auth_token

pytestmark = pytest.mark.timeout(60)


def echo_identity_headers(
    environ: dict[str, Any], start_response: Callable[..., Any]
) -> Iterable[bytes]:
    """The wrapped app: answers with the X-* headers the middleware set."""
    headers = {k[7:]: v for k, v in environ.items() if k.startswith("HTTP_X_")}
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(headers).encode()]


@pytest.fixture
def protected(identity: ServerHandle) -> Iterator[str]:
    conf = auth_token_conf(identity.url, password=SERVICE_PASSWORD, token_cache_time=-1)
    app = auth_token.AuthProtocol(echo_identity_headers, conf)
    handle = serve_in_thread(app, poll_interval=0.02)
    try:
        yield handle.url
    finally:
        handle.stop()


def call(url: str, token: str | None) -> requests.Response:
    headers = {"X-Auth-Token": token} if token else {}
    return requests.get(url + "/stacks", headers=headers, timeout=30)


def test_valid_token_reaches_the_app_with_identity_headers(
    protected: str, client: IdentityClient, seed
) -> None:
    token, _ = client.login("demo", "demo")
    resp = call(protected, token)
    assert resp.status_code == 200, resp.text
    seen = resp.json()
    assert seen["IDENTITY_STATUS"] == "Confirmed"
    assert seen["PROJECT_ID"] == seed.demo_project.id
    assert seen["USER_ID"] == seed.demo_user.id
    assert set(seen["ROLES"].split(",")) == {"member", "reader"}
    catalog = json.loads(seen["SERVICE_CATALOG"])
    assert {s["type"] for s in catalog} == {"identity", "orchestration", "cloudformation"}


def test_revoked_expired_garbage_and_missing_tokens_get_401(
    protected: str, client: IdentityClient, clock
) -> None:
    revoked, _ = client.login("demo", "demo")
    assert call(protected, revoked).status_code == 200
    assert client.validate(revoked, revoked, "DELETE").status_code == 204
    refused = call(protected, revoked)
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Keystone uri=")

    assert call(protected, "garbage").status_code == 401
    assert call(protected, None).status_code == 401

    expiring, _ = client.login("demo", "demo")
    clock.advance(3601)  # the middleware's own service token expires too: it logs in again
    assert call(protected, expiring).status_code == 401
    fresh, _ = client.login("demo", "demo")
    assert call(protected, fresh).status_code == 200
