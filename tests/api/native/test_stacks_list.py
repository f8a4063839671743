"""Listing stacks: filters, tags, sorting, paging, scope (heat-api.md 2.1.3, 2.1.4, 3.1)."""

from __future__ import annotations

import pytest
from stack_api_support import (
    NESTED_CHILD,
    NESTED_PARENT,
    NONE_TEMPLATE,
    RecordingPolicy,
    create,
    error,
)

from kiln.api.native.support import ApiSettings
from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

pytestmark = pytest.mark.timeout(60)

ITEM_KEYS = {
    "id",
    "links",
    "stack_name",
    "description",
    "stack_status",
    "stack_status_reason",
    "creation_time",
    "updated_time",
    "deletion_time",
    "stack_owner",
    "parent",
    "stack_user_project_id",
    "tags",
}


def four_stacks(tmp_path):
    api = make_api(tmp_path, settings=ApiSettings(hidden_stack_tags=("secret",)))
    create(api, "alpha", NONE_TEMPLATE, tags="a,b")
    create(api, "beta", NONE_TEMPLATE, tags="b")
    create(api, "gamma", NONE_TEMPLATE)
    create(api, "delta", NONE_TEMPLATE, tags="secret")
    return api


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """Shared by the tests that only read (and leave the policy as they found it)."""
    return four_stacks(tmp_path_factory.mktemp("stacks"))


@pytest.fixture
def own_api(tmp_path):
    return four_stacks(tmp_path)


def names(api, query=""):
    found = api.client.simulate_get(api.url("/stacks"), query_string=query)
    assert found.status_code == 200, found.json
    return [s["stack_name"] for s in found.json["stacks"]]


def test_items_have_heats_keys(api):
    found = api.client.simulate_get(api.url("/stacks")).json
    assert set(found) == {"stacks"}
    alpha = next(s for s in found["stacks"] if s["stack_name"] == "alpha")
    assert set(alpha) == ITEM_KEYS
    assert alpha["description"] == "" and alpha["tags"] == ["a", "b"]
    assert alpha["stack_status"] == "CREATE_COMPLETE"
    assert alpha["links"][0]["href"].endswith(f"/v1/{PROJECT}/stacks/alpha/{alpha['id']}")
    gamma = next(s for s in found["stacks"] if s["stack_name"] == "gamma")
    assert gamma["tags"] is None  # null in lists when there are none


def test_sorting(api):
    # Heat's default: newest first (ids break ties between equal creation times)
    assert set(names(api)) == {"alpha", "beta", "gamma"}
    assert names(api, "sort_keys=stack_name") == ["alpha", "beta", "gamma"]
    assert names(api, "sort_keys=stack_name&sort_dir=desc") == ["gamma", "beta", "alpha"]
    assert names(api, "sort_keys=colour&sort_keys=stack_name") == ["alpha", "beta", "gamma"]
    found = api.client.simulate_get(api.url("/stacks"), query_string="sort_dir=up")
    assert error(found)[:2] == (400, "HTTPBadRequest")


def test_paging_links_marker_and_count(api):
    query = "sort_keys=stack_name&limit=2&with_count=true"
    found = api.client.simulate_get(api.url("/stacks"), query_string=query).json
    assert [s["stack_name"] for s in found["stacks"]] == ["alpha", "beta"]
    assert found["count"] == 3
    last = found["stacks"][-1]["id"]
    (link,) = found["links"]
    assert link["rel"] == "next"
    assert link["href"] == (
        f"http://falconframework.org/v1/{PROJECT}/stacks?sort_keys=stack_name&limit=2"
        f"&with_count=true&marker={last}"
    )
    second = api.client.simulate_get(link["href"].split("falconframework.org")[1]).json
    assert [s["stack_name"] for s in second["stacks"]] == ["gamma"]
    assert "links" not in second
    assert names(api, "sort_keys=stack_name&marker=no-such-stack") == ["alpha", "beta", "gamma"]
    assert error(api.client.simulate_get(api.url("/stacks"), query_string="limit=x"))[2] == (
        "Only integer is acceptable by 'limit'."
    )


def test_filters_and_status_split(api):
    assert names(api, "name=alpha&name=beta&sort_keys=stack_name") == ["alpha", "beta"]
    assert names(api, "stack_name=gamma") == ["gamma"]
    assert set(names(api, "status=CREATE_COMPLETE")) == {"alpha", "beta", "gamma"}
    assert set(names(api, "status=COMPLETE")) == {"alpha", "beta", "gamma"}
    assert names(api, "status=CREATE_FAILED") == []
    assert names(api, "status=UPDATE_COMPLETE") == []
    assert set(names(api, "disable_rollback=true")) == {"alpha", "beta", "gamma"}
    assert names(api, "timeout_mins=5") == []
    assert names(api, f"tenant={OTHER_PROJECT}") == []
    assert set(names(api, "username=user-1&stack_owner=user-1")) == {"alpha", "beta", "gamma"}


def test_tag_filters_and_hidden_stacks(api):
    assert names(api, "tags=a,b") == ["alpha"]
    assert set(names(api, "tags_any=a,b")) == {"alpha", "beta"}
    assert set(names(api, "not_tags=a,b")) == {"beta", "gamma"}
    assert names(api, "not_tags_any=b") == ["gamma"]
    assert set(names(api, "show_hidden=true")) == {"alpha", "beta", "gamma", "delta"}
    found = api.client.simulate_get(
        api.url("/stacks"), query_string="show_hidden=true&tags_any=secret&with_count=true"
    ).json
    assert [s["stack_name"] for s in found["stacks"]] == ["delta"] and found["count"] == 1


def test_deleted_and_nested_stacks(own_api):
    api = own_api
    parent = create(api, "parent", NESTED_PARENT, files={"child.yaml": NESTED_CHILD})
    assert "parent" in names(api) and len(names(api)) == 4
    found = api.client.simulate_get(api.url("/stacks"), query_string="show_nested=true").json
    children = [s for s in found["stacks"] if s["parent"] == parent]
    assert len(children) == 1
    assert names(api, f"parent={parent}&show_nested=true") == [children[0]["stack_name"]]
    gamma = next(s for s in found["stacks"] if s["stack_name"] == "gamma")
    api.client.simulate_delete(api.url(f"/stacks/gamma/{gamma['id']}"))
    api.run()
    assert "gamma" not in names(api)
    found = api.client.simulate_get(api.url("/stacks"), query_string="show_deleted=true").json
    deleted = next(s for s in found["stacks"] if s["stack_name"] == "gamma")
    assert deleted["stack_status"] == "DELETE_COMPLETE" and deleted["deletion_time"]
    bad = api.client.simulate_get(api.url("/stacks"), query_string="show_deleted=yes")
    assert error(bad) == (
        400,
        "HTTPBadRequest",
        'Unrecognized value "yes" for "show_deleted", acceptable values are: true, false.',
    )


def test_projects_are_separate_and_admins_need_global_index(tmp_path):
    api = make_api(tmp_path, policy=OsloPolicy())
    create(api, "mine", NONE_TEMPLATE)
    api.as_user(project_id=OTHER_PROJECT)
    create(api, "theirs", NONE_TEMPLATE)
    assert names(api) == ["theirs"]
    api.as_user(project_id=PROJECT, roles=["admin", "member", "reader"])
    found = api.client.simulate_get(api.url("/stacks")).json["stacks"]
    assert [(s["stack_name"], s["project"]) for s in found] == [("mine", PROJECT)]
    denied = api.client.simulate_get(api.url("/stacks"), query_string="global_tenant=true")
    assert error(denied) == (
        403,
        "Forbidden",
        "You are not authorized to use stacks:global_index.",
    )


def test_global_tenant_lists_every_project_when_allowed(tmp_path):
    policy = RecordingPolicy()
    api = make_api(tmp_path, policy=policy)
    create(api, "mine", NONE_TEMPLATE)
    api.as_user(project_id=OTHER_PROJECT)
    create(api, "theirs", NONE_TEMPLATE)
    api.as_user(project_id=PROJECT, roles=["admin"])
    policy.rules.clear()
    found = api.client.simulate_get(
        api.url("/stacks"), query_string="global_tenant=true&sort_keys=stack_name"
    ).json["stacks"]
    assert [(s["stack_name"], s["project"]) for s in found] == [
        ("mine", PROJECT),
        ("theirs", OTHER_PROJECT),
    ]
    assert policy.rules == ["stacks:index", "stacks:global_index"]
    both = api.client.simulate_get(
        api.url("/stacks"), query_string=f"global_tenant=true&tenant={OTHER_PROJECT}"
    ).json["stacks"]
    assert [s["stack_name"] for s in both] == ["theirs"]


def test_detail_lists_every_visible_stack(own_api):
    api = own_api
    api.deps.policy = RecordingPolicy()
    found = api.client.simulate_get(api.url("/stacks/detail"), query_string="name=alpha")
    assert found.status_code == 200
    assert {s["stack_name"] for s in found.json["stacks"]} == {"alpha", "beta", "gamma"}
    assert all(set(s) == ITEM_KEYS for s in found.json["stacks"])
    assert api.deps.policy.rules == ["stacks:detail"]


def test_detail_and_preview_are_stack_names_for_other_methods(api):
    found = api.client.simulate_post(api.url("/stacks/detail"), json={})
    assert error(found) == (404, "EntityNotFound", "The Stack (detail) could not be found.")
    found = api.client.simulate_get(api.url("/stacks/preview"))
    assert error(found) == (404, "EntityNotFound", "The Stack (preview) could not be found.")
