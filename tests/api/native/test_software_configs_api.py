"""Software configs over the API (heat-api.md 2.8 C1-C4, 3.13)."""

from __future__ import annotations

import re

import pytest

from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

ADMIN_ROLES = ("admin", "member", "reader")
CONFIG = {
    "name": "install-nginx",
    "group": "script",
    "config": "#!/bin/sh\napt-get install -y nginx\n",
    "inputs": [{"name": "port", "type": "Number", "default": 80, "description": "listen port"}],
    "outputs": [{"name": "result"}],
}


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=OsloPolicy())


def _create(api, **fields):
    return api.client.simulate_post(api.url("/software_configs"), json={**CONFIG, **fields})


def test_create_answers_200_with_the_whole_config(api):
    found = _create(api)
    assert found.status_code == 200
    config = found.json["software_config"]
    assert list(config) == [
        "id",
        "name",
        "group",
        "creation_time",
        "config",
        "inputs",
        "outputs",
        "options",
    ]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", config["creation_time"])
    assert config["inputs"] == CONFIG["inputs"]
    assert config["outputs"] == [{"name": "result", "type": "String", "error_output": False}]
    assert config["options"] == {}
    shown = api.client.simulate_get(api.url(f"/software_configs/{config['id']}"))
    assert shown.json == {"software_config": config}


def test_defaults_and_structured_config(api):
    found = api.client.simulate_post(
        api.url("/software_configs"), json={"config": {"write_files": [{"path": "/x"}]}}
    )
    config = found.json["software_config"]
    assert (config["name"], config["group"], config["inputs"], config["outputs"]) == (
        None,
        None,
        [],
        [],
    )
    assert config["config"] == {"write_files": [{"path": "/x"}]}


def test_bad_bodies(api):
    no_body = api.client.simulate_post(api.url("/software_configs"))
    assert (no_body.status_code, no_body.json["error"]["type"]) == (400, "HTTPBadRequest")
    not_a_list = _create(api, inputs={"name": "x"})
    assert not_a_list.status_code == 400
    assert not_a_list.json["error"]["message"].startswith("The server could not comply")
    bad_items = _create(
        api,
        inputs=[{"name": "n", "type": "Number", "default": "many"}, {"type": "Float"}],
        outputs=[{"name": "o", "error_output": "yes"}],
    )
    assert bad_items.status_code == 400
    message = bad_items.json["error"]["message"]
    assert "inputs[0].default" in message and "inputs[1].type" in message
    assert "outputs[0].error_output" in message


def test_list_summaries_newest_first_with_paging(api):
    ids = [_create(api, name=f"c{i}").json["software_config"]["id"] for i in range(3)]
    listed = api.client.simulate_get(api.url("/software_configs")).json["software_configs"]
    assert [c["id"] for c in listed] == list(reversed(ids))
    assert set(listed[0]) == {"id", "name", "group", "creation_time"}
    page = api.client.simulate_get(api.url("/software_configs"), query_string="limit=2")
    assert [c["id"] for c in page.json["software_configs"]] == [ids[2], ids[1]]
    rest = api.client.simulate_get(api.url("/software_configs"), query_string=f"marker={ids[1]}")
    assert [c["id"] for c in rest.json["software_configs"]] == [ids[0]]
    bad = api.client.simulate_get(api.url("/software_configs"), query_string="limit=-1")
    assert bad.status_code == 400


def test_projects_are_kept_apart_and_admins_see_all(api):
    mine = _create(api).json["software_config"]["id"]
    api.as_user(project_id=OTHER_PROJECT)
    assert api.client.simulate_get(api.url("/software_configs")).json["software_configs"] == []
    hidden = api.client.simulate_get(api.url(f"/software_configs/{mine}"))
    assert hidden.status_code == 404
    assert hidden.json["error"] == {
        "type": "NotFound",
        "message": f"Software config with id {mine} not found",
        "traceback": None,
    }
    assert api.client.simulate_delete(api.url(f"/software_configs/{mine}")).status_code == 404
    theirs = _create(api).json["software_config"]["id"]
    api.as_user(project_id=PROJECT, roles=ADMIN_ROLES)
    listed = api.client.simulate_get(api.url("/software_configs")).json["software_configs"]
    assert {(c["id"], c["project"]) for c in listed} == {(mine, PROJECT), (theirs, OTHER_PROJECT)}
    shown = api.client.simulate_get(api.url(f"/software_configs/{theirs}")).json
    assert "project" not in shown["software_config"]


def test_global_tenant_is_denied_by_default(api):
    found = api.client.simulate_get(api.url("/software_configs"), query_string="global_tenant=true")
    assert found.status_code == 403
    assert found.json["error"]["message"] == (
        "You are not authorized to use software_configs:global_index."
    )


def test_delete_and_delete_while_deployed(api):
    config_id = _create(api).json["software_config"]["id"]
    deployed = api.client.simulate_post(
        api.url("/software_deployments"), json={"config_id": config_id, "server_id": "srv"}
    )
    assert deployed.status_code == 200
    refused = api.client.simulate_delete(api.url(f"/software_configs/{config_id}"))
    assert (refused.status_code, refused.json["error"]["type"]) == (400, "InvalidRestrictedAction")
    deployment_id = deployed.json["software_deployment"]["id"]
    api.client.simulate_delete(api.url(f"/software_deployments/{deployment_id}"))
    gone = api.client.simulate_delete(api.url(f"/software_configs/{config_id}"))
    assert gone.status_code == 204 and not gone.text
    assert api.client.simulate_get(api.url(f"/software_configs/{config_id}")).status_code == 404


def test_readers_may_read_but_not_write(api):
    api.as_user(roles=("reader",))
    assert api.client.simulate_get(api.url("/software_configs")).status_code == 200
    refused = _create(api)
    assert refused.status_code == 403
    assert (
        refused.json["error"]["message"] == "You are not authorized to use software_configs:create."
    )
