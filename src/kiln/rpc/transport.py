"""Delivering messages to handlers: in-process now, oslo.messaging later.

``call`` returns the handler's reply; errors raised by the handler (KilnError)
reach the caller unchanged, so the API maps them to Heat's error bodies.
With ``serialize=True`` every message, reply and error goes through the wire
codec on the way, exactly as over oslo.messaging (``kiln.rpc.oslo_transport``),
without a bus: errors then arrive as ``RemoteError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kiln.core.errors import InternalError
from kiln.rpc import codec

Handler = Callable[[Any], Any]


class Transport(Protocol):
    def call(self, message: Any) -> Any:
        """Deliver ``message`` and wait for the reply."""
        ...


class InProcessTransport:
    """Calls the handler registered for the message's type, in this process."""

    def __init__(self, handlers: Mapping[type, Handler], *, serialize: bool = False) -> None:
        self._handlers = dict(handlers)
        self._serialize = serialize

    def call(self, message: Any) -> Any:
        if self._serialize:
            return self._call_serialized(message)
        handler = self._handlers.get(type(message))
        if handler is None:
            raise InternalError(f"no engine handler for {type(message).__name__}")
        return handler(message)

    def _call_serialized(self, message: Any) -> Any:
        decoded = codec.decode(codec.encode(message))
        try:
            handler = self._handlers.get(type(decoded))
            if handler is None:
                raise InternalError(f"no engine handler for {type(decoded).__name__}")
            reply = handler(decoded)
        except Exception as exc:
            raise codec.decode_error(codec.encode_error(exc)) from None
        return codec.decode(codec.encode(reply))
