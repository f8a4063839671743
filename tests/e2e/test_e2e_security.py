"""Projects see only their own stacks; roles and tokens are enforced (real HTTP)."""

from __future__ import annotations

import pathlib
import uuid

import pytest
import requests
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

HERE = pathlib.Path(__file__).parent / "templates"
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"pw": {"type": "string", "hidden": True, "default": "dflt"}},
    "resources": {"r": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "pw"}}}},
    "outputs": {"o": {"value": "visible"}},
}

pytestmark = pytest.mark.timeout(180)


def _session(server, user, password, project):
    auth = v3.Password(
        auth_url=server.auth_url,
        username=user,
        password=password,
        project_name=project,
        user_domain_id="default",
        project_domain_id="default",
    )
    return ks_session.Session(auth=auth)


@pytest.fixture(scope="module")
def other_member(kiln_server):
    """A second project with a member user, made with the admin cloud."""
    name = f"other-{uuid.uuid4().hex[:6]}"
    kiln_server.openstack("project", "create", name)
    kiln_server.openstack("user", "create", "--project", name, "--password", "pw-other", name)
    kiln_server.openstack(
        "role", "add", "--project", name, "--user", name, "member", json_out=False
    )
    return _session(kiln_server, name, "pw-other", name)


@pytest.fixture(scope="module")
def demo(kiln_server):
    entry = kiln_server.cloud("kiln-demo")["auth"]
    return _session(kiln_server, "demo", entry["password"], "demo")


def _url(server, sess, path):
    return f"{server.api_url}/v1/{sess.get_project_id()}{path}"


def test_another_project_gets_404_everywhere(kiln_server, demo, other_member):
    created = demo.post(
        _url(kiln_server, demo, "/stacks"), json={"stack_name": "private", "template": TEMPLATE}
    ).json()
    sid = created["stack"]["id"]
    base = f"/stacks/private/{sid}"
    paths = [
        "",
        "/resources",
        "/resources/r",
        "/events",
        "/template",
        "/environment",
        "/files",
        "/outputs",
        "/outputs/o",
        "/snapshots",
        "/export",
    ]
    for path in paths:
        url = f"{kiln_server.api_url}/v1/{other_member.get_project_id()}{base}{path}"
        resp = other_member.get(url, raise_exc=False)
        assert resp.status_code == 404, (path, resp.status_code, resp.text)
    # the owner's tenant segment with another project's token: 403 before anything else
    resp = other_member.get(_url(kiln_server, demo, base), raise_exc=False)
    assert resp.status_code == 403
    for method in ("DELETE", "PATCH", "PUT"):
        url = f"{kiln_server.api_url}/v1/{other_member.get_project_id()}{base}"
        resp = other_member.request(url, method, json={}, raise_exc=False)
        assert resp.status_code == 404, (method, resp.status_code)


def test_member_is_forbidden_admin_operations(kiln_server, demo):
    resp = demo.get(_url(kiln_server, demo, "/services"), raise_exc=False)
    assert resp.status_code == 403
    assert resp.json()["error"]["type"] == "Forbidden"
    resp = demo.get(_url(kiln_server, demo, "/stacks?global_tenant=true"), raise_exc=False)
    assert resp.status_code == 403


def test_bad_expired_or_revoked_tokens_get_401(kiln_server, demo):
    url = _url(kiln_server, demo, "/stacks")
    assert requests.get(url, timeout=10).status_code == 401
    bad = requests.get(url, headers={"X-Auth-Token": "garbage"}, timeout=10)
    assert bad.status_code == 401
    assert bad.json()["error"]["code"] == 401
    token = demo.get_token()
    assert requests.get(url, headers={"X-Auth-Token": token}, timeout=10).status_code == 200
    admin = kiln_server.cloud("kiln")["auth"]
    admin_sess = _session(kiln_server, "admin", admin["password"], "admin")
    revoke = requests.delete(
        f"{kiln_server.auth_url}/auth/tokens",
        headers={"X-Auth-Token": admin_sess.get_token(), "X-Subject-Token": token},
        timeout=10,
    )
    assert revoke.status_code == 204
    assert requests.get(url, headers={"X-Auth-Token": token}, timeout=10).status_code == 401


def test_hidden_parameters_never_appear(kiln_server, demo):
    created = demo.post(
        _url(kiln_server, demo, "/stacks"),
        json={"stack_name": "hidden", "template": TEMPLATE, "parameters": {"pw": "hunter2"}},
    ).json()
    sid = created["stack"]["id"]
    base = f"/stacks/hidden/{sid}"
    for path in ("", "/environment", "/export", "/template"):
        resp = demo.get(_url(kiln_server, demo, base + path), raise_exc=False)
        assert resp.status_code == 200, (path, resp.text)
        assert "hunter2" not in resp.text, (path, resp.text)
    listed = demo.get(_url(kiln_server, demo, "/stacks/detail")).text
    assert "hunter2" not in listed
