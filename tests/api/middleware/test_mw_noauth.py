"""The no-auth development mode: the project comes from the URL."""

from __future__ import annotations

from falcon import testing

from kiln.api.context import ENVIRON_KEY
from kiln.api.middleware.noauth import DEFAULT_PROJECT, NoAuth, project_from_path
from kiln.api.middleware.request_id import RequestId


def _client(seen):
    def app(environ, start_response):
        seen["ctx"] = environ[ENVIRON_KEY]
        start_response("204 No Content", [])
        return []

    return testing.TestClient(RequestId(NoAuth(app)))


def test_project_from_the_tenant_segment_everything_allowed():
    seen: dict = {}
    found = _client(seen).simulate_get("/demo/stacks")
    ctx = seen["ctx"]
    assert (ctx.project_id, ctx.user_id, ctx.roles) == (
        "demo",
        "anonymous",
        ("admin", "member", "reader"),
    )
    assert ctx.is_admin
    assert ctx.request_id == found.headers["X-Openstack-Request-Id"]


def test_identity_headers_are_trusted_in_this_mode():
    seen: dict = {}
    _client(seen).simulate_get("/demo", headers={"X-Roles": "reader", "X-User-Id": "bob"})
    ctx = seen["ctx"]
    assert (ctx.user_id, ctx.user_name, ctx.roles, ctx.is_admin) == (
        "bob",
        "bob",
        ("reader",),
        False,
    )


def test_project_from_path():
    assert project_from_path("/p1/stacks/a") == "p1"
    assert project_from_path("/") is None
    seen: dict = {}
    _client(seen).simulate_get("/")
    assert seen["ctx"].project_id == DEFAULT_PROJECT
