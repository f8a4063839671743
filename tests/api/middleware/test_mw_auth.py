"""keystonemiddleware in the pipeline, against a minimal Keystone (see conftest.py)."""

from __future__ import annotations

import falcon
import pytest
from falcon import testing

from kiln.api.context import RequestContext
from kiln.api.middleware.auth import AuthSettings, authtoken_conf, context_from_headers
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiDeps, ApiSettings, authorize
from kiln.api.native.wsgi import load_config
from kiln.api.pipeline import build_native_pipeline
from kiln.api.policy import OsloPolicy
from kiln.rpc.transport import InProcessTransport

pytestmark = pytest.mark.timeout(60)

PROJECT = "3f8ab1c2d4e54f6a9b7c0d1e2f3a4b5c"

UNAUTHORIZED = {
    "error": {
        "code": 401,
        "title": "Unauthorized",
        "message": "The request you have made requires authentication.",
    }
}


class WhoAmI:
    def __init__(self, deps: ApiDeps) -> None:
        self.deps = deps

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:index")
        resp.media = {
            "project_id": ctx.project_id,
            "project_name": ctx.project_name,
            "user_id": ctx.user_id,
            "user_name": ctx.user_name,
            "roles": list(ctx.roles),
            "auth_token": ctx.auth_token,
            "request_id": ctx.request_id,
            "is_admin": ctx.is_admin,
            "global_request_id": ctx.extra.get("global_request_id"),
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        authorize(self.deps, req, "stacks:create")
        resp.media = {"created": True}


@pytest.fixture(scope="module")
def users(keystone):
    keystone.tokens.update(
        {
            "member-token": ("u-alice", "alice", PROJECT, "demo", ["member", "reader"]),
            "reader-token": ("u-bob", "bob", PROJECT, "demo", ["reader"]),
            "admin-token": ("u-root", "root", PROJECT, "demo", ["admin"]),
        }
    )
    return keystone


@pytest.fixture(scope="module")
def client(users):
    keystone = users
    deps = ApiDeps(engine=InProcessTransport({}), policy=OsloPolicy())
    app = create_app(deps, [lambda d: [("/{tenant_id}/whoami", WhoAmI(d))]])
    auth = AuthSettings(
        auth_url=f"{keystone.url}/v3",
        username=keystone.service_user,
        password=keystone.service_password,
    )
    return testing.TestClient(build_native_pipeline(app, settings=ApiSettings(), auth=auth))


def _get(client, token=None, **kw):
    headers = {"X-Auth-Token": token} if token else {}
    headers.update(kw.pop("headers", {}))
    return client.simulate_get(f"/v1/{PROJECT}/whoami", headers=headers, **kw)


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_no_or_bad_token_is_keystones_401(client, keystone, token):
    found = _get(client, token)
    assert found.status_code == 401
    assert found.json == UNAUTHORIZED
    assert found.headers["WWW-Authenticate"] == f'Keystone uri="{keystone.url}/v3"'
    assert found.headers["X-Openstack-Request-Id"].startswith("req-")


def test_valid_token_reaches_the_app_with_its_context(client):
    global_id = "req-4c7c4d0e-2e8a-4c9b-9c61-3f0a7d1f2b3c"
    found = _get(client, "member-token", headers={"X-Openstack-Request-Id": global_id})
    assert found.status_code == 200
    assert found.json == {
        "project_id": PROJECT,
        "project_name": "demo",
        "user_id": "u-alice",
        "user_name": "alice",
        "roles": ["member", "reader"],
        "auth_token": "member-token",
        "request_id": found.headers["X-Openstack-Request-Id"],
        "is_admin": False,
        "global_request_id": global_id,
    }


def test_policy_sees_the_tokens_roles(client):
    assert client.simulate_post(
        f"/v1/{PROJECT}/whoami", headers={"X-Auth-Token": "member-token"}
    ).json == {"created": True}
    denied = client.simulate_post(f"/v1/{PROJECT}/whoami", headers={"X-Auth-Token": "reader-token"})
    assert denied.status_code == 403
    assert denied.json["error"]["message"] == "You are not authorized to use stacks:create."


def test_another_projects_tenant_segment_is_forbidden(client):
    found = client.simulate_get("/v1/someone-else/whoami", headers={"X-Auth-Token": "member-token"})
    assert found.status_code == 403
    assert found.json["error"]["type"] == "HTTPForbidden"


def test_an_admin_may_use_another_tenant_segment(client):
    found = client.simulate_get("/v1/someone-else/whoami", headers={"X-Auth-Token": "admin-token"})
    assert found.status_code == 200
    # Heat: the URL tenant is ignored for admins; the policy target is their own project.
    assert found.json["project_id"] == PROJECT
    assert found.json["is_admin"] is True


def test_forged_identity_headers_are_dropped(client):
    found = _get(client, "reader-token", headers={"X-Roles": "admin", "X-Project-Id": "other"})
    assert found.json["roles"] == ["reader"]
    assert found.json["project_id"] == PROJECT


def test_version_document_and_healthcheck_need_no_token(client):
    assert client.simulate_get("/").status_code == 300
    assert client.simulate_get("/v1/").status_code == 200
    assert client.simulate_get("/healthcheck").text == "OK"


def test_conf_dict_uses_a_private_config_and_no_memcached():
    conf = authtoken_conf(AuthSettings(auth_url="http://ks/v3", username="u", password="p"))
    private = conf.pop("oslo_config_config")
    assert conf == {
        "delay_auth_decision": False,
        "service_token_roles_required": True,
        "include_service_catalog": True,
        "www_authenticate_uri": "http://ks/v3",
        "interface": "public",
        "auth_type": "password",
    }
    assert private.keystone_authtoken.username == "u"
    assert private.keystone_authtoken.auth_url == "http://ks/v3"


def test_context_from_headers_reads_keystonemiddlewares_headers():
    ctx = context_from_headers(
        {
            "HTTP_X_PROJECT_ID": "p",
            "HTTP_X_USER_ID": "u",
            "HTTP_X_ROLES": "admin, member,reader",
            "HTTP_X_IS_ADMIN_PROJECT": "False",
            "HTTP_X_PROJECT_DOMAIN_ID": "d",
            "openstack.request_id": "req-1",
        }
    )
    assert ctx == RequestContext(
        project_id="p",
        user_id="u",
        roles=("admin", "member", "reader"),
        request_id="req-1",
        is_admin_project=False,
        domain_id="d",
        extra={"project_domain_id": "d"},
    )
    assert not ctx.is_admin


def test_keystone_authtoken_section_of_a_config_file(users, tmp_path):
    keystone = users
    path = tmp_path / "kiln.conf"
    path.write_text(
        "[keystone_authtoken]\n"
        f"www_authenticate_uri = {keystone.url}/v3\n"
        "auth_type = password\n"
        f"auth_url = {keystone.url}/v3\n"
        f"username = {keystone.service_user}\n"
        f"password = {keystone.service_password}\n"
        "project_name = service\n"
        "user_domain_id = default\n"
        "project_domain_id = default\n"
        "interface = public\n"
    )
    conf = load_config([str(path)])
    deps = ApiDeps(engine=InProcessTransport({}), policy=OsloPolicy(conf=conf))
    app = create_app(deps, [lambda d: [("/{tenant_id}/whoami", WhoAmI(d))]])
    pipeline = build_native_pipeline(
        app, settings=ApiSettings(), auth=AuthSettings.from_config(conf)
    )
    client = testing.TestClient(pipeline)
    assert _get(client).status_code == 401
    assert _get(client, "member-token").json["user_name"] == "alice"
