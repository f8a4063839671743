"""Engine calls and wake-ups over oslo.messaging: RabbitMQ at 127.0.0.1:5672, and fake://.

Every test runs on both buses, each on a topic of its own. The RabbitMQ tests
skip when no broker answers, except under CI (``CI`` set) where they fail.
Their queues and exchange auto-delete, reply queues expire after 10 s
(``OPTIONS``), so runs leave nothing behind on the broker.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from rpc_samples import sample

from kiln.core.errors import ActionInProgress, StackValidationFailed, ValidationFailed
from kiln.core.paths import Location
from kiln.db.errors import NotFound
from kiln.rpc import messages as m
from kiln.rpc.bus import ManagedServer
from kiln.rpc.errors import MessagingError, MessagingTimeout, RemoteError
from kiln.rpc.oslo_transport import EngineClient, EngineServer, WakeupListener, WakeupNotifier

RABBIT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
OPTIONS = {
    "DEFAULT": {"control_exchange": "kiln-test"},
    # Reply queues otherwise linger for oslo.messaging's default 30 minutes.
    "oslo_messaging_rabbit": {"amqp_auto_delete": True, "rabbit_transient_queues_ttl": 10},
}

pytestmark = pytest.mark.timeout(60)


def _rabbit_answers() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(params=["fake", "rabbit"])
def bus_url(request: pytest.FixtureRequest) -> str:
    if request.param == "fake":
        return "fake://"
    if not _rabbit_answers():
        message = "RabbitMQ does not answer on 127.0.0.1:5672"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return RABBIT_URL


@pytest.fixture
def topic() -> str:
    return f"kiln-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def serve() -> Iterator[Callable[[ManagedServer], Any]]:
    """Start servers for a test; stop them all after it (their waits in parallel)."""
    started: list[ManagedServer] = []

    def start(server: ManagedServer) -> Any:
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    waits = [threading.Thread(target=server.wait) for server in started]
    for thread in waits:
        thread.start()
    for thread in waits:
        thread.join()


@pytest.fixture
def client(bus_url: str, topic: str) -> Iterator[EngineClient]:
    engine_client = EngineClient(bus_url, topic=topic, timeout=10, options=OPTIONS)
    yield engine_client
    engine_client.close()


def when(year: int) -> datetime:
    return datetime(year, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_a_call_returns_the_reply_and_a_cast_runs_the_handler(
    bus_url: str, topic: str, serve: Any, client: EngineClient
) -> None:
    deleted = threading.Event()

    def show(msg: m.ShowStack) -> m.StackView:
        return m.StackView(
            id=msg.stack_id,
            name="web",
            project_id=msg.context.project_id,
            action="CREATE",
            status="COMPLETE",
            status_reason="done",
            created_at=when(2023),
            updated_at=when(2024),
            tags=("a",),
            outputs=[m.Output("ip", ["10.0.0.1"], "the address")],
        )

    def delete(msg: m.DeleteStack) -> None:
        deleted.set()

    serve(
        EngineServer(
            bus_url, {m.ShowStack: show, m.DeleteStack: delete}, topic=topic, options=OPTIONS
        )
    )

    reply = client.call(m.ShowStack(m.Context("p1"), "s1"))
    assert isinstance(reply, m.StackView)
    assert (reply.id, reply.project_id, reply.created_at) == ("s1", "p1", when(2023))
    assert reply.outputs == [m.Output("ip", ["10.0.0.1"], "the address")]
    assert client.call(sample(m.ShowStack)).id == "sample-text"

    assert client.cast(m.DeleteStack(m.Context("p1"), "s1")) is None
    assert deleted.wait(10)


def test_handler_errors_arrive_with_their_kind_and_status(
    bus_url: str, topic: str, serve: Any, client: EngineClient
) -> None:
    def fail(msg: m.StackAction) -> None:
        if msg.action == "missing":
            raise NotFound("Stack", msg.stack_id)
        if msg.action == "busy":
            raise ActionInProgress("Stack web already has an action (UPDATE) in progress.")
        if msg.action == "invalid":
            raise ValidationFailed(
                [
                    StackValidationFailed(
                        "bad flavor", path=("resources", "a"), category="Property error"
                    ),
                    StackValidationFailed("bad image", location=Location("t.yaml", 9, 3)),
                ]
            )
        raise RuntimeError("db password is hunter2")

    serve(EngineServer(bus_url, {m.StackAction: fail}, topic=topic, options=OPTIONS))

    def call(action: str) -> RemoteError:
        with pytest.raises(RemoteError) as caught:
            client.call(m.StackAction(m.Context("p"), "s1", action))
        return caught.value

    missing = call("missing")
    assert (missing.kind, missing.http_status) == ("EntityNotFound", 404)
    assert missing.full_message == "The Stack (s1) could not be found."
    busy = call("busy")
    assert (busy.kind, busy.http_status) == ("ActionInProgress", 409)
    invalid = call("invalid")
    assert (invalid.kind, invalid.http_status) == ("StackValidationFailed", 400)
    assert [e.full_message for e in invalid.errors] == [
        "Property error: resources.a: bad flavor",
        "bad image",
    ]
    assert invalid.errors[1].location == Location("t.yaml", 9, 3)
    bug = call("bug")
    assert (bug.kind, bug.http_status) == ("InternalError", 500)
    assert "hunter2" not in bug.full_message
    with pytest.raises(RemoteError, match="no engine handler for ShowStack") as caught:
        client.call(m.ShowStack(m.Context("p"), "s1"))
    assert caught.value.http_status == 500


def test_a_call_nobody_answers_times_out(bus_url: str, topic: str) -> None:
    # A short timeout; the fake driver answers "no reply" as exactly as RabbitMQ.
    timeout = 1 if bus_url == "fake://" else 2
    client = EngineClient(bus_url, topic=topic, timeout=timeout, options=OPTIONS)
    try:
        with pytest.raises(MessagingTimeout) as caught:
            client.call(m.ShowStack(m.Context("p"), "s1"))
    finally:
        client.close()
    error = caught.value
    assert (error.kind, error.http_status) == ("MessagingTimeout", 500)
    assert "ShowStack" in error.full_message
    assert topic in error.full_message


def test_a_wakeup_reaches_every_listener_and_bursts_coalesce(
    bus_url: str, topic: str, serve: Any
) -> None:
    woken = [threading.Event(), threading.Event()]
    for event in woken:
        serve(WakeupListener(bus_url, event.set, topic=topic, options=OPTIONS))
    notifier = WakeupNotifier(bus_url, topic=topic, options=OPTIONS)
    try:
        notifier.notify()
        assert all(event.wait(10) for event in woken)
        for event in woken:
            event.clear()
        for _ in range(200):
            notifier.notify()
    finally:
        notifier.close()  # sends the wake-up still pending after the burst
    assert all(event.wait(10) for event in woken)
    assert 2 <= notifier.sent < 50


def test_a_wakeup_that_cannot_be_sent_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    # Port 1 refuses connections: notify() must neither block nor raise.
    notifier = WakeupNotifier("rabbit://guest:guest@127.0.0.1:1/", topic="kiln-test-nobody")
    notifier.notify()
    notifier.close()
    assert notifier.sent == 0
    assert "could not send a wake-up" in caplog.text


def test_a_cast_the_broker_cannot_take_is_a_messaging_error() -> None:
    client = EngineClient("rabbit://guest:guest@127.0.0.1:1/", topic="kiln-test-nobody", retry=0)
    try:
        with pytest.raises(MessagingError) as caught:
            client.cast(m.DeleteStack(m.Context("p"), "s1"))
    finally:
        client.close()
    assert caught.value.http_status == 500
    assert "Could not reach an engine" in caught.value.full_message
