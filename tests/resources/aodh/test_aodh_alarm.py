"""OS::Aodh::Alarm against the sandbox: schema, the alarm document, lifecycle, suspend/resume."""

from __future__ import annotations

from typing import Any

import pytest
from aodh_plugin_support import (
    NO_DEFAULT,
    alarm_resource,
    alarm_world,
    allowed,
    custom,
    in_range,
    schema_rows,
    undocumented,
)

from kiln.cloud.api.errors import NotFound
from kiln.resources.aodh.alarm import Alarm
from kiln.resources.aodh.alarm_body import alarm_body, metadata_field
from kiln.testing.plugin_context import decide, run_action

OPERATORS = allowed("le", "ge", "eq", "lt", "gt", "ne")
BASE: dict[str, Any] = {
    "meter_name": "cpu_util",
    "statistic": "avg",
    "period": 60,
    "evaluation_periods": 1,
    "threshold": 50,
    "comparison_operator": "gt",
}


def test_schema_matches_the_reference() -> None:
    queues: tuple[Any, ...] = ("list", False, [], True, [])
    queue = ("string", False, NO_DEFAULT, False, [custom("zaqar.queue")])
    assert schema_rows(Alarm.properties_schema) == {
        "comparison_operator": ("string", False, NO_DEFAULT, True, [OPERATORS]),
        "evaluation_periods": ("integer", False, NO_DEFAULT, True, []),
        "meter_name": ("string", True, NO_DEFAULT, False, []),
        "period": ("integer", False, NO_DEFAULT, True, []),
        "statistic": (
            "string",
            False,
            NO_DEFAULT,
            True,
            [allowed("count", "avg", "sum", "min", "max")],
        ),
        "threshold": ("number", True, NO_DEFAULT, True, []),
        "matching_metadata": ("map", False, {}, True, []),
        "query": ("list", False, NO_DEFAULT, True, []),
        "query[].field": ("string", False, NO_DEFAULT, False, []),
        "query[].type": (
            "string",
            False,
            "string",
            False,
            [allowed("integer", "float", "string", "boolean", "datetime")],
        ),
        "query[].op": ("string", False, NO_DEFAULT, False, [OPERATORS]),
        "query[].value": ("string", False, NO_DEFAULT, False, []),
        "description": ("string", False, NO_DEFAULT, True, []),
        "enabled": ("boolean", False, "true", True, []),
        "alarm_actions": ("list", False, NO_DEFAULT, True, []),
        "ok_actions": ("list", False, NO_DEFAULT, True, []),
        "insufficient_data_actions": ("list", False, NO_DEFAULT, True, []),
        "alarm_queues": queues,
        "alarm_queues[]": queue,
        "ok_queues": queues,
        "ok_queues[]": queue,
        "insufficient_data_queues": queues,
        "insufficient_data_queues[]": queue,
        "repeat_actions": ("boolean", False, "true", True, []),
        "severity": ("string", False, "low", True, [allowed("low", "moderate", "critical")]),
        "time_constraints": ("list", False, [], False, []),
        "time_constraints[].name": ("string", True, NO_DEFAULT, False, []),
        "time_constraints[].start": (
            "string",
            True,
            NO_DEFAULT,
            False,
            [custom("cron_expression")],
        ),
        "time_constraints[].description": ("string", False, NO_DEFAULT, False, []),
        "time_constraints[].duration": ("integer", True, NO_DEFAULT, False, [in_range(0, None)]),
        "time_constraints[].timezone": ("string", False, NO_DEFAULT, False, [custom("timezone")]),
    }
    assert list(Alarm.attributes_schema) == []
    assert undocumented(Alarm) == []


# -- the alarm document ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("meter", "key", "field"),
    [
        ("cpu_util", "server_group", "metadata.user_metadata.server_group"),
        ("memory.usage", "metering.stack", "metadata.user_metadata.stack"),
        ("disk.read.bytes", "metadata.user_metadata.x", "metadata.user_metadata.x"),
        ("network.incoming.bytes", "x", "metadata.user_metadata.x"),
        ("image.size", "stack", "metadata.metering.stack"),
        ("storage.objects", "user_metadata.x", "metadata.metering.x"),
        ("custom", "metadata.metering.x", "metadata.metering.x"),
    ],
)
def test_matching_metadata_fields(meter: str, key: str, field: str) -> None:
    assert metadata_field(meter, key) == field


def test_the_document_of_the_properties() -> None:
    ctx_props = {
        **BASE,
        "description": "scale up",
        "enabled": True,
        "repeat_actions": False,
        "severity": "critical",
        "matching_metadata": {"metering.stack": "s1", "count": 3},
        "query": [{"field": "resource_id", "op": "eq", "value": "r1", "type": "string"}],
        "alarm_actions": ["http://example.com/up"],
        "ok_actions": None,
        "insufficient_data_actions": None,
        "alarm_queues": ["q1"],
        "ok_queues": [],
        "insufficient_data_queues": ["q2"],
        "time_constraints": [
            {"name": "night", "start": "0 23 * * *", "duration": 3600, "timezone": None}
        ],
    }
    assert alarm_body(ctx_props, "stack-alarm-x") == {
        "name": "stack-alarm-x",
        "type": "threshold",
        "description": "scale up",
        "enabled": True,
        "repeat_actions": False,
        "severity": "critical",
        "time_constraints": [{"name": "night", "start": "0 23 * * *", "duration": 3600}],
        "alarm_actions": ["http://example.com/up", "trust+zaqar://?queue_name=q1"],
        "insufficient_data_actions": ["trust+zaqar://?queue_name=q2"],
        "threshold_rule": {
            "meter_name": "cpu_util",
            "period": 60,
            "evaluation_periods": 1,
            "threshold": 50,
            "statistic": "avg",
            "comparison_operator": "gt",
            "query": [
                {"field": "resource_id", "op": "eq", "value": "r1", "type": "string"},
                {"field": "metadata.user_metadata.stack", "op": "eq", "value": "s1"},
                {"field": "metadata.user_metadata.count", "op": "eq", "value": "3"},
            ],
        },
    }


# -- lifecycle --------------------------------------------------------------------------------
def test_create_posts_the_alarm_and_records_its_id() -> None:
    _, aodh = alarm_world()
    props = {**BASE, "alarm_actions": ["test://up"], "matching_metadata": {"stack": "s"}}
    alarm, ctx = alarm_resource(aodh, props)
    assert alarm.reference_id() == "alarm"
    assert run_action(alarm, "create") == 1
    record = aodh.get_alarm(ctx.physical_id or "")
    assert alarm.reference_id() == record.id
    assert record.name == ctx.physical_resource_name()
    assert record.type == "threshold"
    assert record.enabled is True
    assert record["repeat_actions"] is True
    assert record.severity == "low"
    assert record["alarm_actions"] == ["test://up"]
    assert record.rule["meter_name"] == "cpu_util"
    assert record.rule["threshold"] == 50
    assert record.rule["query"][0]["field"] == "metadata.user_metadata.stack"
    assert alarm.get_attribute("show") == record.show()


def test_find_existing_by_the_physical_name() -> None:
    _, aodh = alarm_world()
    alarm, ctx = alarm_resource(aodh, BASE)
    assert alarm.find_existing() is None
    run_action(alarm, "create")
    created_id, ctx.physical_id = ctx.physical_id, None
    assert alarm.find_existing() == created_id


def test_update_rebuilds_the_whole_alarm() -> None:
    _, aodh = alarm_world()
    alarm, ctx = alarm_resource(aodh, {**BASE, "query": [{"field": "a", "op": "eq", "value": "1"}]})
    run_action(alarm, "create")
    new = {**BASE, "threshold": 80.5, "severity": "moderate", "ok_actions": ["log://ok"]}
    assert decide(alarm, new).kind == "update"
    run_action(alarm, "update", new_properties=new)
    record = aodh.get_alarm(ctx.physical_id or "")
    assert record.rule["threshold"] == 80.5
    assert record.rule["query"] == []  # the removed query is gone too
    assert record.severity == "moderate"
    assert record["ok_actions"] == ["log://ok"]
    assert record.name == ctx.physical_resource_name()


@pytest.mark.parametrize(
    "change",
    [
        {"meter_name": "memory"},
        {"time_constraints": [{"name": "t", "start": "* * * * *", "duration": 1}]},
    ],
)
def test_meter_name_and_time_constraints_replace(change: dict[str, Any]) -> None:
    _, aodh = alarm_world()
    alarm, _ = alarm_resource(aodh, BASE)
    assert decide(alarm, {**BASE, **change}).kind == "replace"


def test_suspend_disables_and_resume_enables() -> None:
    _, aodh = alarm_world()
    alarm, ctx = alarm_resource(aodh, BASE)
    run_action(alarm, "create")
    run_action(alarm, "suspend")
    assert aodh.get_alarm(ctx.physical_id or "").enabled is False
    run_action(alarm, "resume")
    record = aodh.get_alarm(ctx.physical_id or "")
    assert record.enabled is True
    assert record.rule["meter_name"] == "cpu_util"  # the rest of the alarm is kept


def test_check_reads_the_alarm() -> None:
    _, aodh = alarm_world()
    alarm, ctx = alarm_resource(aodh, BASE)
    run_action(alarm, "create")
    assert run_action(alarm, "check") == 1
    aodh.delete_alarm(ctx.physical_id or "")
    with pytest.raises(NotFound):
        run_action(alarm, "check")


def test_delete_removes_the_alarm_and_tolerates_its_absence() -> None:
    _, aodh = alarm_world()
    alarm, ctx = alarm_resource(aodh, BASE)
    run_action(alarm, "create")
    run_action(alarm, "delete")
    with pytest.raises(NotFound):
        aodh.get_alarm(ctx.physical_id or "")
    assert alarm.get_attribute("show") is None
    run_action(alarm, "delete")  # already gone: deleted
    _, unset = alarm_resource(aodh, BASE, name="never")
    assert unset.physical_id is None
    run_action(Alarm(unset), "delete")
