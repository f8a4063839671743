"""``max_json_body_size`` (heat-api.md 1.8, 7): a larger body is a 400 RequestLimitExceeded.

A declared ``Content-Length`` over the limit is refused before the body is
read. A chunked body (no length) is read here up to one byte past the limit:
over it, the same 400; within it, the body is handed on as an ordinary one
with its ``Content-Length`` set, so the app reads it like any other. Heat
reports sizes in bytes; for a chunked body the size given is what was read
before giving up (a lower bound).

The answer is Heat's error body with status 400, never 413 (4.2: clients and
tests expect 400).
"""

from __future__ import annotations

import io
from typing import Any

from kiln.api import faults
from kiln.api.middleware.responses import StartResponse, WSGIApp, json_response
from kiln.core.errors import RequestLimitExceeded

DEFAULT_MAX_JSON_BODY_SIZE = 1_048_576
_READ_CHUNK = 65_536


def too_large(size: int, limit: int) -> RequestLimitExceeded:
    return RequestLimitExceeded(
        f"Request limit exceeded: JSON body size ({size} bytes) exceeds maximum "
        f"allowed size ({limit} bytes)."
    )


class BodyLimit:
    def __init__(self, app: WSGIApp, *, max_size: int = DEFAULT_MAX_JSON_BODY_SIZE) -> None:
        self.app = app
        self.max_size = max_size

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        declared = (environ.get("CONTENT_LENGTH") or "").strip()
        if declared:
            if not declared.isdigit():
                return _refuse(start_response, faults.bad_request("Invalid Content-Length."))
            if int(declared) > self.max_size:
                return _refuse(start_response, too_large(int(declared), self.max_size))
        elif "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            data = _read_at_most(environ["wsgi.input"], self.max_size + 1)
            if len(data) > self.max_size:
                return _refuse(start_response, too_large(len(data), self.max_size))
            environ["wsgi.input"] = io.BytesIO(data)
            environ["CONTENT_LENGTH"] = str(len(data))
            del environ["HTTP_TRANSFER_ENCODING"]
        return self.app(environ, start_response)


def _read_at_most(stream: Any, limit: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    while total < limit:
        chunk = stream.read(min(_READ_CHUNK, limit - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _refuse(start_response: StartResponse, error: Exception) -> list[bytes]:
    status, body = faults.body_for(error)
    # The unread body is the server's to drain or to close on (PEP 3333 keeps
    # hop-by-hop headers such as Connection out of the application's hands).
    return json_response(start_response, status, body)
