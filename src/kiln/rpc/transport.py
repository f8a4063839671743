"""Delivering messages to handlers: in-process now, oslo.messaging later.

``call`` returns the handler's reply; errors raised by the handler (KilnError)
reach the caller unchanged, so the API maps them to Heat's error bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kiln.core.errors import InternalError

Handler = Callable[[Any], Any]


class Transport(Protocol):
    def call(self, message: Any) -> Any:
        """Deliver ``message`` and wait for the reply."""
        ...


class InProcessTransport:
    """Calls the handler registered for the message's type, in this process."""

    def __init__(self, handlers: Mapping[type, Handler]) -> None:
        self._handlers = dict(handlers)

    def call(self, message: Any) -> Any:
        handler = self._handlers.get(type(message))
        if handler is None:
            raise InternalError(f"no engine handler for {type(message).__name__}")
        return handler(message)
