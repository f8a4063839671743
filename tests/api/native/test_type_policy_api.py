"""``resource_types:<Type>`` rules apply to create, update and preview (heat-api.md 6)."""

from __future__ import annotations

import pytest

from kiln.api.context import RequestContext
from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import MEMBER, PROJECT, make_api

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"pw": {"type": "OS::Heat::RandomString"}},
}
ADMIN = RequestContext(project_id=PROJECT, user_id="admin", roles=("admin", "member", "reader"))


def test_admin_only_types_are_denied_to_members() -> None:
    policy = OsloPolicy()
    denied = policy.denied_resource_types(MEMBER)
    assert "OS::Nova::Flavor" in denied and "OS::Keystone::*" in denied
    assert policy.denied_resource_types(ADMIN) == ()


@pytest.fixture
def api(tmp_path):
    rules = tmp_path / "policy.yaml"
    rules.write_text('"resource_types:OS::Heat::RandomString": "rule:project_admin"\n')
    return make_api(tmp_path, policy=OsloPolicy(policy_file=rules))


def test_a_denied_type_is_refused_on_create_preview_and_update(api) -> None:
    body = {"stack_name": "s", "template": TEMPLATE}
    for path in ("/stacks", "/stacks/preview"):
        found = api.client.simulate_post(api.url(path), json=body)
        assert found.status_code == 403, found.text
        assert found.json["error"]["type"] == "Forbidden"
        assert found.json["error"]["message"] == (
            "You are not authorized to use OS::Heat::RandomString."
        )
    allowed = {"stack_name": "s", "template": {**TEMPLATE, "resources": {}}}
    created = api.client.simulate_post(api.url("/stacks"), json=allowed)
    assert created.status_code == 201
    url = created.headers["Location"].split(f"/v1/{PROJECT}", 1)[1]
    found = api.client.simulate_put(api.url(url), json={"template": TEMPLATE})
    assert found.status_code == 403
    api.as_user(roles=("admin", "member", "reader"))
    assert api.client.simulate_put(api.url(url), json={"template": TEMPLATE}).status_code == 202
