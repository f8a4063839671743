"""OS::Heat::TestResource: waits on the virtual clock, failures, replacement, polling traffic."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, Row, custom, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.plugin import ResourceFailure, UpdateReplace
from kiln.plugin.names import physical_resource_name

# Imported as a module: pytest would try to collect a class named TestResource.
from kiln.resources.heat import test_resource as tr
from kiln.schema.custom import CustomConstraints
from kiln.testing.plugin_context import START, PollLimitExceeded, decide, fake_resource, run_action

TR = tr.TestResource
WAIT: Row = ("number", False, NO_DEFAULT, True, [])


def test_schema_matches_the_reference() -> None:
    assert table(TR.properties_schema) == {
        "constraint_prop_secs": ("number", False, 0, True, [custom("test_constr")]),
        "attr_wait_secs": ("number", False, 0, True, []),
        "value": ("string", False, "test_string", True, []),
        "update_replace_value": ("string", False, NO_DEFAULT, False, []),
        "fail": ("boolean", False, False, True, []),
        "update_replace": ("boolean", False, False, True, []),
        "wait_secs": ("number", False, 0, True, []),
        "action_wait_secs": ("map", False, NO_DEFAULT, True, []),
        "action_wait_secs.create": WAIT,
        "action_wait_secs.update": WAIT,
        "action_wait_secs.delete": WAIT,
        "client_name": ("string", False, "", True, []),
        "entity_name": ("string", False, "", True, []),
    }
    assert list(TR.attributes_schema) == ["output"]
    assert undocumented(TR) == []


def test_test_constr_is_registered_by_the_module_and_never_waits() -> None:
    unregistered = CustomConstraints.builtin()
    with pytest.raises(StackValidationFailed, match="does not validate test_constr"):
        fake_resource(TR, {"constraint_prop_secs": 30}, custom=unregistered)
    registry = CustomConstraints.builtin()
    tr.register_constraints(registry)
    assert registry.is_checked("test_constr")
    _, ctx = fake_resource(TR, {"constraint_prop_secs": 30}, custom=registry)
    assert ctx.properties["constraint_prop_secs"] == 30
    assert ctx.now() == START


def test_create_stores_the_value_and_names_the_resource() -> None:
    res, ctx = fake_resource(TR, name="t", stack_name="s")
    assert run_action(res, "create") == 1
    assert ctx.data == {"value": "test_string"} and ctx.redacted == set()
    assert ctx.physical_id == physical_resource_name("s", "t", ctx.resource_uuid)
    assert res.reference_id() == ctx.physical_id
    assert res.get_attribute("output") == "test_string"


def test_attribute_is_returned_at_once_despite_attr_wait_secs() -> None:
    res, ctx = fake_resource(TR, {"value": "v", "attr_wait_secs": 100})
    run_action(res, "create")
    assert res.get_attribute("output") == "v"
    assert ctx.now() == START


@pytest.mark.parametrize(
    ("properties", "seconds"),
    [
        ({"wait_secs": 5}, 5),
        ({"wait_secs": 0.5}, 1),
        ({"wait_secs": 10, "action_wait_secs": {"create": 2}}, 2),
        ({"wait_secs": 3, "action_wait_secs": {"update": 9}}, 3),
    ],
)
def test_create_waits_on_the_clock(properties: dict[str, Any], seconds: int) -> None:
    res, ctx = fake_resource(TR, properties)
    assert run_action(res, "create") == seconds + 1
    assert ctx.now() == START + timedelta(seconds=seconds)


def test_a_negative_wait_never_ends() -> None:
    res, _ = fake_resource(TR, {"action_wait_secs": {"create": -1}})
    with pytest.raises(PollLimitExceeded):
        run_action(res, "create", max_polls=50)


def test_fail_fails_create_once_the_wait_is_over() -> None:
    res, ctx = fake_resource(TR, {"fail": True, "wait_secs": 3}, name="broken")
    with pytest.raises(ResourceFailure, match="Test Resource failed broken"):
        run_action(res, "create")
    assert ctx.now() == START + timedelta(seconds=3)
    assert ctx.physical_id is None and ctx.data == {}
    assert res.reference_id() == "broken"
    assert res.get_attribute("output") is None


class Entities:
    """A fake client entity recording ``get`` calls; it may fail them."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[Any] = []
        self.error = error

    def get(self, entity_id: Any) -> dict[str, Any]:
        self.calls.append(entity_id)
        if self.error is not None:
            raise self.error
        return {"id": entity_id}


class Client:
    def __init__(self, servers: Entities) -> None:
        self.servers = servers


@pytest.mark.parametrize("error", [None, RuntimeError("boom"), KeyError("gone")])
def test_waiting_polls_the_named_client_and_ignores_its_errors(error: Exception | None) -> None:
    servers = Entities(error)
    props = {"value": "srv-1", "wait_secs": 2, "client_name": "compute", "entity_name": "servers"}
    res, _ = fake_resource(TR, props, clients={"compute": Client(servers)})
    assert run_action(res, "create") == 3
    assert servers.calls == ["srv-1", "srv-1"]


def test_polling_uses_the_physical_id_without_a_value_and_ignores_a_missing_client() -> None:
    servers = Entities()
    props = {"value": "", "wait_secs": 1, "client_name": "compute", "entity_name": "servers"}
    res, ctx = fake_resource(TR, props, clients={"compute": Client(servers)})
    run_action(res, "create")
    assert servers.calls == [ctx.physical_id]
    other, _ = fake_resource(TR, {**props, "client_name": "volume"})
    assert run_action(other, "create") == 2


def test_no_polling_without_both_names() -> None:
    servers = Entities()
    props = {"wait_secs": 2, "client_name": "compute"}
    res, _ = fake_resource(TR, props, clients={"compute": Client(servers)})
    run_action(res, "create")
    assert servers.calls == []


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"value": "new"}, "update"),
        ({"fail": True}, "update"),
        ({"wait_secs": 4, "action_wait_secs": {"update": 1}}, "update"),
        ({"client_name": "compute", "entity_name": "servers"}, "update"),
        ({"update_replace": True}, "update"),
        ({"attr_wait_secs": 1, "constraint_prop_secs": 1}, "update"),
        ({"update_replace_value": "x"}, "replace"),
        ({}, "unchanged"),
    ],
)
def test_decisions(change: dict[str, Any], kind: str) -> None:
    res, _ = fake_resource(TR)
    assert decide(res, change).kind == kind


def created(properties: dict[str, Any] | None = None) -> tuple[tr.TestResource, Any]:
    res, ctx = fake_resource(TR, properties)
    run_action(res, "create")
    return res, ctx


def test_update_of_value_stores_it_and_waits_the_update_wait() -> None:
    res, ctx = created()
    started = ctx.now()
    props = {"value": "v2", "wait_secs": 9, "action_wait_secs": {"update": 2}}
    assert run_action(res, "update", new_properties=props) == 3
    assert ctx.now() - started == timedelta(seconds=2)
    assert res.get_attribute("output") == "v2"
    assert ctx.properties["value"] == "v2"


def test_update_without_a_value_change_completes_at_once() -> None:
    res, ctx = created()
    assert run_action(res, "update", new_properties={"wait_secs": 30}) == 1
    assert ctx.now() == START
    assert ctx.properties["wait_secs"] == 30


def test_value_change_with_update_replace_asks_for_replacement() -> None:
    res, ctx = created()
    with pytest.raises(UpdateReplace):
        run_action(res, "update", new_properties={"value": "v2", "update_replace": True})
    assert ctx.data["value"] == "test_string"
    # update_replace alone, or with the same value, updates in place
    assert run_action(res, "update", new_properties={"update_replace": True}) == 1


def test_update_with_fail_fails_after_the_wait_without_storing() -> None:
    res, ctx = created()
    with pytest.raises(ResourceFailure, match="Test Resource failed resource"):
        run_action(res, "update", new_properties={"value": "v2", "fail": True, "wait_secs": 2})
    assert ctx.now() == START + timedelta(seconds=2)
    assert ctx.data["value"] == "test_string"


def test_delete_waits_the_delete_wait_and_never_fails() -> None:
    res, _ = created({"action_wait_secs": {"delete": 4}})
    assert run_action(res, "delete") == 5
    failing, _ = fake_resource(TR, {"fail": True, "wait_secs": 1})
    assert run_action(failing, "delete") == 2


def test_check_needs_a_physical_id() -> None:
    res, _ = created()
    assert run_action(res, "check") == 1
    failed, _ = fake_resource(TR, {"fail": True}, name="nope")
    with pytest.raises(ResourceFailure):
        run_action(failed, "create")
    with pytest.raises(ResourceFailure, match="nope has no physical resource id"):
        run_action(failed, "check")


def test_cookie_is_json_and_carries_the_deadline() -> None:
    res, ctx = fake_resource(TR, {"wait_secs": 7})
    cookie = res.handle_create()
    assert json.loads(json.dumps(cookie)) == cookie
    assert cookie["until"] == (START + timedelta(seconds=7)).isoformat()
    ctx.advance(6.5)
    assert res.check_create_complete(cookie) is False
    ctx.advance(0.5)
    assert res.check_create_complete(cookie) is True
