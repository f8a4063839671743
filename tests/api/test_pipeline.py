"""The whole native pipeline in no-auth mode (heat-api.md 1.2): ids, faults, limits, policy."""

from __future__ import annotations

import json

import falcon
import pytest
from falcon import testing

from kiln.api.native import lookup
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiSettings, authorize, body
from kiln.api.pipeline import build_native_pipeline
from kiln.api.policy import OsloPolicy
from kiln.engine.service import Caller, StackRequest
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}


class Probe:
    """A tiny route: who the caller is (GET), a member-only create (POST), a crash (DELETE)."""

    def __init__(self, deps):
        self.deps = deps

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:index")
        resp.media = {"project_id": ctx.project_id, "user_id": ctx.user_id, "roles": ctx.roles}

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        authorize(self.deps, req, "stacks:create")
        resp.media = {"got": body(req)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        raise RuntimeError("secret insides")


class GlobalIndex:
    def __init__(self, deps):
        self.deps = deps

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        authorize(self.deps, req, "stacks:global_index")


def _routes(deps):
    return [("/{tenant_id}/probe", Probe(deps)), ("/{tenant_id}/everything", GlobalIndex(deps))]


@pytest.fixture
def api(tmp_path):
    harness = make_api(tmp_path, policy=OsloPolicy(), settings=ApiSettings(max_json_body_size=64))
    app = create_app(harness.deps, [lookup.routes, _routes])
    pipeline = build_native_pipeline(app, settings=harness.deps.settings, auth=None)
    harness.client = testing.TestClient(pipeline)
    return harness


def _request_id(found) -> str:
    value = found.headers["X-Openstack-Request-Id"]
    assert value.startswith("req-") and len(value) == 40
    return value


def test_request_id_on_a_404_a_302_a_500_and_the_version_document(api):
    stack_id = api.engine.service.create_stack(
        Caller(PROJECT, "anonymous"), StackRequest(name="web", template=TEMPLATE)
    )
    redirect = api.client.simulate_get(f"/v1/{PROJECT}/stacks/web")
    assert redirect.status_code == 302
    assert redirect.headers["Location"].endswith(f"/v1/{PROJECT}/stacks/web/{stack_id}")
    missing = api.client.simulate_get(f"/v1/{PROJECT}/nothing-here")
    assert missing.status_code == 404
    crash = api.client.simulate_delete(f"/v1/{PROJECT}/probe")
    assert crash.status_code == 500
    assert crash.json["error"] == {
        "type": "HTTPInternalServerError",
        "message": "Unexpected error while processing the request.",
        "traceback": None,
    }
    versions = api.client.simulate_get("/")
    assert versions.status_code == 300
    ids = {_request_id(r) for r in (redirect, missing, crash, versions)}
    assert len(ids) == 4


def test_no_auth_takes_the_project_from_the_url(api):
    found = api.client.simulate_get(f"/v1/{OTHER_PROJECT}/probe")
    assert found.json == {
        "project_id": OTHER_PROJECT,
        "user_id": "anonymous",
        "roles": ["admin", "member", "reader"],
    }


def test_a_reader_cannot_create_a_member_can(api):
    denied = api.client.simulate_post(
        f"/v1/{PROJECT}/probe", json={"a": 1}, headers={"X-Roles": "reader"}
    )
    assert denied.status_code == 403
    assert denied.json["error"] == {
        "type": "Forbidden",
        "message": "You are not authorized to use stacks:create.",
        "traceback": None,
    }
    allowed = api.client.simulate_post(
        f"/v1/{PROJECT}/probe", json={"a": 1}, headers={"X-Roles": "member"}
    )
    assert allowed.json == {"got": {"a": 1}}


def test_global_index_is_denied_even_to_the_admin(api):
    found = api.client.simulate_get(f"/v1/{PROJECT}/everything")
    assert found.status_code == 403
    assert found.json["error"]["message"] == "You are not authorized to use stacks:global_index."


def test_body_over_the_limit_is_request_limit_exceeded(api):
    data = json.dumps({"x": "y" * 100})
    found = api.client.simulate_post(f"/v1/{PROJECT}/probe", body=data)
    assert found.status_code == 400
    assert found.json["error"]["type"] == "RequestLimitExceeded"
    assert found.json["error"]["message"] == (
        f"Request limit exceeded: JSON body size ({len(data)} bytes) exceeds maximum "
        "allowed size (64 bytes)."
    )
    _request_id(found)


def test_healthcheck_needs_nothing(api):
    found = api.client.simulate_get("/healthcheck")
    assert (found.status_code, found.text) == (200, "OK")
    _request_id(found)


def test_proxy_headers_set_the_urls_when_enabled(tmp_path):
    harness = make_api(tmp_path)
    app = create_app(harness.deps, [lookup.routes])
    stack_id = harness.engine.service.create_stack(
        Caller(PROJECT, "anonymous"), StackRequest(name="web", template=TEMPLATE)
    )
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "heat.example.net"}
    for enabled, expected in ((True, "https://heat.example.net"), (False, "http://")):
        pipeline = build_native_pipeline(
            app, settings=harness.deps.settings, auth=None, proxy_headers=enabled
        )
        found = testing.TestClient(pipeline).simulate_get(
            f"/v1/{PROJECT}/stacks/web", headers=forwarded
        )
        assert found.headers["Location"].startswith(expected)
        assert found.headers["Location"].endswith(f"/stacks/web/{stack_id}")
        versions = testing.TestClient(pipeline).simulate_get("/", headers=forwarded)
        assert versions.json["versions"][0]["links"][0]["href"].startswith(expected)
