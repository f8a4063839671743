"""Plain WSGI answers the middleware gives without reaching the app."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from http import HTTPStatus
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
StartResponse = Callable[..., Any]
Headers = Sequence[tuple[str, str]]


def status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def respond(
    start_response: StartResponse,
    status: int,
    data: bytes,
    content_type: str | None,
    headers: Headers = (),
    exc_info: Any = None,
) -> list[bytes]:
    found = list(headers)
    if content_type is not None:
        found.append(("Content-Type", content_type))
    found.append(("Content-Length", str(len(data))))
    if exc_info is not None:
        start_response(status_line(status), found, exc_info)
    else:
        start_response(status_line(status), found)
    return [data]


def json_response(
    start_response: StartResponse,
    status: int,
    body: Any,
    headers: Headers = (),
    exc_info: Any = None,
) -> list[bytes]:
    data = json.dumps(body).encode()
    return respond(start_response, status, data, "application/json", headers, exc_info)


def text_response(start_response: StartResponse, status: int, text: str) -> list[bytes]:
    return respond(start_response, status, text.encode(), "text/plain; charset=UTF-8")
