"""Resources of a stack over the native API (heat-api.md 2.3, 3.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.api.faults import Forbidden
from kiln.api.native.support import ApiSettings, Policy
from kiln.engine.service import Caller, StackRequest
from kiln.template.loader import load_template
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, ApiHarness, make_api

CALLER = Caller(PROJECT, "user-1")

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  a: {type: OS::Heat::RandomString, properties: {length: 8}}
  b:
    type: OS::Heat::TestResource
    description: the b
    metadata: {role: web, port: 80}
    properties: {value: {get_attr: [a, value]}}
  g:
    type: OS::Heat::ResourceGroup
    properties: {count: 2, resource_def: {type: OS::Heat::None}}
"""

LIST_KEYS = {
    "resource_name",
    "logical_resource_id",
    "physical_resource_id",
    "resource_type",
    "resource_status",
    "resource_status_reason",
    "creation_time",
    "updated_time",
    "required_by",
    "links",
}


class RecordingPolicy(Policy):
    def __init__(self, deny: tuple[str, ...] = ()) -> None:
        self.rules: list[str] = []
        self.deny = set(deny)

    def enforce(self, rule: str, context: Any, target: Any = None) -> None:
        self.rules.append(rule)
        if rule in self.deny:
            raise Forbidden(rule)


@pytest.fixture
def api(tmp_path) -> ApiHarness:
    return make_api(tmp_path)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[ApiHarness, str]:
    """One stack that the read-only tests share (and nothing changes)."""
    api = make_api(tmp_path_factory.mktemp("resources"))
    return api, create(api)


def create(
    api: ApiHarness, text: str = TEMPLATE, name: str = "web", run: bool = True, **kw: Any
) -> str:
    request = StackRequest(name=name, template=load_template(text).data, **kw)
    stack_id = api.engine.service.create_stack(CALLER, request)
    if run:
        api.run()
    return stack_id


def base(api: ApiHarness, stack_id: str, name: str = "web") -> str:
    return api.url(f"/stacks/{name}/{stack_id}/resources")


def href(api: ApiHarness, path: str) -> str:
    return f"http://falconframework.org{api.url(path)}"


def by_name(found: Any) -> dict[str, dict[str, Any]]:
    return {r["resource_name"]: r for r in found.json["resources"]}


def test_list_items_have_every_key_and_links(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    found = api.client.simulate_get(base(api, sid))
    assert found.status_code == 200
    items = by_name(found)
    assert set(items) == {"a", "b", "g"}
    assert all(set(r) == LIST_KEYS for r in items.values())
    a = items["a"]
    assert a["logical_resource_id"] == "a"
    assert a["resource_type"] == "OS::Heat::RandomString"
    assert a["resource_status"] == "CREATE_COMPLETE"
    assert a["resource_status_reason"] == "state changed"
    assert a["physical_resource_id"].startswith("web-a-")
    assert a["required_by"] == ["b"]
    assert a["creation_time"].endswith("Z") and a["updated_time"].endswith("Z")
    assert a["links"] == [
        {"href": href(api, f"/stacks/web/{sid}/resources/a"), "rel": "self"},
        {"href": href(api, f"/stacks/web/{sid}"), "rel": "stack"},
    ]
    rels = [link["rel"] for link in items["g"]["links"]]
    assert rels == ["self", "stack", "nested"]
    child = items["g"]["physical_resource_id"]
    assert items["g"]["links"][2]["href"].endswith(f"/{child}")


def test_resources_not_created_yet_are_init_complete_with_empty_physical_id(
    api: ApiHarness,
) -> None:
    sid = create(api, run=False)
    items = by_name(api.client.simulate_get(base(api, sid)))
    assert items["b"]["resource_status"] == "INIT_COMPLETE"
    assert items["b"]["physical_resource_id"] == ""


def test_with_detail_adds_description_and_attributes(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    items = by_name(api.client.simulate_get(base(api, sid), query_string="with_detail=true"))
    assert set(items["b"]) == LIST_KEYS | {"description", "attributes"}
    assert items["b"]["description"] == "the b"
    assert items["a"]["description"] == ""
    value = items["a"]["attributes"]["value"]
    assert items["b"]["attributes"] == {"output": value, "show": None}
    assert len(value) == 8


def test_filters(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared

    def names(query: str) -> set[str]:
        found = api.client.simulate_get(base(api, sid), query_string=query)
        assert found.status_code == 200, found.json
        return set(by_name(found))

    assert names("name=a&name=g") == {"a", "g"}
    assert names("type=Heat::Test") == {"b"}
    assert names("status=CREATE_COMPLETE") == {"a", "b", "g"}
    assert names("status=COMPLETE&action=CREATE") == {"a", "b", "g"}
    assert names("status=CREATE_FAILED") == set()
    assert names("action=DELETE") == set()
    b = by_name(api.client.simulate_get(base(api, sid)))["b"]
    assert names(f"physical_resource_id={b['physical_resource_id']}") == {"b"}


def test_unknown_query_key_is_a_400(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    found = api.client.simulate_get(base(api, sid), query_string="colour=red&name=a")
    assert found.status_code == 400
    assert found.json["error"]["type"] == "HTTPBadRequest"
    assert found.json["error"]["message"] == "Invalid filter parameters ['colour']"
    bad = api.client.simulate_get(base(api, sid), query_string="nested_depth=x")
    assert bad.json["error"]["message"] == "Only integer is acceptable by 'nested_depth'."
    bad = api.client.simulate_get(base(api, sid), query_string="with_detail=yes")
    assert bad.status_code == 400


def test_nested_depth_lists_nested_resources_with_their_stack(
    shared: tuple[ApiHarness, str],
) -> None:
    api, sid = shared
    top = by_name(api.client.simulate_get(base(api, sid)))
    assert set(top) == {"a", "b", "g"}  # depth 0 by default
    found = api.client.simulate_get(base(api, sid), query_string="nested_depth=1")
    items = found.json["resources"]
    assert [r["resource_name"] for r in items] == ["a", "b", "g", "0", "1"]
    child_id = top["g"]["physical_resource_id"]
    member = items[3]
    assert member["parent_resource"] == "g"
    assert member["resource_type"] == "OS::Heat::None"
    stack_link = member["links"][1]
    assert stack_link["rel"] == "stack" and stack_link["href"].endswith(f"/{child_id}")
    assert stack_link["href"] == top["g"]["links"][2]["href"]
    assert member["links"][0]["href"] == stack_link["href"] + "/resources/0"
    assert "parent_resource" not in items[0]


def test_nested_depth_is_capped(tmp_path) -> None:
    api = make_api(tmp_path, settings=ApiSettings(max_nested_stack_depth=0))
    sid = create(api)
    found = api.client.simulate_get(base(api, sid), query_string="nested_depth=3")
    assert len(found.json["resources"]) == 3


def test_show_has_description_and_attributes(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    found = api.client.simulate_get(base(api, sid) + "/b")
    assert found.status_code == 200
    res = found.json["resource"]
    assert set(res) == LIST_KEYS | {"description", "attributes"}
    assert res["description"] == "the b"
    assert res["resource_status"] == "CREATE_COMPLETE"
    assert set(res["attributes"]) == {"output", "show"}
    extra = api.client.simulate_get(base(api, sid) + "/b", query_string="with_attr=nope")
    assert extra.json["resource"]["attributes"]["nope"] is None


def test_show_attribute_that_is_a_map_is_the_attributes(shared: tuple[ApiHarness, str]) -> None:
    api, _ = shared
    sid = create(
        api,
        """\
heat_template_version: 2018-08-31
resources:
  cfg: {type: OS::Heat::SoftwareConfig, properties: {group: script, config: echo hi}}
""",
        name="cfg",
    )
    found = api.client.simulate_get(
        base(api, sid, name="cfg") + "/cfg", query_string="with_attr=config"
    )
    attributes = found.json["resource"]["attributes"]
    assert attributes["group"] == "script"
    assert attributes["config"] == "echo hi"
    assert attributes["id"] == found.json["resource"]["physical_resource_id"]


def test_show_unknown_resource_and_wrong_stack(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    found = api.client.simulate_get(base(api, sid) + "/nope")
    assert found.status_code == 404
    assert found.json["error"]["type"] == "ResourceNotFound"
    assert found.json["error"]["message"] == "The Resource (nope) could not be found in Stack web."
    wrong = api.client.simulate_get(base(api, sid, name="other") + "/b")
    assert wrong.status_code == 404
    assert wrong.json["error"]["type"] == "EntityNotFound"
    assert wrong.json["error"]["message"] == "The Stack (other) could not be found."
    saved = api.ctx
    api.as_user(project_id=OTHER_PROJECT)
    try:
        assert api.client.simulate_get(base(api, sid)).status_code == 404
    finally:
        api.holder["ctx"] = saved


def test_metadata(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    found = api.client.simulate_get(base(api, sid) + "/b/metadata")
    assert found.status_code == 200
    assert found.json == {"metadata": {"role": "web", "port": 80}}
    assert api.client.simulate_get(base(api, sid) + "/a/metadata").json == {"metadata": {}}
    assert api.client.simulate_get(base(api, sid) + "/x/metadata").status_code == 404


def test_deleted_stack_lists_but_does_not_show(api: ApiHarness) -> None:
    sid = create(api)
    api.engine.service.delete_stack(CALLER, sid)
    api.run()
    assert api.client.simulate_get(base(api, sid)).status_code == 200
    found = api.client.simulate_get(base(api, sid) + "/a")
    assert found.status_code == 404 and found.json["error"]["type"] == "EntityNotFound"


# -- mark unhealthy ------------------------------------------------------------------------------
def test_mark_unhealthy_by_name_then_healthy_again(api: ApiHarness) -> None:
    sid = create(api)
    url = base(api, sid) + "/b"
    found = api.client.simulate_patch(
        url, json={"mark_unhealthy": True, "resource_status_reason": "bad"}
    )
    assert found.status_code == 200
    assert found.text == "null" and found.headers["content-type"] == "application/json"
    res = api.client.simulate_get(url).json["resource"]
    assert (res["resource_status"], res["resource_status_reason"]) == ("CHECK_FAILED", "bad")
    api.client.simulate_patch(url, json={"mark_unhealthy": "False"})
    assert api.client.simulate_get(url).json["resource"]["resource_status"] == "CHECK_COMPLETE"


def test_mark_unhealthy_by_physical_id_with_heats_default_reason(api: ApiHarness) -> None:
    sid = create(api)
    physical = by_name(api.client.simulate_get(base(api, sid)))["a"]["physical_resource_id"]
    found = api.client.simulate_patch(
        base(api, sid) + f"/{physical}", json={"mark_unhealthy": "true"}
    )
    assert found.status_code == 200
    res = api.client.simulate_get(base(api, sid) + "/a").json["resource"]
    assert res["resource_status"] == "CHECK_FAILED"
    assert res["resource_status_reason"] == "state changed by resource_mark_unhealthy api"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"mark_unhealthy": True, "colour": 1},
            "Invalid keys in resource mark unhealthy {'colour'}",
        ),
        (
            {"resource_status_reason": "x"},
            "Missing mandatory (mark_unhealthy) key from mark unhealthy request",
        ),
        (
            {"mark_unhealthy": 1},
            'Unrecognized value "1" for "mark_unhealthy", acceptable values are: true, false.',
        ),
    ],
)
def test_mark_unhealthy_bad_bodies(
    shared: tuple[ApiHarness, str], payload: Any, message: str
) -> None:
    api, sid = shared
    found = api.client.simulate_patch(base(api, sid) + "/b", json=payload)
    assert found.status_code == 400
    assert found.json["error"] == {"type": "HTTPBadRequest", "message": message, "traceback": None}


def test_mark_unhealthy_needs_a_body_and_a_resource(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    assert api.client.simulate_patch(base(api, sid) + "/b").status_code == 400
    found = api.client.simulate_patch(base(api, sid) + "/nope", json={"mark_unhealthy": True})
    assert found.status_code == 404 and found.json["error"]["type"] == "ResourceNotFound"


# -- signals ---------------------------------------------------------------------------------------
def test_signal_clears_a_hook(api: ApiHarness) -> None:
    env = {"resource_registry": {"resources": {"b": {"hooks": "pre-create"}}}}
    sid = create(api, environment=env)
    items = by_name(api.client.simulate_get(base(api, sid)))
    assert items["b"]["resource_status"] == "INIT_COMPLETE"
    found = api.client.simulate_post(
        base(api, sid) + "/b/signal", json={"unset_hook": "pre-create"}
    )
    assert found.status_code == 200 and found.text == "null"
    api.run()
    items = by_name(api.client.simulate_get(base(api, sid)))
    assert items["b"]["resource_status"] == "CREATE_COMPLETE"
    wrong = api.client.simulate_post(base(api, sid) + "/b/signal", json={"unset_hook": "bad"})
    assert wrong.status_code == 400 and wrong.json["error"]["type"] == "InvalidBreakPointHook"


def test_signal_errors(api: ApiHarness) -> None:
    sid = create(api)
    found = api.client.simulate_post(base(api, sid) + "/b/signal")
    assert found.status_code == 400
    assert found.json["error"]["type"] == "ResourceActionNotSupported"
    assert found.json["error"]["message"] == "signal is not supported for resource."
    missing = api.client.simulate_post(base(api, sid) + "/nope/signal", json={"a": 1})
    assert missing.status_code == 404 and missing.json["error"]["type"] == "ResourceNotFound"
    api.engine.service.stack_action(CALLER, sid, "SUSPEND")
    api.run()
    during = api.client.simulate_post(base(api, sid) + "/b/signal", json={})
    assert during.status_code == 400
    assert during.json["error"] == {
        "type": "NotSupported",
        "message": "Signal resource during SUSPEND is not supported.",
        "traceback": None,
    }


# -- policy ---------------------------------------------------------------------------------------
def test_each_route_checks_its_policy_rule(tmp_path) -> None:
    policy = RecordingPolicy()
    api = make_api(tmp_path, policy=policy)
    sid = create(api)
    api.client.simulate_get(base(api, sid))
    api.client.simulate_get(base(api, sid) + "/b")
    api.client.simulate_get(base(api, sid) + "/b/metadata")
    api.client.simulate_post(base(api, sid) + "/b/signal")
    api.client.simulate_patch(base(api, sid) + "/b", json={"mark_unhealthy": False})
    assert policy.rules == [
        "resource:index",
        "resource:show",
        "resource:metadata",
        "resource:signal",
        "resource:mark_unhealthy",
    ]
    policy.deny.add("resource:show")
    denied = api.client.simulate_get(base(api, sid) + "/b")
    assert denied.status_code == 403
    assert denied.json["error"]["message"] == "You are not authorized to use resource:show."
