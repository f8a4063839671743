"""RestClient over a real keystoneauth adapter and a real HTTP server: error bodies of
every service become cloud.api errors; transient failures are retried."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from keystoneauth1 import adapter, session

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound, OverLimit, Unavailable
from kiln.cloud.openstack.rest import RestClient, RetryPolicy, error_message
from kiln.cloud.sandbox.http_server import ServerHandle, serve_in_thread

Reply = tuple[int, Any]


class Script:
    """A WSGI app that answers from a list of (status, body) replies, in order."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.seen: list[tuple[str, str, bytes]] = []

    def __call__(self, environ: dict[str, Any], start: Callable[..., Any]) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        self.seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"], body))
        status, reply = self.replies.pop(0) if self.replies else (200, {})
        data = reply.encode() if isinstance(reply, str) else json.dumps(reply).encode()
        kind = "text/plain" if isinstance(reply, str) else "application/json"
        start(f"{status} X", [("Content-Type", kind), ("Content-Length", str(len(data)))])
        return [data]


@pytest.fixture
def served() -> Iterator[tuple[Script, ServerHandle]]:
    script = Script()
    with serve_in_thread(script) as handle:
        yield script, handle


def rest(handle: ServerHandle, attempts: int = 3) -> RestClient:
    proxy = adapter.Adapter(session.Session(), endpoint_override=handle.url + "/v2.0")
    policy = RetryPolicy(attempts=attempts, base_delay=0.0)
    return RestClient(proxy, "network", retry=policy, sleep=lambda _s: None)


def test_json_in_and_out(served: tuple[Script, ServerHandle]) -> None:
    script, handle = served
    script.replies = [(201, {"port": {"id": "p1"}})]
    assert rest(handle).post("/ports", {"port": {"name": "a"}}) == {"port": {"id": "p1"}}
    method, path, body = script.seen[0]
    assert (method, path, json.loads(body)) == ("POST", "/v2.0/ports", {"port": {"name": "a"}})


def test_service_errors_become_cloud_errors(served: tuple[Script, ServerHandle]) -> None:
    script, handle = served
    script.replies = [
        (404, {"NeutronError": {"type": "PortNotFound", "message": "Port x could not be found."}}),
        (400, {"badRequest": {"code": 400, "message": "Invalid key_name provided."}}),
        (409, {"NeutronError": {"type": "OverQuota", "message": "Quota exceeded for ports."}}),
    ]
    client = rest(handle)
    with pytest.raises(NotFound) as missing:
        client.get("/ports/x")
    assert (missing.value.message, missing.value.kind) == (
        "Port x could not be found.",
        "PortNotFound",
    )
    with pytest.raises(BadRequest, match="Invalid key_name provided"):
        client.post("/servers", {})
    with pytest.raises(OverLimit):
        client.post("/ports", {})


def test_5xx_is_retried_then_raised(served: tuple[Script, ServerHandle]) -> None:
    script, handle = served
    script.replies = [(503, "Service Unavailable"), (200, {"ok": True})]
    assert rest(handle).get("/networks") == {"ok": True}
    script.replies = [(500, {"computeFault": {"code": 500, "message": "boom"}})] * 3
    with pytest.raises(Unavailable, match="boom"):
        rest(handle).post("/networks", {})
    assert len(script.seen) == 5


def test_409_is_retried_only_for_idempotent_methods(served: tuple[Script, ServerHandle]) -> None:
    script, handle = served
    conflict = (409, {"faultcode": "Client", "faultstring": "Load Balancer x is immutable"})
    script.replies = [conflict, (204, "")]
    assert rest(handle).delete("/lbaas/loadbalancers/x") is None
    script.replies = [conflict, (201, {})]
    with pytest.raises(Conflict, match="immutable"):
        rest(handle).post("/lbaas/listeners", {})


def test_connection_failures_are_unavailable() -> None:
    proxy = adapter.Adapter(session.Session(), endpoint_override="http://127.0.0.1:9/v2.0")
    client = RestClient(proxy, "network", retry=RetryPolicy(attempts=1), sleep=lambda _s: None)
    with pytest.raises(Unavailable):
        client.get("/networks")


def test_error_messages_of_each_service() -> None:
    assert error_message({"error_message": {"faultstring": "Alarm x not found"}}, "") == (
        "Alarm x not found",
        None,
    )
    assert error_message({"error": {"code": 404, "message": "Could not find project"}}, "") == (
        "Could not find project",
        None,
    )
    assert error_message(None, "404 Not Found\n\nNo image found with ID x") == (
        "No image found with ID x",
        None,
    )


def test_a_call_that_times_out_is_unavailable() -> None:
    import time

    def slow(environ: dict[str, Any], start: Callable[..., Any]) -> list[bytes]:
        time.sleep(0.5)
        start("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    with serve_in_thread(slow) as handle:
        proxy = adapter.Adapter(session.Session(timeout=0.1), endpoint_override=handle.url)
        client = RestClient(proxy, "compute", retry=RetryPolicy(attempts=2, base_delay=0.0))
        with pytest.raises(Unavailable):
            client.get("/servers")
