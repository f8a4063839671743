"""FakeContext and run_action: the in-memory world plugin tests run in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed, ValidationFailed
from kiln.plugin import Resource, resource_type
from kiln.plugin.names import physical_resource_name
from kiln.plugin.resource import Cookie
from kiln.schema.properties import PropertySchema
from kiln.testing.plugin_context import (
    START,
    FakeContext,
    PollLimitExceeded,
    decide,
    fake_resource,
    run_action,
)


@resource_type("Test::Counter")
class Counter(Resource):
    """Completes after ``polls`` polls of any action; records what it saw."""

    properties_schema = {
        "polls": PropertySchema("Integer", default=1, update_allowed=True),
        "label": PropertySchema("String"),
    }
    physical_name_limit = 20

    def handle_create(self) -> Cookie:
        return {"left": self.properties["polls"]}

    def check_create_complete(self, cookie: Cookie) -> bool:
        cookie["left"] -= 1
        return bool(cookie["left"] <= 0)

    def handle_update(self, new_properties: Any, changed: Any) -> Cookie:
        self.ctx.data_set("seen", {"old": dict(self.properties), "changed": dict(changed)})
        return {"left": new_properties["polls"]}

    def check_update_complete(self, cookie: Cookie) -> bool:
        return self.check_create_complete(cookie)


def test_for_plugin_types_properties_and_applies_defaults() -> None:
    ctx = FakeContext.for_plugin(Counter, {"polls": "3"})
    assert ctx.properties == {"polls": 3, "label": None}
    assert ctx.type_name == "Test::Counter" and ctx.action == "CREATE"


def test_for_plugin_raises_schema_errors() -> None:
    with pytest.raises(StackValidationFailed, match="Unknown Property bogus"):
        FakeContext.for_plugin(Counter, {"bogus": 1})
    with pytest.raises(ValidationFailed):
        FakeContext.for_plugin(Counter, {"polls": "x", "bogus": 1})


def test_identity_and_physical_name() -> None:
    ctx = FakeContext.for_plugin(Counter, name="web", stack_name="prod")
    assert ctx.physical_resource_name() == physical_resource_name(
        "prod", "web", ctx.resource_uuid, 20
    )
    assert ctx.resource_uuid == FakeContext(name="web", stack_name="prod").resource_uuid
    assert ctx.stack_id != FakeContext(stack_name="other").stack_id
    ctx.set_physical_id("abc")
    assert ctx.physical_id == "abc"


def test_data_store_keeps_redact_flags() -> None:
    ctx = FakeContext()
    ctx.data_set("secret", "s", redact=True)
    ctx.data_set("plain", 1)
    assert (ctx.data_get("secret"), ctx.data_get("missing", "d")) == ("s", "d")
    assert ctx.redacted == {"secret"}
    ctx.data_set("secret", "t")
    assert ctx.redacted == set()
    ctx.data_set("secret", "u", redact=True)
    ctx.data_delete("secret")
    ctx.data_delete("never-set")
    assert ctx.data == {"plain": 1} and ctx.redacted == set()


def test_clock_randomness_and_clients() -> None:
    ctx = FakeContext(seed=5, clients={"compute": "nova"})
    assert ctx.now() == START
    ctx.advance(90)
    assert ctx.now() == START + timedelta(minutes=1, seconds=30)
    assert ctx.random.random() == FakeContext(seed=5).random.random()
    assert ctx.client("compute") == "nova"
    with pytest.raises(LookupError, match="no fake client for service 'network'"):
        ctx.client("network")


@pytest.mark.parametrize("polls", [1, 4])
def test_run_action_counts_polls_and_advances_the_clock(polls: int) -> None:
    res, ctx = fake_resource(Counter, {"polls": polls})
    assert run_action(res, "CREATE") == polls
    assert ctx.now() == START + timedelta(seconds=polls - 1)


def test_run_action_gives_up_after_max_polls() -> None:
    res, ctx = fake_resource(Counter, {"polls": 10})
    with pytest.raises(PollLimitExceeded, match="CREATE still in progress after 3 polls"):
        run_action(res, "create", max_polls=3)
    assert ctx.now() == START + timedelta(seconds=2)


def test_update_sees_old_properties_and_installs_new_ones_when_done() -> None:
    res, ctx = fake_resource(Counter, {"polls": 1, "label": "a"}, metadata={"m": 0})
    assert run_action(res, "update", new_properties={"polls": 2}, new_metadata={"m": 1}) == 2
    assert ctx.data["seen"] == {
        "old": {"polls": 1, "label": "a"},
        "changed": {"polls": 2, "label": None},
    }
    assert ctx.properties == {"polls": 2, "label": None} and ctx.metadata == {"m": 1}
    assert ctx.action == "UPDATE"


def test_actions_without_hooks_are_no_ops_and_unknown_ones_rejected() -> None:
    res, _ = fake_resource(Counter)
    assert run_action(res, "suspend") == 1
    for action in ("explode", "signal"):
        with pytest.raises(ValueError, match="no action"):
            run_action(res, action)


def test_run_action_needs_a_fake_context() -> None:
    class Elsewhere:
        pass

    res = Counter(FakeContext())
    res.ctx = Elsewhere()  # type: ignore[assignment]
    with pytest.raises(TypeError):
        run_action(res, "create")


@pytest.mark.parametrize(
    ("new", "status", "kind"),
    [
        ({"polls": 2}, "COMPLETE", "update"),
        ({"label": "x"}, "COMPLETE", "replace"),
        ({}, "COMPLETE", "unchanged"),
        ({}, "FAILED", "replace"),
    ],
)
def test_decide_uses_the_plugins_schema(new: dict[str, Any], status: str, kind: str) -> None:
    res, _ = fake_resource(Counter)
    assert decide(res, new, stored_status=status).kind == kind
