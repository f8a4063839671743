"""Request ids (heat-api.md 1.6, 1.7): one ``req-<uuid4>`` per request, on every response.

The id is made before anything else runs, so errors, redirects, version
documents and 401s all carry it. A caller may send its own id in
``X-Openstack-Request-Id`` to tie a chain of services together (the *global*
request id); it is kept only in the ``req-<uuid>`` form (anything else is
ignored, as oslo.middleware does) and the response still carries the local id.
Both go into the WSGI environ under oslo.middleware's keys, where the context
middleware reads them.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from kiln.api.middleware.responses import StartResponse, WSGIApp

HEADER = "X-Openstack-Request-Id"
ENV_REQUEST_ID = "openstack.request_id"
ENV_GLOBAL_REQUEST_ID = "openstack.global_request_id"

_GLOBAL_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def new_request_id() -> str:
    return f"req-{uuid.uuid4()}"


def global_request_id(value: str | None) -> str | None:
    """The inbound id when it has the ``req-<uuid>`` form, else None."""
    candidate = (value or "").strip().lower()
    return candidate if _GLOBAL_ID.match(candidate) else None


class RequestId:
    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        request_id = new_request_id()
        environ[ENV_REQUEST_ID] = request_id
        inbound = global_request_id(environ.get("HTTP_X_OPENSTACK_REQUEST_ID"))
        if inbound is not None:
            environ[ENV_GLOBAL_REQUEST_ID] = inbound
        else:
            environ.pop(ENV_GLOBAL_REQUEST_ID, None)
        lowered = HEADER.lower()

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers = [(k, v) for k, v in headers if k.lower() != lowered]
            headers.append((HEADER, request_id))
            if exc_info is not None:
                return start_response(status, headers, exc_info)
            return start_response(status, headers)

        return self.app(environ, start)
