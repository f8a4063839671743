"""Aodh scenarios through both adapters: in process and openstacksdk over HTTP."""

from __future__ import annotations

import pytest

from kiln.cloud.api.alarming import Alarm
from kiln.cloud.api.errors import BadRequest, Conflict, NotFound

BODY = {
    "name": "cpu-high",
    "type": "threshold",
    "threshold_rule": {"meter_name": "cpu_util", "threshold": 80, "comparison_operator": "gt"},
    "alarm_actions": ["http://127.0.0.1:9/hook"],
}


def test_alarm_lifecycle(contract_cloud):
    sent = []
    contract_cloud.sandbox.alarming.deliver = lambda url, body, headers: sent.append((url, body))
    aodh = contract_cloud.client("alarming")
    alarm = aodh.create_alarm(BODY)
    assert isinstance(alarm, Alarm)
    assert alarm.state == "insufficient data" and alarm.rule["statistic"] == "avg"
    assert aodh.get_alarm(alarm.id).id == alarm.id
    assert aodh.find_alarm("cpu-high").id == alarm.id
    assert [a.id for a in aodh.list_alarms(name="cpu-high")] == [alarm.id]
    assert aodh.list_alarms(name="other") == []

    updated = aodh.update_alarm(alarm.id, {"threshold_rule": {"threshold": 95}, "enabled": True})
    assert updated.rule["threshold"] == 95 and updated.rule["meter_name"] == "cpu_util"

    assert aodh.set_alarm_state(alarm.id, "alarm") == "alarm"
    assert aodh.get_alarm_state(alarm.id) == "alarm"
    assert [(url, body["current"]) for url, body in sent] == [("http://127.0.0.1:9/hook", "alarm")]
    assert aodh.alarm_history(alarm.id)[0]["type"] == "state transition"

    aodh.delete_alarm(alarm.id)
    with pytest.raises(NotFound, match="not found"):
        aodh.get_alarm(alarm.id)
    with pytest.raises(NotFound):
        aodh.delete_alarm(alarm.id)


def test_alarm_errors(contract_cloud):
    aodh = contract_cloud.client("alarming")
    aodh.create_alarm(BODY)
    with pytest.raises(Conflict):
        aodh.create_alarm(BODY)
    with pytest.raises(BadRequest):
        aodh.create_alarm({**BODY, "name": "x", "threshold_rule": None})
    with pytest.raises(BadRequest):
        aodh.create_alarm(
            {
                **BODY,
                "name": "y",
                "threshold_rule": {**BODY["threshold_rule"], "comparison_operator": "bad"},
            }
        )
