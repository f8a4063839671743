"""The explicit development mode without Keystone (``--no-auth``; heat-api.md 1.2 "noauth").

Nothing is validated. The caller's project is the first path segment after
``/v1`` (the tenant segment every native URL has), so
``/v1/demo/stacks`` acts in project ``demo``; a URL without one (``/v1/``)
uses ``DEFAULT_PROJECT``. The caller is user ``anonymous`` with roles admin,
member and reader in an admin project, so every route and rule passes
locally.

Like Heat's noauth pipeline it trusts identity headers when a client sends
them, which lets a developer try the policy as someone else:
``X-User-Id``, ``X-User-Name`` and ``X-Roles`` (comma-separated) replace the
defaults. Never run this mode where anyone else can reach it.
"""

from __future__ import annotations

from typing import Any

from kiln.api.context import ENVIRON_KEY, RequestContext
from kiln.api.middleware.request_id import ENV_GLOBAL_REQUEST_ID, ENV_REQUEST_ID
from kiln.api.middleware.responses import StartResponse, WSGIApp

USER = "anonymous"
DEFAULT_PROJECT = "anonymous"
ROLES = ("admin", "member", "reader")


class NoAuth:
    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        environ[ENVIRON_KEY] = development_context(environ)
        return self.app(environ, start_response)


def project_from_path(path: str) -> str | None:
    """The tenant segment of a path below ``/v1`` (``/demo/stacks`` -> ``demo``)."""
    first = path.lstrip("/").split("/", 1)[0]
    return first or None  # PATH_INFO is already percent-decoded by the server


def development_context(environ: dict[str, Any]) -> RequestContext:
    project = project_from_path(environ.get("PATH_INFO", "")) or DEFAULT_PROJECT
    roles_header = str(environ.get("HTTP_X_ROLES", ""))
    roles = tuple(r.strip() for r in roles_header.split(",") if r.strip()) or ROLES
    user_id = str(environ.get("HTTP_X_USER_ID", "")).strip() or USER
    global_id = environ.get(ENV_GLOBAL_REQUEST_ID)
    return RequestContext(
        project_id=project,
        user_id=user_id,
        user_name=str(environ.get("HTTP_X_USER_NAME", "")).strip() or user_id,
        project_name=project,
        roles=roles,
        auth_token=None,
        request_id=str(environ.get(ENV_REQUEST_ID, "")),
        is_admin_project=True,
        extra={"global_request_id": global_id} if global_id else {},
    )
