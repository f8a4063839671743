"""Show, stored documents, outputs, delete, abandon and export (heat-api.md 2.1.5-2.1.11)."""

from __future__ import annotations

import pytest
from stack_api_support import JSON, VALUE_TEMPLATE, RecordingPolicy, create, error, show

from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

SHOW_KEYS = {
    "id",
    "links",
    "stack_name",
    "description",
    "template_description",
    "stack_status",
    "stack_status_reason",
    "creation_time",
    "updated_time",
    "deletion_time",
    "notification_topics",
    "capabilities",
    "parameters",
    "outputs",
    "disable_rollback",
    "timeout_mins",
    "stack_owner",
    "parent",
    "stack_user_project_id",
    "tags",
}


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=RecordingPolicy())


@pytest.fixture
def stack_id(api):
    return create(
        api,
        "web",
        VALUE_TEMPLATE,
        environment={"parameters": {"secret": "p4ss"}, "parameter_defaults": {"secret": "d"}},
        files={"notes.txt": "hello"},
    )


def test_show_has_every_key_and_hides_hidden_parameters(api, stack_id):
    shown = show(api, "web", stack_id)
    assert set(shown) == SHOW_KEYS
    assert api.deps.policy.rules[-1] == "stacks:show"
    assert shown["description"] == shown["template_description"] == "A value and a secret"
    assert shown["parameters"] == {
        "OS::stack_id": stack_id,
        "OS::stack_name": "web",
        "OS::project_id": PROJECT,
        "secret": "******",
        "count": "2",
    }
    assert (shown["notification_topics"], shown["capabilities"]) == ([], [])
    assert (shown["parent"], shown["updated_time"], shown["deletion_time"]) == (None, None, None)
    assert shown["stack_user_project_id"] == PROJECT
    assert shown["stack_owner"] == "user-1"
    answer, broken = shown["outputs"]
    assert answer == {"output_key": "answer", "description": "The answer", "output_value": 2}
    assert broken["output_value"] is None and broken["output_error"]
    assert broken["description"] == "No description given"
    assert "outputs" not in show(api, "web", stack_id, "resolve_outputs=false")
    found = api.client.simulate_get(
        api.url(f"/stacks/web/{stack_id}"), query_string="resolve_outputs=nope"
    )
    assert error(found)[:2] == (400, "HTTPBadRequest")


def test_template_environment_and_files(api, stack_id):
    base = api.url(f"/stacks/web/{stack_id}")
    template = api.client.simulate_get(f"{base}/template").json
    assert template["parameters"]["secret"]["hidden"] is True
    assert template["outputs"]["answer"]["description"] == "The answer"
    environment = api.client.simulate_get(f"{base}/environment").json
    assert environment == {
        "parameters": {"secret": "******"},
        "parameter_defaults": {"secret": "******"},
        "resource_registry": {"resources": {}},
        "event_sinks": [],
        "encrypted_param_names": [],
    }
    assert api.client.simulate_get(f"{base}/files").json == {"notes.txt": "hello"}
    assert api.deps.policy.rules[-3:] == ["stacks:template", "stacks:environment", "stacks:files"]
    # the lookup redirects of these sub-paths
    found = api.client.simulate_get(api.url("/stacks/web/template"))
    assert found.status_code == 302 and found.headers["Location"].endswith(f"{stack_id}/template")


def test_outputs(api, stack_id):
    base = api.url(f"/stacks/web/{stack_id}/outputs")
    assert api.client.simulate_get(base).json == {
        "outputs": [
            {"output_key": "answer", "description": "The answer"},
            {"output_key": "broken", "description": "No description given"},
        ]
    }
    assert api.client.simulate_get(f"{base}/answer").json == {
        "output": {"output_key": "answer", "description": "The answer", "output_value": 2}
    }
    broken = api.client.simulate_get(f"{base}/broken").json["output"]
    assert broken["output_value"] is None and "list_join" in broken["output_error"]
    assert error(api.client.simulate_get(f"{base}/nope")) == (
        404,
        "NotFound",
        "Specified output key nope not found.",
    )
    assert api.deps.policy.rules[-4:] == ["stacks:list_outputs"] + ["stacks:show_output"] * 3


def test_delete_then_reads_of_the_deleted_stack(api, stack_id):
    url = api.url(f"/stacks/web/{stack_id}")
    found = api.client.simulate_delete(url, headers=JSON)
    assert found.status_code == 204 and not found.content
    assert api.deps.policy.rules[-1] == "stacks:delete"
    api.run()
    # by id the deleted stack is still found (and shown DELETE_COMPLETE, no outputs)
    redirect = api.client.simulate_get(api.url(f"/stacks/{stack_id}"))
    assert redirect.status_code == 302
    shown = show(api, "web", stack_id)
    assert shown["stack_status"] == "DELETE_COMPLETE" and shown["deletion_time"]
    assert "outputs" not in shown
    assert api.client.simulate_get(f"{url}/template").status_code == 200
    assert api.client.simulate_get(f"{url}/files").json == {"notes.txt": "hello"}
    assert error(api.client.simulate_delete(url))[:2] == (404, "EntityNotFound")
    assert api.client.simulate_get(api.url("/stacks/web")).status_code == 404


def test_export_and_abandon(api, stack_id):
    url = api.url(f"/stacks/web/{stack_id}")
    exported = api.client.simulate_get(f"{url}/export").json
    assert api.deps.policy.rules[-1] == "stacks:export"
    assert (exported["name"], exported["id"], exported["status"]) == ("web", stack_id, "COMPLETE")
    assert set(exported) >= {"template", "environment", "files", "resources", "tags"}
    assert show(api, "web", stack_id)["stack_status"] == "CREATE_COMPLETE"
    abandoned = api.client.simulate_delete(f"{url}/abandon").json
    assert api.deps.policy.rules[-1] == "stacks:abandon"
    assert abandoned["resources"]["v"]["resource_id"] == exported["resources"]["v"]["resource_id"]
    assert api.client.simulate_get(api.url("/stacks")).json["stacks"] == []
    assert api.client.simulate_get(f"{url}/abandon").status_code == 405


def test_another_projects_stack_is_not_found(api, stack_id):
    api.as_user(project_id=OTHER_PROJECT)
    found = api.client.simulate_get(f"/v1/{OTHER_PROJECT}/stacks/web/{stack_id}")
    assert error(found) == (404, "EntityNotFound", "The Stack (web) could not be found.")
    for sub in ("template", "environment", "outputs", "export"):
        found = api.client.simulate_get(f"/v1/{OTHER_PROJECT}/stacks/web/{stack_id}/{sub}")
        assert found.status_code == 404, sub
    # a bad body does not tell that the stack exists either
    url = f"/v1/{OTHER_PROJECT}/stacks/web/{stack_id}"
    for method, path, body in (
        ("PUT", "", {}),
        ("PATCH", "", {"tags": 5}),
        ("DELETE", "", None),
        ("PUT", "/preview", {}),
        ("PATCH", "/preview", {"timeout_mins": "x"}),
    ):
        found = api.client.simulate_request(method, url + path, json=body)
        assert error(found) == (404, "EntityNotFound", "The Stack (web) could not be found.")
    api.as_user(project_id=PROJECT, roles=["admin"])  # an admin sees any stack by id
    assert show(api, "web", stack_id)["stack_name"] == "web"


def test_the_name_must_match_the_id(api, stack_id):
    found = api.client.simulate_get(api.url(f"/stacks/other/{stack_id}"))
    assert error(found) == (404, "EntityNotFound", "The Stack (other) could not be found.")
    found = api.client.simulate_get(api.url("/stacks/web/not-an-id"))
    assert error(found)[:2] == (404, "EntityNotFound")
    found = api.client.simulate_post(api.url(f"/stacks/web/{stack_id}"), json={})
    assert found.status_code == 405
