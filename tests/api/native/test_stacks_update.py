"""Updates (PUT, PATCH) and their previews (heat-api.md 2.1.6, 2.1.7, 3.5)."""

from __future__ import annotations

import pytest
from stack_api_support import (
    JSON,
    NESTED_CHILD,
    NESTED_PARENT,
    VALUE_TEMPLATE,
    RecordingPolicy,
    create,
    error,
    show,
)

from kiln.testing.api_harness import PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

TWO_PARAMS = """\
heat_template_version: 2018-08-31
parameters:
  a: {type: string, default: a0}
  b: {type: string, default: b0}
resources:
  v:
    type: OS::Heat::Value
    properties: {value: {list_join: ["-", [{get_param: a}, {get_param: b}]]}}
outputs:
  v: {value: {get_attr: [v, value]}}
"""


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=RecordingPolicy())


def output(api, name, stack_id):
    found = api.client.simulate_get(api.url(f"/stacks/{name}/{stack_id}/outputs/v"))
    return found.json["output"]["output_value"]


def test_put_replaces_everything_it_is_given(api):
    stack_id = create(api, "web", TWO_PARAMS, parameters={"a": "a1"}, tags="x", timeout_mins=9)
    found = api.client.simulate_put(
        api.url(f"/stacks/web/{stack_id}"),
        json={"template": TWO_PARAMS, "parameters": {"b": "b1"}},
        headers=JSON,
    )
    assert found.status_code == 202
    assert found.json["code"] == "202 Accepted"
    assert api.deps.policy.rules[-1] == "stacks:update"
    api.run()
    shown = show(api, "web", stack_id)
    assert shown["stack_status"] == "UPDATE_COMPLETE"
    assert shown["updated_time"] is not None
    # parameters not given go back to their defaults; tags and timeout are cleared
    assert output(api, "web", stack_id) == "a0-b1"
    assert (shown["tags"], shown["timeout_mins"], shown["disable_rollback"]) == ([], None, True)


def test_patch_keeps_what_it_does_not_name(api):
    stack_id = create(
        api, "web", TWO_PARAMS, parameters={"a": "a1", "b": "b1"}, tags="x", timeout_mins=9
    )
    # what `openstack stack update --existing --parameter b=b2` sends
    body = {"parameters": {"b": "b2"}, "template": None, "files": {}, "environment": {}}
    found = api.client.simulate_patch(api.url(f"/stacks/web/{stack_id}"), json=body)
    assert found.status_code == 202
    assert api.deps.policy.rules[-1] == "stacks:update_patch"
    api.run()
    assert output(api, "web", stack_id) == "a1-b2"
    shown = show(api, "web", stack_id)
    assert (shown["tags"], shown["timeout_mins"]) == (["x"], 9)
    found = api.client.simulate_patch(
        api.url(f"/stacks/web/{stack_id}"), json={"clear_parameters": ["a"], "tags": ["y"]}
    )
    assert found.status_code == 202
    api.run()
    assert output(api, "web", stack_id) == "a0-b2"
    assert show(api, "web", stack_id)["tags"] == ["y"]
    # PUT with existing=true is a PATCH
    found = api.client.simulate_put(
        api.url(f"/stacks/web/{stack_id}"), json={"existing": True, "parameters": {"a": "a3"}}
    )
    assert found.status_code == 202
    api.run()
    assert output(api, "web", stack_id) == "a3-b2"


def test_patch_without_changes_uses_its_own_rule(api):
    stack_id = create(api, "web", TWO_PARAMS)
    for body in ({}, {"existing": True, "template": None, "files": {}, "environment": {}}):
        found = api.client.simulate_patch(api.url(f"/stacks/web/{stack_id}"), json=body)
        assert found.status_code == 202
        assert api.deps.policy.rules[-1] == "stacks:update_no_change"
        api.run()
    api.deps.policy.denied.add("stacks:update_no_change")
    found = api.client.simulate_patch(api.url(f"/stacks/web/{stack_id}"), json={})
    assert error(found)[:2] == (403, "Forbidden")


def test_patch_merges_environment_files_over_the_stored_environment(api):
    stack_id = create(api, "web", TWO_PARAMS, environment={"parameters": {"a": "a1"}})
    body = {
        "environment_files": ["env.yaml"],
        "files": {"env.yaml": "parameter_defaults: {b: b7}\n"},
    }
    assert api.client.simulate_patch(api.url(f"/stacks/web/{stack_id}"), json=body).status_code
    api.run()
    assert output(api, "web", stack_id) == "a1-b7"
    environment = api.client.simulate_get(api.url(f"/stacks/web/{stack_id}/environment")).json
    assert environment["parameters"] == {"a": "a1"}
    assert environment["parameter_defaults"] == {"b": "b7"}


def test_refused_updates(api):
    stack_id = create(api, "web", TWO_PARAMS)
    url = api.url(f"/stacks/web/{stack_id}")
    assert error(api.client.simulate_put(url, json={"parameters": {}})) == (
        400,
        "HTTPBadRequest",
        "No template specified",
    )
    found = api.client.simulate_put(
        api.url(f"/stacks/wrong/{stack_id}"), json={"template": TWO_PARAMS}
    )
    assert error(found) == (404, "EntityNotFound", "The Stack (wrong) could not be found.")
    found = api.client.simulate_put(url, json={"template": TWO_PARAMS, "converge": "maybe"})
    assert error(found)[:2] == (400, "HTTPBadRequest")
    accepted = api.client.simulate_put(url, json={"template": TWO_PARAMS, "converge": True})
    assert accepted.status_code == 202
    api.run()
    api.client.simulate_post(api.url(f"/stacks/web/{stack_id}/actions"), json={"suspend": None})
    api.run()
    assert error(api.client.simulate_put(url, json={"template": TWO_PARAMS})) == (
        400,
        "NotSupported",
        "Updating a stack when it is suspended is not supported.",
    )


def test_preview_update_lists_what_would_change(api):
    stack_id = create(api, "web", VALUE_TEMPLATE)
    url = api.url(f"/stacks/web/{stack_id}/preview")
    same = api.client.simulate_put(url, json={"template": VALUE_TEMPLATE})
    assert same.status_code == 200
    assert api.deps.policy.rules[-1] == "stacks:preview_update"
    changes = same.json["resource_changes"]
    assert set(changes) == {"added", "deleted", "replaced", "updated", "unchanged"}
    (unchanged,) = changes["unchanged"]
    assert unchanged["resource_name"] == "v"
    assert unchanged["resource_identity"] == {
        "tenant": PROJECT,
        "stack_name": "web",
        "stack_id": stack_id,
        "path": "/resources/v",
    }
    changed = api.client.simulate_patch(url, json={"parameters": {"count": 3}}).json
    assert api.deps.policy.rules[-1] == "stacks:preview_update_patch"
    (updated,) = changed["resource_changes"]["updated"]
    assert (updated["resource_action"], updated["resource_status"]) == ("CREATE", "COMPLETE")
    assert updated["physical_resource_id"]
    assert "properties" not in updated
    other = {
        "heat_template_version": "2018-08-31",
        "resources": {"n": {"type": "OS::Heat::None"}},
    }
    moved = api.client.simulate_put(url, json={"template": other}).json["resource_changes"]
    assert [r["resource_name"] for r in moved["added"]] == ["n"]
    assert [r["resource_name"] for r in moved["deleted"]] == ["v"]
    assert show(api, "web", stack_id)["stack_status"] == "CREATE_COMPLETE"  # nothing changed


def test_preview_update_can_show_nested_stacks(api):
    files = {"child.yaml": NESTED_CHILD}
    stack_id = create(api, "web", NESTED_PARENT, files=files)
    url = api.url(f"/stacks/web/{stack_id}/preview")
    body = {"template": NESTED_PARENT, "files": files, "parameters": {"size": 2}}
    flat = api.client.simulate_put(url, json=body).json["resource_changes"]
    assert "inner" not in str(flat)
    nested = api.client.simulate_put(url, json=body, query_string="show_nested=true").json
    inner = [
        r
        for kind in nested["resource_changes"].values()
        for r in kind
        if r["resource_name"] == "inner"
    ]
    assert len(inner) == 1
    assert inner[0]["parent_resource"] == "child"
    assert inner[0]["stack_name"] != "web"
