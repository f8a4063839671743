"""The outermost catch-all (heat-api.md 1.2 "faultwrap", 4.1).

The Falcon app renders its own errors; this catches what escapes everything
else (a middleware's bug, keystonemiddleware failing in an unexpected way, an
app that raises while producing its first body chunk) and answers Heat's error
body instead of the server's bare 500. A ``KilnError`` keeps its status and
type; anything else is a 500 with a generic message. The traceback goes to the
log, and into the body only in debug mode.

Once the first body chunk has left, the status line has too: a later failure
can only be logged and the connection cut, which the server does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from kiln.api import faults
from kiln.api.middleware.request_id import ENV_REQUEST_ID
from kiln.api.middleware.responses import StartResponse, WSGIApp, json_response

log = logging.getLogger(__name__)


class FaultWrap:
    def __init__(self, app: WSGIApp, *, debug: bool = False) -> None:
        self.app = app
        self.debug = debug

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        result: Iterable[bytes] | None = None
        try:
            result = self.app(environ, start_response)
            chunks = iter(result)
            first = next(chunks, None)
        except Exception as exc:
            _close(result)
            return self._fault(environ, start_response, exc)
        return _Body(first, chunks, result)

    def _fault(
        self, environ: dict[str, Any], start_response: StartResponse, exc: Exception
    ) -> list[bytes]:
        # body_for logs unexpected errors with their traceback; this ties them to the request.
        log.info("request %s failed outside the app: %r", environ.get(ENV_REQUEST_ID), exc)
        status, body = faults.body_for(exc, debug=self.debug)
        # exc_info lets the server replace a status line the app had already started.
        return json_response(start_response, status, body, exc_info=sys.exc_info())


class _Body:
    """The app's body with its first chunk already read; closes the original."""

    def __init__(self, first: bytes | None, rest: Iterator[bytes], original: Any) -> None:
        self._first = first
        self._rest = rest
        self._original = original

    def __iter__(self) -> Iterator[bytes]:
        if self._first is not None:
            first, self._first = self._first, None
            yield first
        yield from self._rest

    def close(self) -> None:
        _close(self._original)


def _close(result: Any) -> None:
    close = getattr(result, "close", None)
    if close is not None:
        close()
