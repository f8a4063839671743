"""Errors that crossed the message bus, and the bus's own failures.

An engine's error reaches the API as a ``RemoteError`` that answers to the same
``kind``, ``http_status``, ``full_message``, ``path`` and ``location`` as the
original, so the API renders Heat's error body exactly as for a local error.
Imports: kiln.core only.
"""

from __future__ import annotations

from collections.abc import Sequence

from kiln.core.errors import KilnError
from kiln.core.paths import Location, Path


class RemoteError(KilnError):
    """An error raised by a handler on the other side of the bus, rebuilt here."""

    def __init__(
        self,
        kind: str,
        http_status: int,
        message: str,
        *,
        path: Path = (),
        location: Location | None = None,
        category: str | None = None,
        errors: Sequence[RemoteError] = (),
        full_message: str | None = None,
    ) -> None:
        super().__init__(message, path=path, location=location, category=category)
        self._kind = kind
        self._http_status = http_status
        #: The sub-errors of a remote ValidationFailed, in order; empty otherwise.
        self.errors: list[RemoteError] = list(errors)
        # Only kept when the sender rendered it differently from our fields.
        self._full_message = full_message

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def http_status(self) -> int:  # type: ignore[override]  # per instance, not per class
        return self._http_status

    @property
    def full_message(self) -> str:
        if self._full_message is not None:
            return self._full_message
        return super().full_message

    def to_dict(self) -> dict[str, object]:
        if self.errors:  # the shape ValidationFailed.to_dict gives
            return {
                "type": self.kind,
                "message": self.full_message,
                "errors": [e.to_dict() for e in self.errors],
            }
        return super().to_dict()

    def __repr__(self) -> str:
        return f"RemoteError({self.kind!r}, {self.http_status}, {self.full_message!r})"


class MessagingTimeout(KilnError):
    """No engine answered a call in time.

    Heat lets oslo.messaging's ``MessagingTimeout`` reach its fault middleware,
    which answers 500 with that type; Kiln keeps the kind and status so clients
    see what they see from Heat.
    """


class MessagingError(KilnError):
    """The bus failed to deliver a call (broker unreachable, delivery refused)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self._kind = kind

    @property
    def kind(self) -> str:
        return self._kind


class CodecError(KilnError):
    """A value cannot be encoded for the bus, or a payload cannot be decoded: a bug."""

    @property
    def kind(self) -> str:
        return "InternalError"
