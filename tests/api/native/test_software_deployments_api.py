"""Software deployments and server metadata over the API (heat-api.md 2.8 D1-D6, 3.13)."""

from __future__ import annotations

import pytest

from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

AGENTS = "a61d0c5e2a8f4e1b9c3d7a0e5f2b8c41"  # a stack user project


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=OsloPolicy())


def _config(api, name="cfg"):
    found = api.client.simulate_post(
        api.url("/software_configs"),
        json={"name": name, "group": "script", "config": "echo", "inputs": [{"name": "port"}]},
    )
    return found.json["software_config"]["id"]


def _deploy(api, **fields):
    return api.client.simulate_post(api.url("/software_deployments"), json=fields)


def test_create_show_and_defaults(api):
    config_id = _config(api)
    made = _deploy(
        api,
        config_id=config_id,
        server_id="srv-1",
        input_values={"port": 8080},
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="Deploy data available",
    )
    assert made.status_code == 200
    deployment = made.json["software_deployment"]
    assert list(deployment) == [
        "id",
        "config_id",
        "server_id",
        "action",
        "status",
        "status_reason",
        "input_values",
        "output_values",
        "creation_time",
    ]
    assert (deployment["config_id"], deployment["input_values"]) == (config_id, {"port": 8080})
    assert deployment["output_values"] is None
    shown = api.client.simulate_get(api.url(f"/software_deployments/{deployment['id']}"))
    assert shown.json == {"software_deployment": deployment}
    bare = _deploy(api, config_id=config_id, server_id="srv-2").json["software_deployment"]
    assert (bare["action"], bare["status"], bare["status_reason"]) == ("INIT", "COMPLETE", "")
    assert bare["input_values"] is None


def test_create_errors(api):
    config_id = _config(api)
    unknown = _deploy(api, config_id="5c0ffee0-0000-4000-8000-000000000000", server_id="s")
    assert (unknown.status_code, unknown.json["error"]["type"]) == (400, "Invalid")
    assert unknown.json["error"]["message"] == (
        "Config with id 5c0ffee0-0000-4000-8000-000000000000 not found"
    )
    assert _deploy(api, server_id="s").status_code == 400
    assert _deploy(api, config_id=config_id).status_code == 400
    assert _deploy(api, config_id=config_id, server_id="s", input_values=[1]).status_code == 400
    long_project = _deploy(api, config_id=config_id, server_id="s", stack_user_project_id="p" * 65)
    assert long_project.status_code == 400
    assert api.client.simulate_post(api.url("/software_deployments")).status_code == 400


def test_update_applies_only_given_values(api):
    first, second = _config(api, "first"), _config(api, "second")
    made = _deploy(api, config_id=first, server_id="srv", action="CREATE", status="IN_PROGRESS")
    deployment_id = made.json["software_deployment"]["id"]
    url = api.url(f"/software_deployments/{deployment_id}")
    updated = api.client.simulate_put(
        url,
        json={
            "status": "COMPLETE",
            "status_reason": "Outputs received",
            "output_values": {"deploy_stdout": "done\n", "deploy_status_code": 0},
            "action": "",
            "config_id": second,
        },
    ).json["software_deployment"]
    assert (updated["action"], updated["status"]) == ("CREATE", "COMPLETE")
    assert updated["status_reason"] == "Outputs received"
    assert updated["config_id"] == second
    assert updated["output_values"]["deploy_status_code"] == 0
    assert "updated_time" in updated
    bad = api.client.simulate_put(url, json={"config_id": "nothing"})
    assert (bad.status_code, bad.json["error"]["type"]) == (400, "Invalid")
    assert api.client.simulate_put(url).status_code == 400


def test_list_delete_and_not_found(api):
    config_id = _config(api)
    ids = [
        _deploy(api, config_id=config_id, server_id=server).json["software_deployment"]["id"]
        for server in ("a", "b", "a")
    ]
    listed = api.client.simulate_get(api.url("/software_deployments")).json
    assert [d["id"] for d in listed["software_deployments"]] == ids
    on_a = api.client.simulate_get(api.url("/software_deployments"), query_string="server_id=a")
    assert [d["id"] for d in on_a.json["software_deployments"]] == [ids[0], ids[2]]
    gone = api.client.simulate_delete(api.url(f"/software_deployments/{ids[0]}"))
    assert gone.status_code == 204
    missing = api.client.simulate_get(api.url(f"/software_deployments/{ids[0]}"))
    assert missing.status_code == 404
    assert missing.json["error"] == {
        "type": "NotFound",
        "message": f"Deployment with id {ids[0]} not found",
        "traceback": None,
    }
    api.as_user(project_id=OTHER_PROJECT)
    assert api.client.simulate_get(api.url(f"/software_deployments/{ids[1]}")).status_code == 404
    assert api.client.simulate_get(api.url("/software_deployments")).json == {
        "software_deployments": []
    }


def test_server_metadata_sorted_by_config_name_and_seen_by_agents(api):
    later, earlier = _config(api, "b-second"), _config(api, "a-first")
    _deploy(api, config_id=later, server_id="srv", stack_user_project_id=AGENTS)
    _deploy(api, config_id=earlier, server_id="srv", stack_user_project_id=AGENTS)
    _deploy(api, config_id=earlier, server_id="other")
    found = api.client.simulate_get(api.url("/software_deployments/metadata/srv"))
    assert found.status_code == 200
    metadata = found.json["metadata"]
    assert [c["name"] for c in metadata] == ["a-first", "b-second"]
    assert set(metadata[0]) == {
        "id",
        "name",
        "group",
        "creation_time",
        "config",
        "inputs",
        "outputs",
        "options",
    }
    api.as_user(project_id=AGENTS, roles=("heat_stack_user",))
    agent = api.client.simulate_get(api.url("/software_deployments/metadata/srv"))
    assert [c["id"] for c in agent.json["metadata"]] == [earlier, later]
    refused = api.client.simulate_get(api.url("/software_deployments"))
    assert refused.status_code == 403
    api.as_user(project_id=OTHER_PROJECT, roles=("member", "reader"))
    assert api.client.simulate_get(api.url("/software_deployments/metadata/srv")).json == {
        "metadata": []
    }
    api.as_user(project_id=PROJECT)
    assert api.client.simulate_get(api.url("/software_deployments/metadata/none")).json == {
        "metadata": []
    }
