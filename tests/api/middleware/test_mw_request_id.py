"""Every response carries a fresh ``X-Openstack-Request-Id`` (heat-api.md 1.6, 1.7)."""

from __future__ import annotations

from falcon import testing

from kiln.api.middleware.request_id import (
    ENV_GLOBAL_REQUEST_ID,
    ENV_REQUEST_ID,
    RequestId,
    global_request_id,
)

GLOBAL = "req-4c7c4d0e-2e8a-4c9b-9c61-3f0a7d1f2b3c"


def _recording_app(seen):
    def app(environ, start_response):
        seen.update(environ)
        # An inner stage that already set the header must not produce a second one.
        start_response(
            "302 Found",
            [("Location", "/x"), ("Content-Type", "text/plain"), ("X-Openstack-Request-Id", "s")],
        )
        return [b""]

    return app


def test_each_response_gets_its_own_id_also_in_the_environ():
    seen: dict = {}
    client = testing.TestClient(RequestId(_recording_app(seen)))
    first = client.simulate_get("/")
    second = client.simulate_get("/")
    assert first.status_code == 302
    assert first.headers["X-Openstack-Request-Id"] != second.headers["X-Openstack-Request-Id"]
    assert [v for k, v in first.headers.items() if k.lower() == "x-openstack-request-id"] == [
        first.headers["X-Openstack-Request-Id"]
    ]
    assert seen[ENV_REQUEST_ID] == second.headers["X-Openstack-Request-Id"]


def test_an_inbound_global_id_is_kept_only_in_req_uuid_form():
    seen: dict = {}
    client = testing.TestClient(RequestId(_recording_app(seen)))
    found = client.simulate_get("/", headers={"X-Openstack-Request-Id": GLOBAL.upper()})
    assert seen[ENV_GLOBAL_REQUEST_ID] == GLOBAL
    assert found.headers["X-Openstack-Request-Id"] != GLOBAL
    seen.clear()
    client.simulate_get("/", headers={"X-Openstack-Request-Id": "req-not-a-uuid"})
    assert ENV_GLOBAL_REQUEST_ID not in seen


def test_global_request_id_form():
    assert global_request_id(GLOBAL) == GLOBAL
    assert global_request_id("4c7c4d0e-2e8a-4c9b-9c61-3f0a7d1f2b3c") is None
    assert global_request_id(None) is None
