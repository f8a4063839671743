"""Engine services (admin only) and build info (heat-api.md 2.9, 3.14)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from kiln.api.native.support import ApiSettings
from kiln.api.policy import OsloPolicy
from kiln.db import engine as dbe
from kiln.db import engines as edb
from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)

ADMIN_ROLES = ("admin", "member", "reader")
SERVICE_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}"


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path, policy=OsloPolicy(), settings=ApiSettings(revision="2025.1-kiln"))


def test_services_need_an_admin(api):
    refused = api.client.simulate_get(api.url("/services"))
    assert refused.status_code == 403
    assert refused.json["error"]["message"] == "You are not authorized to use service:index."


def test_services_are_the_engines_with_up_or_down(api):
    now = datetime.now(UTC)
    with dbe.write(api.engine.deps.db) as conn:
        edb.register_engine(conn, "engine-live", host="ctl-1", pid=10, now=now)
        edb.register_engine(conn, "engine-gone", host="ctl-2", pid=11, now=now - timedelta(hours=1))
    api.as_user(roles=ADMIN_ROLES)
    found = api.client.simulate_get(api.url("/services"))
    assert found.status_code == 200
    services = {s["engine_id"]: s for s in found.json["services"]}
    live = services["engine-live"]
    assert list(live) == [
        "id",
        "binary",
        "engine_id",
        "host",
        "hostname",
        "topic",
        "report_interval",
        "created_at",
        "updated_at",
        "deleted_at",
        "status",
    ]
    assert uuid.UUID(live["id"])
    assert (live["host"], live["hostname"], live["topic"]) == ("ctl-1", "ctl-1", "engine")
    assert live["status"] == "up" and services["engine-gone"]["status"] == "down"
    assert re.fullmatch(SERVICE_TIME, live["created_at"])
    assert re.fullmatch(SERVICE_TIME, live["updated_at"])
    assert live["deleted_at"] is None
    again = api.client.simulate_get(api.url("/services")).json["services"]
    assert {s["id"] for s in again} == {s["id"] for s in services.values()}


def test_services_route_answers_other_methods_with_404(api):
    api.as_user(roles=ADMIN_ROLES)
    assert api.client.simulate_post(api.url("/services"), json={}).status_code == 404
    assert api.client.simulate_delete(api.url("/services")).status_code == 404


def test_build_info(api):
    found = api.client.simulate_get(api.url("/build_info"))
    assert found.status_code == 200
    assert found.json == {"api": {"revision": "2025.1-kiln"}, "engine": {"revision": "unknown"}}
