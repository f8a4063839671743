"""Version discovery and negotiation (heat-api.md 1.3), before authentication.

``/`` and ``/versions`` answer the 300 version document; ``/v1`` (and
``/v1.0``) is moved into SCRIPT_NAME so the routes below see tenant-relative
paths; other versions get the document too. Kiln adds one thing Heat lacks:
``GET /v1`` and ``GET /v1/`` answer a 200 document describing v1 (openstacksdk
without Keystone discovers the endpoint through it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_VERSION = re.compile(r"^v(\d+)\.?(\d+)?$")
_VENDOR_ACCEPT = "application/vnd.openstack.orchestration-"


def application_url(environ: dict[str, Any]) -> str:
    scheme = environ.get("wsgi.url_scheme", "http")
    host = environ.get("HTTP_HOST")
    if not host:
        host = environ.get("SERVER_NAME", "localhost")
        port = environ.get("SERVER_PORT", "")
        if port and port not in ("80", "443"):
            host = f"{host}:{port}"
    return f"{scheme}://{host}{environ.get('SCRIPT_NAME', '')}"


def version_entry(environ: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "v1.0",
        "status": "CURRENT",
        "links": [{"rel": "self", "href": f"{application_url(environ)}/v1/"}],
    }


def _json(start_response: Callable[..., Any], status: str, doc: Any) -> list[bytes]:
    data = json.dumps(doc).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    )
    return [data]


class VersionNegotiation:
    """WSGI middleware in front of the versioned app."""

    def __init__(self, app: WSGIApp, *, v1_document: bool = True) -> None:
        self.app = app
        self.v1_document = v1_document

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "") or "/"
        segments = path.lstrip("/").split("/", 1)
        first = segments[0]
        rest = "/" + segments[1] if len(segments) > 1 else ""
        if first in ("", "versions"):
            return _json(start_response, "300 Multiple Choices", self._document(environ))
        match = _VERSION.match(first)
        if match:
            major, minor = match.group(1), match.group(2) or "0"
            if (major, minor) != ("1", "0"):
                return _json(start_response, "300 Multiple Choices", self._document(environ))
            if self.v1_document and rest in ("", "/") and environ.get("REQUEST_METHOD") == "GET":
                return _json(start_response, "200 OK", {"version": version_entry(environ)})
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/" + first
            environ["PATH_INFO"] = rest or "/"
            return self.app(environ, start_response)
        accept = environ.get("HTTP_ACCEPT", "")
        if accept.startswith(_VENDOR_ACCEPT):
            suffix = accept[len(_VENDOR_ACCEPT) :].split("+")[0]
            if _VERSION.match(suffix) and suffix not in ("v1", "v1.0"):
                return _json(start_response, "300 Multiple Choices", self._document(environ))
            return self.app(environ, start_response)
        return _not_found(environ, start_response)

    def _document(self, environ: dict[str, Any]) -> dict[str, Any]:
        return {"versions": [version_entry(environ)]}


def _not_found(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    message = "The resource could not be found.\n\n"
    if "application/json" in environ.get("HTTP_ACCEPT", ""):
        return _json(
            start_response,
            "404 Not Found",
            {"code": "404 Not Found", "title": "Not Found", "message": message},
        )
    data = f"404 Not Found\n\n{message}".encode()
    headers = [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))]
    start_response("404 Not Found", headers)
    return [data]
