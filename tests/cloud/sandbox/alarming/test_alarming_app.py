"""The Aodh REST app: version document, alarms, state, history, q-filters, error bodies."""

from __future__ import annotations

import pytest
from falcon import testing

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.app import create_alarming_app
from kiln.cloud.sandbox.alarming.model import AlarmingModel
from kiln.cloud.sandbox.cloud import SandboxCloud

DEMO = CloudScope("demo-project", "demo-user", frozenset({"member"}))
BODY = {
    "name": "cpu-high",
    "type": "threshold",
    "threshold_rule": {"meter_name": "cpu_util", "threshold": 80},
    "ok_actions": ["http://hook/ok"],
}


class Tokens:
    def scope(self, token):
        if token != "demo-token":
            raise Unauthorized("The request you have made requires authentication.")
        return DEMO


@pytest.fixture
def client():
    cloud = SandboxCloud()
    model = AlarmingModel(cloud)
    cloud.add("alarming", model)
    model.sent = []
    model.deliver = lambda url, body, headers: model.sent.append((url, body))
    client = testing.TestClient(
        create_alarming_app(cloud, Tokens()), headers={"X-Auth-Token": "demo-token"}
    )
    client.model = model
    return client


def test_version_document(client):
    doc = testing.TestClient(client.app).simulate_get("/").json
    (version,) = doc["versions"]["values"]
    assert version["id"] == "v2" and version["status"] == "stable"
    assert version["links"][0]["href"].endswith("/v2")


def test_alarm_rest_lifecycle(client):
    created = client.simulate_post("/v2/alarms", json=BODY)
    assert created.status_code == 201
    alarm_id = created.json["alarm_id"]
    other = client.simulate_post("/v2/alarms", json={**BODY, "name": "other"})
    assert other.status_code == 201
    listed = client.simulate_get("/v2/alarms", query_string="q.field=name&q.op=eq&q.value=cpu-high")
    assert [a["alarm_id"] for a in listed.json] == [alarm_id]
    assert client.simulate_get(f"/v2/alarms/{alarm_id}/state").json == "insufficient data"
    put = client.simulate_put(f"/v2/alarms/{alarm_id}/state", json="ok")
    assert (put.status_code, put.json) == (200, "ok")
    assert client.model.sent[0][0] == "http://hook/ok"
    history = client.simulate_get(f"/v2/alarms/{alarm_id}/history").json
    assert history[0]["type"] == "state transition"
    whole = {**created.json, "description": "changed"}
    updated = client.simulate_put(f"/v2/alarms/{alarm_id}", json=whole)
    assert updated.json["description"] == "changed"
    assert client.simulate_delete(f"/v2/alarms/{alarm_id}").status_code == 204
    missing = client.simulate_get(f"/v2/alarms/{alarm_id}")
    assert missing.status_code == 404
    assert missing.json == {
        "error_message": {
            "faultcode": "Client",
            "faultstring": f"Alarm {alarm_id} not found",
            "debuginfo": None,
        }
    }


def test_rest_errors(client):
    client.simulate_post("/v2/alarms", json=BODY)
    duplicate = client.simulate_post("/v2/alarms", json=BODY)
    assert duplicate.status_code == 409
    assert "cpu-high" in duplicate.json["error_message"]["faultstring"]
    bad = client.simulate_post("/v2/alarms", json={**BODY, "name": "x", "threshold_rule": None})
    assert bad.status_code == 400 and "threshold_rule" in bad.json["error_message"]["faultstring"]
    assert testing.TestClient(client.app).simulate_get("/v2/alarms").status_code == 401
