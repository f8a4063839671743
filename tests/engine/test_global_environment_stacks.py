"""Stacks using the types of Kiln's global environment, through the real engine on the
in-process sandbox: OS::Ceilometer::Alarm and AWS::CloudWatch::Alarm make real Aodh
alarms, and an alarm action naming a resource of the stack becomes its AlarmUrl."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.cli.global_environment import packaged_global_environment
from kiln.cloud.api.alarming import Alarm, AlarmingApi
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.plugin.registry import PluginRegistry

REGISTRY = PluginRegistry.discover(global_environment=packaged_global_environment())

CEILOMETER_ALARM = """
heat_template_version: 2021-04-16
resources:
  cpu_alarm:
    type: OS::Ceilometer::Alarm
    properties:
      meter_name: cpu_util
      statistic: avg
      period: 60
      evaluation_periods: 1
      threshold: 50
      comparison_operator: gt
      alarm_actions: ["http://example.org/scale-up"]
      matching_metadata: {"metadata.user_metadata.stack": web}
"""

CLOUDWATCH_ALARM = """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  Restarter:
    Type: AWS::CloudWatch::Alarm
    Properties:
      MetricName: ServiceFailure
      Namespace: system/linux
      Statistic: SampleCount
      Period: '300'
      EvaluationPeriods: '1'
      Threshold: '2'
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: ["http://example.org/restart"]
      Dimensions: [{Name: AutoScalingGroupName, Value: web-group}]
"""

# A resource type with an AlarmUrl attribute: a template resource whose provider
# template has an AlarmUrl output (Kiln has no scaling policy type yet).
SIGNAL_PROVIDER = """
heat_template_version: 2021-04-16
parameters:
  url: {type: string}
resources:
  handle: {type: OS::Heat::Value, properties: {value: {get_param: url}}}
outputs:
  AlarmUrl: {value: {get_attr: [handle, value]}}
"""

NAMED_ACTIONS = """
heat_template_version: 2021-04-16
resources:
  scale_up:
    type: signal.yaml
    properties: {url: "http://example.org/signal/up"}
  cpu_alarm:
    type: OS::Aodh::Alarm
    properties:
      meter_name: cpu_util
      threshold: 80
      alarm_actions: [scale_up, "http://example.org/also"]
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    harness = make_harness(tmp_path, registry=REGISTRY)
    harness.deps.cloud = SandboxConnector(build_cloud())
    return harness


def alarms(h: Harness) -> list[Alarm]:
    assert isinstance(h.deps.cloud, SandboxConnector)
    client: AlarmingApi = h.deps.cloud.client(
        "alarming", CloudScope(CALLER.project_id, CALLER.user_id)
    )
    return client.list_alarms()


def query(alarm: Alarm) -> list[tuple[str, str, str]]:
    """The rule's query as (field, op, value) (Aodh adds an empty ``type``)."""
    return [(q["field"], q["op"], q["value"]) for q in alarm.rule["query"]]


def status(h: Harness, stack_id: str) -> tuple[str, str, str]:
    stack = h.service.get_stack(stack_id)
    return stack.action, stack.status, stack.status_reason


def test_a_ceilometer_alarm_is_an_aodh_alarm_in_the_cloud(h: Harness) -> None:
    stack_id = h.create(CEILOMETER_ALARM)
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE")
    (alarm,) = alarms(h)
    assert alarm.type == "threshold"
    assert alarm.raw["alarm_actions"] == ["http://example.org/scale-up"]
    assert alarm.rule["meter_name"] == "cpu_util"
    assert alarm.rule["threshold"] == 50
    assert query(alarm) == [("metadata.user_metadata.stack", "eq", "web")]
    (row,) = h.service.resources(stack_id)
    assert (row.type, row.physical_id) == ("OS::Ceilometer::Alarm", alarm.id)

    h.service.delete_stack(CALLER, stack_id)
    h.run()
    assert status(h, stack_id)[:2] == ("DELETE", "COMPLETE")
    assert alarms(h) == []


def test_a_cloudwatch_alarm_becomes_an_aodh_alarm_through_its_provider(h: Harness) -> None:
    stack_id = h.create(CLOUDWATCH_ALARM)
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE"), status(h, stack_id)
    (alarm,) = alarms(h)
    assert alarm.raw["alarm_actions"] == ["http://example.org/restart"]
    assert alarm.raw["repeat_actions"] is True
    rule = alarm.rule
    assert (rule["meter_name"], rule["statistic"], rule["comparison_operator"]) == (
        "ServiceFailure",
        "count",
        "gt",
    )
    assert (rule["period"], rule["evaluation_periods"], rule["threshold"]) == (300, 1, 2)
    assert query(alarm) == [("metadata.metering.AutoScalingGroupName", "eq", "web-group")]

    h.service.delete_stack(CALLER, stack_id)
    h.run()
    assert status(h, stack_id)[:2] == ("DELETE", "COMPLETE")
    assert alarms(h) == []


def test_an_action_naming_a_resource_is_its_alarm_url(h: Harness) -> None:
    stack_id = h.create(NAMED_ACTIONS, files={"signal.yaml": SIGNAL_PROVIDER})
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE"), status(h, stack_id)
    (alarm,) = alarms(h)
    assert alarm.raw["alarm_actions"] == [
        "http://example.org/signal/up",
        "http://example.org/also",
    ]


def test_an_action_naming_no_resource_is_sent_as_written(h: Harness) -> None:
    template = NAMED_ACTIONS.replace("[scale_up,", "[scale_down,")
    stack_id = h.create(template, files={"signal.yaml": SIGNAL_PROVIDER})
    h.run()
    action, state, reason = status(h, stack_id)
    assert (action, state) == ("CREATE", "FAILED")
    # Aodh (the sandbox's too) accepts only actions with a notifier scheme.
    assert "Unsupported action scale_down" in reason


def test_a_changed_alarm_url_updates_the_alarm(h: Harness) -> None:
    stack_id = h.create(NAMED_ACTIONS, files={"signal.yaml": SIGNAL_PROVIDER})
    h.run()
    changed = NAMED_ACTIONS.replace("signal/up", "signal/up-2")
    h.update(stack_id, changed, files={"signal.yaml": SIGNAL_PROVIDER})
    h.run()
    assert status(h, stack_id)[:2] == ("UPDATE", "COMPLETE"), status(h, stack_id)
    (alarm,) = alarms(h)
    assert alarm.raw["alarm_actions"][0] == "http://example.org/signal/up-2"


def test_an_alarm_left_out_of_an_update_is_deleted_in_the_cloud(h: Harness) -> None:
    stack_id = h.create(CEILOMETER_ALARM)
    h.run()
    assert len(alarms(h)) == 1
    h.update(stack_id, "heat_template_version: 2021-04-16\nresources: {}\n")
    h.run()
    assert status(h, stack_id)[:2] == ("UPDATE", "COMPLETE"), status(h, stack_id)
    assert alarms(h) == []


def test_naming_the_target_type_instead_of_the_alias_keeps_the_alarm(h: Harness) -> None:
    # The implementation is the same, so nothing is replaced (Heat replaces a resource
    # on a type change only when the implementation changes).
    stack_id = h.create(CEILOMETER_ALARM)
    h.run()
    (before,) = alarms(h)
    h.update(stack_id, CEILOMETER_ALARM.replace("OS::Ceilometer::Alarm", "OS::Aodh::Alarm"))
    h.run()
    assert status(h, stack_id)[:2] == ("UPDATE", "COMPLETE"), status(h, stack_id)
    (after,) = alarms(h)
    assert after.id == before.id
