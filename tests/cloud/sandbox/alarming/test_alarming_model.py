"""The Aodh model: validation, name uniqueness, queries, state, history and firing."""

from __future__ import annotations

import json
import queue

import pytest

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.model import AlarmingModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.http_server import serve_in_thread

DEMO = CloudScope("demo-project", "demo-user", frozenset({"member"}), trust_id="trust-1")
OTHER = CloudScope("other-project", "other-user", frozenset({"member"}))
ADMIN = CloudScope("admin-project", "admin-user", frozenset({"admin"}))

RULE = {"meter_name": "cpu_util", "threshold": 80, "comparison_operator": "gt"}


def alarm_body(**extra):
    return {"name": "cpu-high", "type": "threshold", "threshold_rule": dict(RULE), **extra}


@pytest.fixture
def model():
    cloud = SandboxCloud()
    model = AlarmingModel(cloud)
    cloud.add("alarming", model)
    model.seed()
    sent = []
    model.deliver = lambda url, body, headers: sent.append((url, body, dict(headers)))
    model.sent = sent
    return model


def test_create_fills_defaults(model):
    alarm = model.create_alarm(DEMO, alarm_body())
    assert alarm["state"] == "insufficient data"
    assert alarm["severity"] == "low" and alarm["enabled"] is True
    assert alarm["repeat_actions"] is False
    rule = alarm["threshold_rule"]
    assert (rule["statistic"], rule["period"], rule["evaluation_periods"]) == ("avg", 60, 1)
    assert alarm["project_id"] == DEMO.project_id and alarm["user_id"] == DEMO.user_id
    assert model.get_alarm(DEMO, alarm["alarm_id"]) is alarm


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"threshold_rule": None}, "threshold_rule must be set"),
        ({"threshold_rule": {**RULE, "comparison_operator": "bigger"}}, "comparison_operator"),
        ({"threshold_rule": {"threshold": 1}}, "meter_name"),
        ({"type": "nonsense"}, "type"),
        ({"severity": "huge"}, "severity"),
        ({"alarm_actions": ["ftp://x"]}, "Unsupported action"),
        ({"event_rule": {}}, "cannot be set"),
        ({"time_constraints": [{"name": "a", "start": "bad", "duration": 1}]}, "cron"),
    ],
)
def test_create_validation(model, changes, match):
    with pytest.raises(BadRequest, match=match):
        model.create_alarm(DEMO, alarm_body(**changes))


def test_other_types_need_their_rule_keys(model):
    event = model.create_alarm(DEMO, {"name": "e", "type": "event", "event_rule": {}})
    assert event["event_rule"]["event_type"] == "*"
    with pytest.raises(BadRequest, match="pool_id"):
        model.create_alarm(
            DEMO,
            {
                "name": "h",
                "type": "loadbalancer_member_health",
                "loadbalancer_member_health_rule": {},
            },
        )
    with pytest.raises(BadRequest, match="metric"):
        model.create_alarm(
            DEMO,
            {
                "name": "g",
                "type": "gnocchi_resources_threshold",
                "gnocchi_resources_threshold_rule": {"threshold": 1},
            },
        )


def test_name_unique_per_project_and_isolation(model):
    alarm = model.create_alarm(DEMO, alarm_body())
    with pytest.raises(Conflict, match="cpu-high"):
        model.create_alarm(DEMO, alarm_body())
    model.create_alarm(OTHER, alarm_body())  # another project may reuse it
    with pytest.raises(NotFound, match=f"Alarm {alarm['alarm_id']} not found"):
        model.get_alarm(OTHER, alarm["alarm_id"])
    assert len(model.list_alarms(ADMIN)) == 2


def test_query_filters(model):
    model.create_alarm(DEMO, alarm_body(name="a", severity="critical"))
    model.create_alarm(DEMO, alarm_body(name="b", enabled=False))
    names = lambda q: sorted(a["name"] for a in model.list_alarms(DEMO, q))  # noqa: E731
    assert names([{"field": "name", "op": "eq", "value": "a"}]) == ["a"]
    assert names([{"field": "severity", "op": "ne", "value": "critical"}]) == ["b"]
    assert names([{"field": "enabled", "op": "eq", "value": "False"}]) == ["b"]
    with pytest.raises(BadRequest):
        model.list_alarms(DEMO, [{"field": "name", "op": "like", "value": "a"}])


def test_update_is_a_whole_document_put(model):
    alarm = model.create_alarm(DEMO, alarm_body(description="old"))
    document = {**alarm, "description": "new", "threshold_rule": {**RULE, "threshold": 90}}
    updated = model.update_alarm(DEMO, alarm["alarm_id"], document)
    assert updated["description"] == "new" and updated["threshold_rule"]["threshold"] == 90
    model.create_alarm(DEMO, alarm_body(name="taken"))
    with pytest.raises(Conflict):
        model.update_alarm(DEMO, alarm["alarm_id"], {**document, "name": "taken"})


def test_state_change_notifies_matching_actions_with_trust_token(model):
    model.token_for_trust = lambda trust_id: f"token-for-{trust_id}"
    alarm = model.create_alarm(
        DEMO,
        alarm_body(
            alarm_actions=["http://hook/alarm", "trust+https://heat:8004/signal?x=1", "log://"],
            ok_actions=["http://hook/ok"],
            severity="critical",
        ),
    )
    assert model.set_state(DEMO, alarm["alarm_id"], "alarm") == "alarm"
    assert model.get_state(DEMO, alarm["alarm_id"]) == "alarm"
    assert [url for url, _, _ in model.sent] == [
        "http://hook/alarm",
        "https://heat:8004/signal?x=1",
    ]
    _, body, headers = model.sent[0]
    assert body == {
        "alarm_id": alarm["alarm_id"],
        "alarm_name": "cpu-high",
        "severity": "critical",
        "previous": "insufficient data",
        "current": "alarm",
        "reason": "Manually set via API",
        "reason_data": {},
    }
    assert "X-Auth-Token" not in headers
    assert model.sent[1][2]["X-Auth-Token"] == "token-for-trust-1"
    assert model.recorded[0][0] == "log://"
    model.set_state(DEMO, alarm["alarm_id"], "alarm")  # same state, no repeat_actions
    assert len(model.sent) == 2
    history = model.history(DEMO, alarm["alarm_id"])
    assert [h["type"] for h in history] == ["state transition", "creation"]
    assert json.loads(history[0]["detail"]) == {"state": "alarm"}
    with pytest.raises(BadRequest):
        model.set_state(DEMO, alarm["alarm_id"], "burning")


def test_repeat_actions_and_disabled_alarms(model):
    repeat = model.create_alarm(
        DEMO, alarm_body(name="r", repeat_actions=True, alarm_actions=["http://h/r"])
    )
    model.fire(repeat["alarm_id"], "alarm")
    model.fire(repeat["alarm_id"], "alarm")
    assert [url for url, _, _ in model.sent] == ["http://h/r", "http://h/r"]
    assert model.sent[1][1]["previous"] == "alarm"
    off = model.create_alarm(
        DEMO, alarm_body(name="off", enabled=False, alarm_actions=["http://h/o"])
    )
    assert model.fire(off["alarm_id"], "alarm")["state"] == "alarm"
    assert len(model.sent) == 2
    with pytest.raises(NotFound):
        model.fire("missing", "alarm")


def test_default_delivery_posts_to_a_real_server():
    received: queue.Queue = queue.Queue()

    def app(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        received.put((environ["PATH_INFO"], environ.get("HTTP_X_AUTH_TOKEN"), json.loads(body)))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    cloud = SandboxCloud()
    model = AlarmingModel(cloud)
    model.token_for_trust = lambda trust_id: "trusted-token"
    with serve_in_thread(app) as server:
        url = server.url.replace("http://", "trust+http://") + "/signal"
        alarm = model.create_alarm(DEMO, alarm_body(alarm_actions=[url]))
        model.fire(alarm["alarm_id"], "alarm")
        path, token, body = received.get(timeout=10)
    assert (path, token) == ("/signal", "trusted-token")
    assert body["current"] == "alarm" and body["alarm_id"] == alarm["alarm_id"]
