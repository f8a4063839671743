"""Transient cloud errors (5xx, timeouts, 429; 409 while deleting) are retried with a
backoff; permanent ones fail the resource with the cloud's message."""

from __future__ import annotations

import pathlib
from collections import Counter
from typing import Any, ClassVar

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.cloud.api.errors import BadRequest, CloudError, Conflict, Unavailable
from kiln.engine.step_endings import TRANSIENT_RETRIES
from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry
from kiln.resources.heat.random_string import RandomString
from kiln.schema.properties import PropertySchema, PropertyType


@resource_type("Test::Flaky")
class Flaky(Resource):
    """Raises the error of its ``fail_with`` property ``times`` times per action."""

    properties_schema = {
        "fail_with": PropertySchema(PropertyType.STRING, "", default="unavailable"),
        "times": PropertySchema(PropertyType.INTEGER, "", default=0),
        "during": PropertySchema(PropertyType.STRING, "", default="create"),
    }
    calls: ClassVar[Counter[tuple[str, str]]] = Counter()
    errors: ClassVar[dict[str, type[CloudError]]] = {
        "unavailable": Unavailable,
        "conflict": Conflict,
        "bad": BadRequest,
    }

    def _maybe_fail(self, action: str) -> None:
        key = (self.ctx.name, action)
        Flaky.calls[key] += 1
        props = self.properties
        if props["during"] == action and Flaky.calls[key] <= props["times"]:
            raise Flaky.errors[props["fail_with"]](f"{action} failed on purpose")

    def handle_create(self) -> Any:
        self._maybe_fail("create")
        self.ctx.set_physical_id(self.ctx.physical_resource_name())
        return None

    def check_create_complete(self, cookie: Any) -> bool:
        self._maybe_fail("poll")
        return True

    def handle_delete(self) -> Any:
        self._maybe_fail("delete")
        return None


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    Flaky.calls.clear()
    return make_harness(tmp_path, registry=PluginRegistry([Flaky, RandomString]))


def template(fail_with: str, times: int, during: str = "create") -> str:
    return f"""
heat_template_version: 2021-04-16
resources:
  flaky:
    type: Test::Flaky
    properties: {{fail_with: {fail_with}, times: {times}, during: {during}}}
"""


def test_a_flaky_create_completes_after_retries(h: Harness) -> None:
    stack_id = h.create(template("unavailable", 3))
    h.run()
    assert _state(h, stack_id) == ("CREATE", "COMPLETE")
    assert Flaky.calls[("flaky", "create")] == 4


def test_a_flaky_poll_is_retried_too(h: Harness) -> None:
    stack_id = h.create(template("unavailable", 2, during="poll"))
    h.run()
    assert _state(h, stack_id) == ("CREATE", "COMPLETE")
    assert Flaky.calls[("flaky", "create")] == 1  # the create itself is not repeated


def test_retries_are_bounded(h: Harness) -> None:
    stack_id = h.create(template("unavailable", 100))
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert Flaky.calls[("flaky", "create")] == TRANSIENT_RETRIES + 1
    assert "create failed on purpose" in stack.status_reason


def test_a_permanent_error_fails_at_once_with_the_cloud_message(h: Harness) -> None:
    stack_id = h.create(template("bad", 1))
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("CREATE", "FAILED")
    assert "BadRequest: resources.flaky: create failed on purpose" in stack.status_reason
    assert Flaky.calls[("flaky", "create")] == 1


def test_a_conflict_fails_a_create_but_a_delete_retries(h: Harness) -> None:
    failed = h.create(template("conflict", 1), name="a")
    h.run()
    assert _state(h, failed) == ("CREATE", "FAILED")
    Flaky.calls.clear()
    stack_id = h.create(template("conflict", 2, during="delete"), name="b")
    h.run()
    h.service.delete_stack(CALLER, stack_id)
    h.run()
    assert Flaky.calls[("flaky", "delete")] == 3


def _state(h: Harness, stack_id: str) -> tuple[str, str]:
    stack = h.service.get_stack(stack_id)
    return stack.action, stack.status
