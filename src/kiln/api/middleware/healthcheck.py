"""``/healthcheck`` (heat-api.md 1.1), answered before version negotiation and auth.

Like oslo.middleware's healthcheck with its ``disable_by_file`` backend: GET
answers 200 ``OK`` (text), HEAD 204; while the file at
``disable_by_file_path`` exists both answer 503 (GET with ``DISABLED BY
FILE``), so an operator can take a node out of a load balancer's pool by
touching a file.
"""

from __future__ import annotations

import os
from typing import Any

from kiln.api.middleware.responses import StartResponse, WSGIApp, respond, text_response

PATH = "/healthcheck"


class Healthcheck:
    def __init__(self, app: WSGIApp, *, disable_by_file_path: str | None = None) -> None:
        self.app = app
        self.disable_by_file_path = disable_by_file_path

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        if environ.get("PATH_INFO") != PATH:
            return self.app(environ, start_response)
        healthy = not (self.disable_by_file_path and os.path.exists(self.disable_by_file_path))
        if environ.get("REQUEST_METHOD") == "HEAD":
            if healthy:
                return respond(start_response, 204, b"", None)
            return respond(start_response, 503, b"", "text/plain; charset=UTF-8")
        if healthy:
            return text_response(start_response, 200, "OK")
        return text_response(start_response, 503, "DISABLED BY FILE")
