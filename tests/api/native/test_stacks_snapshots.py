"""Stack snapshots: create, list, show, restore, delete (heat-api.md 2.5, 3.9)."""

from __future__ import annotations

import pytest
from stack_api_support import JSON, VALUE_TEMPLATE, RecordingPolicy, create, error, show

from kiln.api.native.support import ApiSettings
from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)

SNAPSHOT_KEYS = {"id", "name", "action", "status", "status_reason", "data", "creation_time"}


@pytest.fixture
def api(tmp_path):
    return make_api(
        tmp_path, policy=RecordingPolicy(), settings=ApiSettings(max_snapshots_per_stack=1)
    )


def test_snapshot_lifecycle(api):
    stack_id = create(api, "web", VALUE_TEMPLATE, parameters={"secret": "p4ss"})
    base = api.url(f"/stacks/web/{stack_id}/snapshots")
    made = api.client.simulate_post(base, json={"name": "before"})
    assert made.status_code == 200
    snapshot = made.json
    assert set(snapshot) == SNAPSHOT_KEYS  # not wrapped
    assert (snapshot["name"], snapshot["action"], snapshot["status"]) == (
        "before",
        "CREATE",
        "IN_PROGRESS",
    )
    assert (snapshot["status_reason"], snapshot["data"]) == (None, None)
    assert api.deps.policy.rules[-1] == "stacks:snapshot"
    assert show(api, "web", stack_id)["stack_status"] == "SNAPSHOT_IN_PROGRESS"
    busy = api.client.simulate_post(base, json={})
    api.run()
    listed = api.client.simulate_get(base).json["snapshots"]
    assert [(s["id"], s["status"]) for s in listed] == [(snapshot["id"], "COMPLETE")]
    one = api.client.simulate_get(f"{base}/{snapshot['id']}").json["snapshot"]
    assert set(one) == SNAPSHOT_KEYS and one["data"]["template"]["description"]
    assert one["data"]["environment"]["parameters"] == {"secret": "******"}
    assert api.deps.policy.rules[-2:] == ["stacks:list_snapshots", "stacks:show_snapshot"]
    found = api.client.simulate_post(f"{base}/{snapshot['id']}/restore", headers=JSON)
    assert found.status_code == 202 and found.json["code"] == "202 Accepted"
    assert api.deps.policy.rules[-1] == "stacks:restore_snapshot"
    api.run()
    assert show(api, "web", stack_id)["stack_status"] == "RESTORE_COMPLETE"
    # the restore used the stored value, not the masked copy
    assert api.engine.service.get_stack(stack_id).parameters == {"secret": "p4ss"}
    found = api.client.simulate_delete(f"{base}/{snapshot['id']}")
    assert found.status_code == 204
    assert api.deps.policy.rules[-1] == "stacks:delete_snapshot"
    assert api.client.simulate_get(base).json == {"snapshots": []}
    # a second snapshot while the first was being taken: Heat's 409
    assert error(busy)[:2] == (409, "ActionInProgress")


def test_unknown_snapshots_quota_and_deleting_the_stack(api):
    stack_id = create(api, "web", VALUE_TEMPLATE)
    base = api.url(f"/stacks/web/{stack_id}/snapshots")
    for method in ("GET", "DELETE"):
        found = api.client.simulate_request(method, f"{base}/nope")
        assert error(found) == (
            404,
            "SnapshotNotFound",
            "The Snapshot (nope) for Stack (web) could not be found.",
        )
    assert error(api.client.simulate_post(f"{base}/nope/restore"))[:2] == (404, "SnapshotNotFound")
    assert error(api.client.simulate_post(base, json={"name": 5}))[:2] == (400, "HTTPBadRequest")
    assert error(api.client.simulate_post(base))[:2] == (400, "HTTPBadRequest")  # body required
    first = api.client.simulate_post(base, json={}).json
    found = api.client.simulate_delete(f"{base}/{first['id']}")
    assert error(found) == (400, "NotSupported", "Deleting in-progress snapshot is not supported.")
    found = api.client.simulate_post(f"{base}/{first['id']}/restore")
    assert error(found) == (400, "NotSupported", "Restoring incomplete snapshot is not supported.")
    api.run()
    assert error(api.client.simulate_post(base, json={})) == (
        400,
        "RequestLimitExceeded",
        "Request limit exceeded: You have reached the maximum snapshots per stack, 1. "
        "Please delete some snapshots.",
    )
    api.client.simulate_delete(api.url(f"/stacks/web/{stack_id}"))
    api.run()
    assert api.client.simulate_get(base).json == {"snapshots": []}
