"""Alarm action items naming a resource of the stack stand for its AlarmUrl
(kiln.template.named_resources): they become get_attr references, with the dependency."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.cli.global_environment import packaged_global_environment
from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.template.functions.base import Function
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition

# A resource with an AlarmUrl attribute: a template resource with an AlarmUrl output.
SIGNAL = """
heat_template_version: 2021-04-16
resources: {}
outputs:
  AlarmUrl: {value: "http://example.org/signal"}
"""
FILES = {"signal.yaml": SIGNAL}
ALARM = "{meter_name: cpu_util, threshold: 50, %s}"


@pytest.fixture(scope="module")
def types() -> PluginRegistry:
    return PluginRegistry.discover(global_environment=packaged_global_environment())


def build(types: PluginRegistry, text: str, **kw: Any) -> StackDefinition:
    custom = types.custom_constraints(CustomConstraints.offline())
    stack = build_stack(text, types=types, custom=custom, files=FILES, **kw)
    assert stack.errors == [], stack.errors
    return stack


def written(value: Any) -> Any:
    """A parsed value with functions shown as written ({name: args})."""
    if isinstance(value, Function):
        return {value.fn_name: written(value.args)}
    if isinstance(value, list):
        return [written(v) for v in value]
    if isinstance(value, dict):
        return {k: written(v) for k, v in value.items()}
    return value


def hot(alarm_type: str, actions: str, extra: str = "") -> str:
    return f"""
heat_template_version: 2021-04-16
parameters:
  policy_name: {{type: string, default: up}}
  names: {{type: comma_delimited_list, default: "up,http://example.org/x"}}
conditions:
  never: {{equals: [1, 2]}}
resources:
  up: {{type: signal.yaml}}
  down: {{type: signal.yaml, condition: never}}
  alarm:
    type: {alarm_type}
    properties: {ALARM % actions}
{extra}"""


@pytest.mark.parametrize("alarm_type", ["OS::Aodh::Alarm", "OS::Ceilometer::Alarm"])
def test_a_resource_name_becomes_its_alarm_url(types: PluginRegistry, alarm_type: str) -> None:
    stack = build(
        types,
        hot(
            alarm_type,
            "alarm_actions: [up, 'http://example.org/direct'], ok_actions: [up], "
            "insufficient_data_actions: []",
        ),
    )
    props = written(stack.resources["alarm"].properties)
    assert props["alarm_actions"] == [
        {"get_attr": ["up", "AlarmUrl"]},
        "http://example.org/direct",
    ]
    assert props["ok_actions"] == [{"get_attr": ["up", "AlarmUrl"]}]
    assert props["insufficient_data_actions"] == []
    assert stack.resources["alarm"].requires == {"up"}  # it waits for the named resource


def test_names_computed_from_parameters_count(types: PluginRegistry) -> None:
    stack = build(
        types,
        hot(
            "OS::Aodh::Alarm",
            "alarm_actions: [{get_param: policy_name}], ok_actions: {get_param: names}",
        ),
    )
    props = written(stack.resources["alarm"].properties)
    assert props["alarm_actions"] == [{"get_attr": ["up", "AlarmUrl"]}]
    assert props["ok_actions"] == [{"get_attr": ["up", "AlarmUrl"]}, "http://example.org/x"]
    assert stack.resources["alarm"].requires == {"up"}


def test_what_names_no_enabled_resource_is_left_as_written(types: PluginRegistry) -> None:
    stack = build(
        types,
        hot(
            "OS::Aodh::Alarm",
            "alarm_actions: [down, nothing, {get_param: names}], ok_actions: {get_param: names}",
        ).replace('default: "up,', 'default: "elsewhere,'),
    )
    props = written(stack.resources["alarm"].properties)
    assert props["alarm_actions"] == ["down", "nothing", {"get_param": "names"}]
    assert props["ok_actions"] == {"get_param": "names"}
    assert stack.resources["alarm"].requires == frozenset()


def test_a_value_known_only_from_a_resource_is_left_as_written(types: PluginRegistry) -> None:
    stack = build(types, hot("OS::Aodh::Alarm", "alarm_actions: [{get_attr: [up, AlarmUrl]}]"))
    props = written(stack.resources["alarm"].properties)
    assert props["alarm_actions"] == [{"get_attr": ["up", "AlarmUrl"]}]


def test_other_types_keep_their_values(types: PluginRegistry) -> None:
    stack = build(
        types,
        hot(
            "OS::Aodh::Alarm",
            "alarm_actions: []",
            "  value: {type: OS::Heat::Value, properties: {value: [up]}}\n",
        ),
    )
    assert written(stack.resources["value"].properties) == {"value": ["up"]}
    assert stack.resources["value"].requires == frozenset()


def test_cfn_templates_get_fn_getatt(types: PluginRegistry) -> None:
    stack = build(
        types,
        """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  Up: {Type: signal.yaml}
  Alarm:
    Type: OS::Aodh::Alarm
    Properties: {meter_name: cpu_util, threshold: 50, alarm_actions: [Up]}
""",
    )
    props = written(stack.resources["Alarm"].properties)
    assert props["alarm_actions"] == [{"Fn::GetAtt": ["Up", "AlarmUrl"]}]
    assert stack.resources["Alarm"].requires == {"Up"}


def test_a_name_that_closes_a_loop_is_a_circular_dependency(types: PluginRegistry) -> None:
    custom = types.custom_constraints(CustomConstraints.offline())
    stack = build_stack(
        """
heat_template_version: 2021-04-16
resources:
  alarm:
    type: OS::Aodh::Alarm
    properties: {meter_name: cpu_util, threshold: 50, alarm_actions: [watcher]}
  watcher:
    type: OS::Heat::Value
    properties: {value: {get_resource: alarm}}
""",
        types=types,
        custom=custom,
    )
    assert any("Circular Dependency" in str(e) for e in stack.errors), stack.errors
