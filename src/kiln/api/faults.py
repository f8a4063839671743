"""Heat's error bodies (heat-api.md 4.1, 4.2) for everything the API raises.

Every failure becomes ``{"code", "title", "explanation", "error": {"type",
"message", "traceback"}}`` with the status of the error's ``http_status``.
Errors from the engine arrive as KilnErrors (in process, or decoded from the
bus) that carry Heat's exception name in ``kind``. An unexpected exception is
a 500 with a generic message; its traceback goes to the log, and to the body
only in debug mode.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from kiln.core.errors import KilnError

log = logging.getLogger(__name__)

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Request Entity Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

_COMPLY = (
    "The server could not comply with the request since it is either malformed or "
    "otherwise incorrect."
)
EXPLANATIONS = {
    400: _COMPLY,
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: _COMPLY,
    409: "There was a conflict when trying to complete your request.",
    500: "The server has either erred or is incapable of performing the requested operation.",
    503: "The server is currently unavailable. Please try again at a later time.",
}

#: The message of an unexpected error: nothing about its insides leaks.
GENERIC_500 = "Unexpected error while processing the request."


class HTTPError(KilnError):
    """An error raised by the API layer itself, named like webob's classes."""

    def __init__(self, status: int, kind: str, message: str | None = None) -> None:
        super().__init__(message or EXPLANATIONS.get(status, TITLES.get(status, "Error")))
        self.status = status
        self._kind = kind

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def http_status(self) -> int:  # type: ignore[override]
        return self.status


def bad_request(message: str = _COMPLY) -> HTTPError:
    return HTTPError(400, "HTTPBadRequest", message)


def forbidden(message: str = "Access was denied to this resource.") -> HTTPError:
    return HTTPError(403, "HTTPForbidden", message)


def not_found(message: str = "The resource could not be found.") -> HTTPError:
    return HTTPError(404, "HTTPNotFound", message)


class Forbidden(HTTPError):
    """A policy denial (Heat's ``Forbidden``)."""

    def __init__(self, rule: str) -> None:
        super().__init__(403, "Forbidden", f"You are not authorized to use {rule}.")
        self.rule = rule


def error_body(status: int, kind: str, message: str, trace: str | None = None) -> dict[str, Any]:
    return {
        "code": status,
        "title": TITLES.get(status, "Error"),
        "explanation": EXPLANATIONS.get(status, ""),
        "error": {"type": kind, "message": message, "traceback": trace},
    }


def body_for(exc: BaseException, *, debug: bool = False) -> tuple[int, dict[str, Any]]:
    """The status and Heat error body for ``exc``."""
    if isinstance(exc, KilnError):
        status = int(exc.http_status)
        trace = "".join(traceback.format_exception(exc)) if debug else None
        body = error_body(status, exc.kind, exc.full_message, trace)
        if exc.location is not None or getattr(exc, "errors", None):
            # Kiln's additions: where in the template, and every error of a batch.
            details = exc.to_dict()
            body["error"]["details"] = {
                k: v for k, v in details.items() if k in ("path", "location", "errors")
            }
        return status, body
    if isinstance(exc, TypeError):
        # Heat: a TypeError reaching the API (a missing or mistyped body) is a 400.
        log.warning("TypeError answered as 400", exc_info=exc)
        return 400, error_body(400, "HTTPBadRequest", _COMPLY)
    log.error("unexpected error", exc_info=exc)
    trace = "".join(traceback.format_exception(exc)) if debug else None
    return 500, error_body(500, "HTTPInternalServerError", GENERIC_500, trace)
