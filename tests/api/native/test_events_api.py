"""Events over the native API (heat-api.md 2.4, 3.6), as `stack create --wait` polls them."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.engine.service import Caller, StackRequest
from kiln.template.loader import load_template
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, ApiHarness, make_api

CALLER = Caller(PROJECT, "user-1")

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  a: {type: OS::Heat::RandomString, properties: {length: 8}}
  b: {type: OS::Heat::TestResource, properties: {value: {get_attr: [a, value]}}}
"""

GROUP = """\
heat_template_version: 2018-08-31
resources:
  g:
    type: OS::Heat::ResourceGroup
    properties: {count: 2, resource_def: {type: OS::Heat::None}}
"""

LIST_KEYS = {
    "id",
    "event_time",
    "resource_name",
    "logical_resource_id",
    "physical_resource_id",
    "resource_status",
    "resource_status_reason",
    "links",
}


@pytest.fixture
def api(tmp_path) -> ApiHarness:
    return make_api(tmp_path)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[ApiHarness, str]:
    """One stack that the read-only tests share (and nothing changes)."""
    api = make_api(tmp_path_factory.mktemp("events"))
    return api, create(api)


def create(api: ApiHarness, text: str = TEMPLATE, name: str = "web") -> str:
    request = StackRequest(name=name, template=load_template(text).data)
    stack_id = api.engine.service.create_stack(CALLER, request)
    api.run()
    return stack_id


def events(api: ApiHarness, sid: str, query: str = "", name: str = "web") -> list[dict[str, Any]]:
    found = api.client.simulate_get(api.url(f"/stacks/{name}/{sid}/events"), query_string=query)
    assert found.status_code == 200, found.json
    return list(found.json["events"])


def states(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["resource_name"], e["resource_status"]) for e in items]


def test_list_items_and_the_stacks_own_events(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    items = events(api, sid, "sort_dir=asc")
    assert all(set(e) == LIST_KEYS for e in items)
    assert states(items)[0] == ("web", "CREATE_IN_PROGRESS")
    assert states(items)[-1] == ("web", "CREATE_COMPLETE")
    assert ("b", "CREATE_COMPLETE") in states(items)
    last = items[-1]
    assert last["physical_resource_id"] == sid
    assert last["logical_resource_id"] == "web"
    assert last["resource_status_reason"] == "Stack CREATE completed successfully"
    assert last["event_time"].endswith("Z")
    stack = f"http://falconframework.org{api.url(f'/stacks/web/{sid}')}"
    assert last["links"] == [
        {"href": f"{stack}/resources/web/events/{last['id']}", "rel": "self"},
        {"href": f"{stack}/resources/web", "rel": "resource"},
        {"href": stack, "rel": "stack"},
    ]


def test_default_order_is_newest_first(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    oldest_first = [e["id"] for e in events(api, sid, "sort_dir=asc")]
    assert [e["id"] for e in events(api, sid)] == oldest_first[::-1]
    assert [e["id"] for e in events(api, sid, "sort_keys=event_time")] == oldest_first
    assert [e["id"] for e in events(api, sid, "sort_keys=colour")] == oldest_first[::-1]


def test_marker_paging_both_ways_and_unknown_markers(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    ids = [e["id"] for e in events(api, sid, "sort_dir=asc")]
    seen: list[str] = []
    marker = ""
    while True:
        page = events(api, sid, f"sort_dir=asc&limit=2&marker={marker}")
        if not page:
            break
        seen += [e["id"] for e in page]
        marker = page[-1]["id"]
    assert seen == ids
    back = events(api, sid, f"sort_dir=desc&marker={ids[3]}&limit=2")
    assert [e["id"] for e in back] == [ids[2], ids[1]]
    assert [e["id"] for e in events(api, sid, "sort_dir=asc&marker=nope")] == ids


def test_wait_style_polling_sees_only_new_events(api: ApiHarness) -> None:
    """What `openstack stack update --wait` does: newest id first, then poll after it."""
    sid = create(api)
    newest = events(api, sid, "limit=1&sort_dir=desc")
    assert len(newest) == 1
    template = load_template(TEMPLATE.replace("length: 8", "length: 9")).data
    api.engine.service.update_stack(CALLER, sid, StackRequest(name="web", template=template))
    api.run()
    polled = events(api, sid, f"sort_dir=asc&marker={newest[0]['id']}")
    assert states(polled)[0] == ("web", "UPDATE_IN_PROGRESS")
    assert states(polled)[-1] == ("web", "UPDATE_COMPLETE")
    assert events(api, sid, f"sort_dir=asc&marker={polled[-1]['id']}") == []


def test_filters_are_repeatable_and_exact(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    done = events(api, sid, "resource_status=COMPLETE&sort_dir=asc")
    assert states(done) == [
        ("a", "CREATE_COMPLETE"),
        ("b", "CREATE_COMPLETE"),
        ("web", "CREATE_COMPLETE"),
    ]
    both = events(api, sid, "resource_name=a&resource_name=b")
    assert {e["resource_name"] for e in both} == {"a", "b"}
    typed = events(api, sid, "resource_type=OS::Heat::Stack&resource_action=CREATE")
    assert {e["resource_name"] for e in typed} == {"web"}
    assert events(api, sid, "resource_status=CREATE_COMPLETE") == []
    assert len(events(api, sid, "limit=2")) == 2


def test_sort_by_resource_type(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    items = events(api, sid, "sort_keys=resource_type&sort_dir=asc")
    names = [e["resource_name"] for e in items]
    assert names == sorted(names, key=lambda n: {"a": 0, "b": 2, "web": 1}[n])
    half = events(api, sid, f"sort_keys=resource_type&sort_dir=asc&marker={items[2]['id']}")
    assert [e["id"] for e in half] == [e["id"] for e in items[3:]]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=x", "Only integer is acceptable by 'limit'."),
        ("limit=-1", "Value '-1' is invalid for 'limit' which only accepts non-negative integer."),
        ("nested_depth=a", "Only integer is acceptable by 'nested_depth'."),
        ("sort_dir=up", "Unknown sort direction, must be one of: asc, desc"),
    ],
)
def test_bad_query_values_are_400s(
    shared: tuple[ApiHarness, str], query: str, message: str
) -> None:
    api, sid = shared
    found = api.client.simulate_get(api.url(f"/stacks/web/{sid}/events"), query_string=query)
    assert found.status_code == 400
    assert found.json["error"]["message"] == message


def test_nested_depth_adds_nested_events_with_a_root_stack_link(api: ApiHarness) -> None:
    sid = create(api, GROUP)
    top = events(api, sid, "sort_dir=asc")
    assert {e["resource_name"] for e in top} == {"web", "g"}
    assert all(len(e["links"]) == 3 for e in top)
    nested = events(api, sid, "sort_dir=asc&nested_depth=1")
    assert {"0", "1"} <= {e["resource_name"] for e in nested}
    assert all(e["links"][3]["rel"] == "root_stack" for e in nested)
    assert all(e["links"][3]["href"].endswith(f"/stacks/web/{sid}") for e in nested)
    member = next(e for e in nested if e["resource_name"] == "0")
    child_id = member["links"][2]["href"].rsplit("/", 1)[1]
    assert child_id != sid
    assert member["links"][0]["href"].endswith(f"/{child_id}/resources/0/events/{member['id']}")
    top_ids = [e["id"] for e in top]
    assert [e["id"] for e in nested if e["id"] in top_ids] == top_ids


def test_resource_events_and_404_when_none(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    url = api.url(f"/stacks/web/{sid}/resources/b/events")
    found = api.client.simulate_get(url, query_string="sort_dir=asc")
    assert found.status_code == 200
    assert states(found.json["events"]) == [("b", "CREATE_IN_PROGRESS"), ("b", "CREATE_COMPLETE")]
    filtered = api.client.simulate_get(url, query_string="resource_name=a")
    assert len(filtered.json["events"]) == 2  # the path's resource wins
    none = api.client.simulate_get(api.url(f"/stacks/web/{sid}/resources/zz/events"))
    assert none.status_code == 404
    assert none.json["error"] == {
        "type": "HTTPNotFound",
        "message": "No events found for resource zz",
        "traceback": None,
    }
    stack_level = api.client.simulate_get(api.url(f"/stacks/web/{sid}/resources/web/events"))
    assert {e["physical_resource_id"] for e in stack_level.json["events"]} == {sid}


def test_show_event(shared: tuple[ApiHarness, str]) -> None:
    api, sid = shared
    item = events(api, sid, "resource_name=b&resource_status=COMPLETE")[0]
    found = api.client.simulate_get(api.url(f"/stacks/web/{sid}/resources/b/events/{item['id']}"))
    assert found.status_code == 200
    event = found.json["event"]
    assert set(event) == LIST_KEYS | {"resource_type", "resource_properties"}
    assert event["resource_type"] == "OS::Heat::TestResource"
    assert event["links"] == item["links"]
    wrong = api.client.simulate_get(api.url(f"/stacks/web/{sid}/resources/a/events/{item['id']}"))
    assert wrong.status_code == 404
    assert wrong.json["error"]["message"] == f"No event {item['id']} found"
    stack_event = events(api, sid, "limit=1")[0]
    shown = api.client.simulate_get(stack_event["links"][0]["href"].split("falconframework.org")[1])
    assert shown.json["event"]["resource_type"] == "OS::Heat::Stack"


def test_scope_deleted_stacks_and_policy_rules(api: ApiHarness) -> None:
    sid = create(api)
    wrong = api.client.simulate_get(api.url(f"/stacks/other/{sid}/events"))
    assert wrong.status_code == 404 and wrong.json["error"]["type"] == "EntityNotFound"
    api.engine.service.delete_stack(CALLER, sid)
    api.run()
    assert states(events(api, sid, "limit=1")) == [("web", "DELETE_COMPLETE")]
    api.as_user(project_id=OTHER_PROJECT)
    assert api.client.simulate_get(api.url(f"/stacks/web/{sid}/events")).status_code == 404
