"""Signals reach the resource's plugin; what it records persists, with a SIGNAL event."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.core.errors import KilnError
from kiln.engine.signals import describe
from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry
from kiln.schema.properties import AttributeSchema


@resource_type("Test::Counter")
class Counter(Resource):
    """Counts the signals it got; refuses a signal that says ``fail``."""

    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "count": AttributeSchema("How many signals arrived."),
    }

    def handle_signal(self, details: Mapping[str, Any] | None) -> None:
        if isinstance(details, Mapping) and details.get("fail"):
            raise ValueError("told to fail")
        self.ctx.data_set("count", int(self.ctx.data_get("count", 0)) + 1)

    def get_attribute(self, name: str) -> Any:
        return int(self.ctx.data_get("count", 0))


TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  counter:
    type: Test::Counter
  plain:
    type: OS::Heat::None
outputs:
  count:
    value: {get_attr: [counter, count]}
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    registry = PluginRegistry.discover()
    registry.register(Counter)
    return make_harness(tmp_path, registry=registry)


def _signal_events(h: Harness, sid: str) -> list[tuple[str, str]]:
    return [(e.status, e.status_reason) for e in h.service.events(sid) if e.action == "SIGNAL"]


def test_signals_reach_the_plugin_and_persist(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    h.service.signal(CALLER, sid, "counter", {"a": 1})
    h.service.signal(CALLER, sid, "counter", None)
    assert h.outputs(sid) == {"count": 2}
    assert _signal_events(h, sid) == [
        ("COMPLETE", 'Signal: {"a": 1}'),
        ("COMPLETE", "No signal details provided"),
    ]


def test_a_failing_handler_is_reported_and_recorded(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    with pytest.raises(KilnError) as failed:
        h.service.signal(CALLER, sid, "counter", {"fail": True})
    assert failed.value.http_status == 400
    assert "told to fail" in failed.value.message
    assert h.outputs(sid) == {"count": 0}
    assert _signal_events(h, sid)[0][0] == "FAILED"


def test_types_without_signals_and_missing_resources(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    with pytest.raises(KilnError) as plain:
        h.service.signal(CALLER, sid, "plain", {})
    assert plain.value.kind == "ResourceActionNotSupported"
    with pytest.raises(KilnError) as missing:
        h.service.signal(CALLER, sid, "nope", {})
    assert missing.value.http_status == 404


def test_describe_alarm_signals() -> None:
    alarm = {"previous": "ok", "current": "alarm", "reason": "cpu high"}
    assert describe(alarm) == "alarm state changed from ok to alarm (cpu high)"
    assert describe("hello") == "hello"
    assert describe({"x": "y" * 500}).endswith("...")
