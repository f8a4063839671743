"""Engine calls over oslo.messaging: ``EngineClient`` (the API's side) and ``EngineServer``.

A call carries one encoded message (``kiln.rpc.codec``) to the endpoint method
``handle`` of any engine listening on the topic; the engine dispatches on the
message's type and answers ``{"reply": ...}`` or ``{"error": ...}``. Errors
travel as data, never as oslo.messaging remote exceptions, so no traceback
leaves the engine and the API gets a ``RemoteError`` with the original kind
and status. A cast goes to ``handle_cast``, which only logs a failure.
Wake-ups (``WakeupNotifier``/``WakeupListener``) live in
``kiln.rpc.wakeup`` and are re-exported here.
Imports: kiln.core, kiln.rpc, oslo.messaging.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kiln.core.errors import InternalError, KilnError
from kiln.rpc import bus, codec
from kiln.rpc.bus import oslo_messaging
from kiln.rpc.errors import MessagingError, MessagingTimeout
from kiln.rpc.wakeup import WakeupListener, WakeupNotifier

__all__ = ["DEFAULT_TOPIC", "EngineClient", "EngineServer", "WakeupListener", "WakeupNotifier"]

log = logging.getLogger(__name__)

DEFAULT_TOPIC = "kiln-engine"

Handler = Callable[[Any], Any]
Options = Mapping[str, Mapping[str, Any]]


class EngineClient:
    """The Transport protocol over oslo.messaging: ``call`` waits, ``cast`` does not.

    A call nobody answers within ``timeout`` seconds raises ``MessagingTimeout``
    (kind "MessagingTimeout", 500, as Heat answers). A handler's error is raised
    as a ``RemoteError``; a broker that cannot take the message, as a
    ``MessagingError`` (500). Thread-safe: one client serves all API threads.

    ``retry`` bounds the reconnection attempts of a send (None: until the broker
    answers, as Heat does). Even with it, oslo.messaging waits for the broker
    without bound when it opens the reply queue, at the first call.
    """

    def __init__(
        self,
        transport_url: str,
        *,
        topic: str = DEFAULT_TOPIC,
        timeout: float = 60,
        retry: int | None = None,
        options: Options | None = None,
    ) -> None:
        self.topic = topic
        self.timeout = timeout
        self._url = transport_url
        self._transport = bus.open_transport(transport_url, timeout=timeout, options=options)
        self._client = bus.rpc_client(self._transport, topic, timeout=timeout, retry=retry)

    def call(self, message: Any, *, timeout: float | None = None) -> Any:
        """Send ``message`` to one engine and return its decoded reply."""
        payload = codec.encode(message)
        wait = self.timeout if timeout is None else timeout
        client = self._client if timeout is None else self._client.prepare(timeout=timeout)
        try:
            result = client.call({}, "handle", payload=payload)
        except oslo_messaging.MessagingTimeout as exc:
            raise MessagingTimeout(
                f"Timed out after {wait:g} s waiting for an engine to answer "
                f"{type(message).__name__} on topic {self.topic!r}."
            ) from exc
        except Exception as exc:  # oslo.messaging's, and kombu's connection errors
            raise _unreachable(exc) from exc
        return _unwrap(result)

    def cast(self, message: Any) -> None:
        """Send ``message`` to one engine without waiting; its outcome is only logged."""
        payload = codec.encode(message)
        try:
            self._client.cast({}, "handle_cast", payload=payload)
        except Exception as exc:
            raise _unreachable(exc) from exc

    def close(self) -> None:
        bus.close_transport(self._transport, self._url)


class EngineServer(bus.ManagedServer):
    """Serves ``handlers`` (message type -> callable) on ``topic`` until stopped.

    Every engine process runs one; each call on the topic goes to one of them.
    ``executor`` exists for the contract's sake: only "threading" is supported
    (oslo.messaging deprecated the others). ``start``/``stop``/``wait`` and the
    context manager come from ``ManagedServer``.
    """

    def __init__(
        self,
        transport_url: str,
        handlers: Mapping[type, Handler],
        *,
        topic: str = DEFAULT_TOPIC,
        server_name: str | None = None,
        executor: str = "threading",
        options: Options | None = None,
    ) -> None:
        if executor != "threading":
            raise ValueError(f"unsupported executor {executor!r}: only 'threading'")
        super().__init__(
            transport_url,
            [_EngineEndpoint(handlers)],
            topic=topic,
            server_name=server_name or bus.unique_server_name("engine"),
            options=options,
        )


class _EngineEndpoint:
    """The object oslo.messaging dispatches to; its public methods are the RPC API."""

    target = oslo_messaging.Target(version="1.0")

    def __init__(self, handlers: Mapping[type, Handler]) -> None:
        self._handlers = dict(handlers)

    def handle(self, ctxt: Any, payload: Any) -> dict[str, Any]:
        try:
            return {"reply": codec.encode(self._dispatch(payload))}
        except KilnError as exc:
            log.debug("engine call failed: %s (%s)", exc.full_message, exc.kind)
            return {"error": codec.encode_error(exc)}
        except Exception as exc:  # a bug: logged with its traceback, sent as InternalError
            return {"error": codec.encode_error(exc)}

    def handle_cast(self, ctxt: Any, payload: Any) -> None:
        try:
            self._dispatch(payload)
        except KilnError as exc:  # nobody waits for this answer: say it here
            log.warning("engine cast failed: %s (%s)", exc.full_message, exc.kind)
        except Exception as exc:
            codec.encode_error(exc)  # logs the traceback with a reference

    def _dispatch(self, payload: Any) -> Any:
        message = codec.decode(payload)
        handler = self._handlers.get(type(message))
        if handler is None:
            raise InternalError(f"no engine handler for {type(message).__name__}")
        return handler(message)


def _unreachable(exc: Exception) -> MessagingError:
    return MessagingError(type(exc).__name__, f"Could not reach an engine: {exc}")


def _unwrap(result: Any) -> Any:
    if not isinstance(result, dict):
        raise InternalError(f"an engine sent a malformed answer ({type(result).__name__})")
    if "error" in result:
        raise codec.decode_error(result["error"])
    if "reply" not in result:
        raise InternalError("an engine sent an answer with neither reply nor error")
    return codec.decode(result["reply"])
