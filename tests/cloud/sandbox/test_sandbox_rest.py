"""The shared REST pieces: token auth, error bodies per service, microversions, dispatch."""

from __future__ import annotations

from typing import Any

import falcon
import falcon.testing
import pytest

from kiln.cloud.api.errors import NotFound, Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.dispatch import PrefixDispatcher
from kiln.cloud.sandbox.rest import (
    IdentityTokens,
    create_service_app,
    error_body,
    negotiate_microversion,
    scope_of,
)


class Tokens:
    def scope(self, token: str) -> CloudScope:
        if token != "good":
            raise Unauthorized("bad token")
        return CloudScope("p1", "u1", frozenset({"member"}))


class Thing:
    def on_get(self, req: falcon.Request, resp: falcon.Response, thing_id: str) -> None:
        if thing_id == "missing":
            raise NotFound(f"Thing {thing_id} could not be found.", kind="ThingNotFound")
        version = negotiate_microversion(
            req, resp, "compute", "2.1", "2.90", legacy_header="X-OpenStack-Nova-API-Version"
        )
        resp.media = {"project": scope_of(req).project_id, "version": list(version)}


class Root:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"prefix": req.prefix, "path": req.path}


def client(style: str) -> falcon.testing.TestClient:
    app = create_service_app(
        style=style,
        tokens=Tokens(),
        routes=[("/", Root()), ("/things/{thing_id}", Thing())],
        public=lambda path: path == "/",
    )
    return falcon.testing.TestClient(app)


def test_tokens_are_required_except_on_public_paths() -> None:
    c = client("nova")
    assert c.simulate_get("/").status_code == 200
    assert c.simulate_get("/things/a").status_code == 401
    got = c.simulate_get("/things/a", headers={"X-Auth-Token": "good"})
    assert got.json == {"project": "p1", "version": [2, 1]}
    assert c.simulate_get("/things/a", headers={"X-Auth-Token": "bad"}).status_code == 401


@pytest.mark.parametrize(
    ("style", "body"),
    [
        ("nova", {"itemNotFound": {"code": 404, "message": "Thing missing could not be found."}}),
        (
            "neutron",
            {
                "NeutronError": {
                    "type": "ThingNotFound",
                    "message": "Thing missing could not be found.",
                    "detail": "",
                }
            },
        ),
        (
            "octavia",
            {
                "faultcode": "Client",
                "faultstring": "Thing missing could not be found.",
                "debuginfo": None,
            },
        ),
    ],
)
def test_cloud_errors_use_the_service_error_body(style: str, body: Any) -> None:
    got = client(style).simulate_get("/things/missing", headers={"X-Auth-Token": "good"})
    assert got.status_code == 404
    assert got.json == body


def test_unknown_paths_are_404_in_the_service_body() -> None:
    got = client("cinder").simulate_get("/nope", headers={"X-Auth-Token": "good"})
    assert got.status_code == 404
    assert got.json == {
        "itemNotFound": {"code": 404, "message": "The resource could not be found."}
    }


def test_glance_errors_are_plain_text() -> None:
    assert error_body("glance", 404, "No image found with ID x") == (
        "404 Not Found\n\nNo image found with ID x"
    )


def test_microversions_are_negotiated_and_echoed() -> None:
    c = client("nova")
    auth = {"X-Auth-Token": "good"}
    got = c.simulate_get("/things/a", headers={**auth, "OpenStack-API-Version": "compute 2.60"})
    assert got.json["version"] == [2, 60]
    assert got.headers["OpenStack-API-Version"] == "compute 2.60"
    assert got.headers["X-OpenStack-Nova-API-Version"] == "2.60"
    assert "OpenStack-API-Version" in got.headers["Vary"]
    latest = c.simulate_get("/things/a", headers={**auth, "X-OpenStack-Nova-API-Version": "latest"})
    assert latest.json["version"] == [2, 90]
    too_new = c.simulate_get("/things/a", headers={**auth, "OpenStack-API-Version": "compute 2.99"})
    assert too_new.status_code == 406
    assert "maximum is 2.90" in too_new.json["computeFault"]["message"]
    bad = c.simulate_get("/things/a", headers={**auth, "OpenStack-API-Version": "compute two"})
    assert bad.status_code == 400


def test_the_dispatcher_mounts_apps_under_prefixes() -> None:
    inner = client("nova").app
    fallback = create_service_app(
        style="keystone", tokens=Tokens(), routes=[("/", Root())], public=lambda path: True
    )
    app = PrefixDispatcher({"/compute": inner, "/compute-legacy/": inner}, default=fallback)
    c = falcon.testing.TestClient(app)
    mounted = c.simulate_get("/compute/")
    assert mounted.json["path"] == "/"
    assert mounted.json["prefix"].endswith("/compute")
    assert c.simulate_get("/").json["path"] == "/"  # the default app
    assert "error" in c.simulate_get("/computer").json  # not /compute: the default's 404


def test_identity_tokens_cache_valid_tokens_and_reject_others() -> None:
    calls: list[str] = []

    class Info:
        class project:
            id = "p1"

        class user:
            id = "u1"

        role_names = {"admin"}
        trust = None

    def validate(token: str) -> Any:
        calls.append(token)
        if token != "ok":
            raise RuntimeError("invalid")
        return Info()

    tokens = IdentityTokens(validate)
    assert tokens.scope("ok").is_admin
    assert tokens.scope("ok").project_id == "p1"
    assert calls == ["ok"]
    with pytest.raises(Unauthorized):
        tokens.scope("nope")
