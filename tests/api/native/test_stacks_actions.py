"""Stack actions: suspend, resume, check, cancel (heat-api.md 2.2, A1)."""

from __future__ import annotations

import pytest
from stack_api_support import NONE_TEMPLATE, VALUE_TEMPLATE, RecordingPolicy, create, error, show

from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=RecordingPolicy())


@pytest.fixture(scope="module")
def one_stack(tmp_path_factory):
    api = make_api(tmp_path_factory.mktemp("actions"))
    return api, create(api, "web", NONE_TEMPLATE)


def act(api, stack_id, body, name="web"):
    return api.client.simulate_post(api.url(f"/stacks/{name}/{stack_id}/actions"), json=body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (None, "No action specified"),
        ({}, "No action specified"),
        ({"suspend": None, "resume": None}, "Multiple actions specified"),
        ({"explode": None}, "Invalid action explode specified"),
    ],
)
def test_bodies_name_exactly_one_known_action(one_stack, body, message):
    api, stack_id = one_stack
    assert error(act(api, stack_id, body)) == (400, "HTTPBadRequest", message)


def test_suspend_resume_check(api):
    stack_id = create(api, "web", VALUE_TEMPLATE)
    for action, value in (("suspend", None), ("resume", ""), ("check", None)):
        found = act(api, stack_id, {action: value})
        assert found.status_code == 200
        assert found.text == "null" and found.headers["content-type"] == "application/json"
        assert api.deps.policy.rules[-1] == f"actions:{action}"
        api.run()
        assert show(api, "web", stack_id)["stack_status"] == f"{action.upper()}_COMPLETE"
    # the lookup URL redirects POSTs to the canonical one
    found = api.client.simulate_post(api.url("/stacks/web/actions"), json={"check": None})
    assert found.status_code == 302
    assert found.headers["Location"].endswith(f"/stacks/web/{stack_id}/actions")


def test_cancel_needs_an_action_in_progress(api):
    stack_id = create(api, "web", NONE_TEMPLATE)
    found = act(api, stack_id, {"cancel_update": None})
    assert error(found) == (
        400,
        "NotSupported",
        "Cancelling update when stack is CREATE_COMPLETE is not supported.",
    )
    assert api.deps.policy.rules[-1] == "actions:cancel_update"
    # a create in progress may be stopped without rollback, not "cancel_update"d
    body = {"stack_name": "slow", "template": VALUE_TEMPLATE}
    slow = api.client.simulate_post(api.url("/stacks"), json=body).json["stack"]["id"]
    assert error(act(api, slow, {"cancel_update": None}, "slow"))[2] == (
        "Cancelling update when stack is CREATE_IN_PROGRESS is not supported."
    )
    found = act(api, slow, {"cancel_without_rollback": None}, "slow")
    assert found.status_code == 200
    assert api.deps.policy.rules[-1] == "actions:cancel_without_rollback"
    api.run()
    assert show(api, "slow", slow)["stack_status"] == "CREATE_FAILED"


def test_actions_on_an_unknown_stack(api):
    stack_id = create(api, "web", NONE_TEMPLATE)
    found = act(api, stack_id, {"check": None}, name="nope")
    assert error(found) == (404, "EntityNotFound", "The Stack (nope) could not be found.")
