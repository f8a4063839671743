"""What every sandbox REST app shares: token auth, error bodies, JSON and microversions.

A service app is a Falcon app made by :func:`create_service_app` with the service's
routes. Requests carry ``X-Auth-Token`` (checked against the sandbox identity; the
scope lands in ``req.context.scope``) except the paths the service marks public
(version documents). A :class:`~kiln.cloud.api.errors.CloudError` raised by a model
becomes the service's own error body (reference simulated-cloud-api.md section 0).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import falcon

from kiln.cloud.api.errors import BadRequest, CloudError, Unauthorized
from kiln.cloud.api.scope import ORIGIN_HEADER, CloudScope, call_origin

log = logging.getLogger(__name__)

App = falcon.App[falcon.Request, falcon.Response]

# Nova and Cinder fault names by status.
_FAULTS = {
    400: "badRequest",
    401: "unauthorized",
    403: "forbidden",
    404: "itemNotFound",
    405: "badMethod",
    409: "conflictingRequest",
    413: "overLimit",
    429: "overLimit",
}
_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found"}


class TokenValidator(Protocol):
    def scope(self, token: str) -> CloudScope:
        """The scope of a valid token; raises Unauthorized otherwise."""
        ...


class IdentityTokens:
    """Validates tokens with the sandbox identity's token service, caching for a while."""

    def __init__(self, validate: Callable[[str], Any], *, ttl: float = 30.0) -> None:
        self._validate = validate  # TokenService.validate -> TokenInfo
        self._ttl = ttl
        self._cache: dict[str, tuple[float, CloudScope]] = {}
        self._lock = threading.Lock()

    def scope(self, token: str) -> CloudScope:
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(token)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            info = self._validate(token)
        except Exception as exc:  # the identity's own 401
            raise Unauthorized("The request you have made requires authentication.") from exc
        if info.project is None:
            raise Unauthorized("A project-scoped token is required.")
        scope = CloudScope(
            project_id=info.project.id,
            user_id=info.user.id,
            roles=frozenset(info.role_names),
            trust_id=info.trust.id if info.trust else None,
        )
        with self._lock:
            if len(self._cache) > 10000:
                self._cache.clear()
            self._cache[token] = (now + self._ttl, scope)
        return scope


# -- error bodies ----------------------------------------------------------------------
def error_body(style: str, status: int, message: str, kind: str | None = None) -> Any:
    """The body ``style`` (nova, cinder, neutron, glance, octavia, aodh, keystone) uses."""
    if style in ("nova", "cinder"):
        fault = _FAULTS.get(status) or ("computeFault" if style == "nova" else "volumeFault")
        return {fault: {"code": status, "message": message}}
    if style == "neutron":
        return {
            "NeutronError": {
                "type": kind or _neutron_type(status),
                "message": message,
                "detail": "",
            }
        }
    if style == "octavia":
        return {
            "faultcode": "Client" if status < 500 else "Server",
            "faultstring": message,
            "debuginfo": None,
        }
    if style == "aodh":
        return {
            "error_message": {
                "faultcode": "Client" if status < 500 else "Server",
                "faultstring": message,
                "debuginfo": None,
            }
        }
    if style == "glance":
        return f"{status} {_TITLES.get(status, 'Error')}\n\n{message}"
    return {"error": {"code": status, "title": _TITLES.get(status, "Error"), "message": message}}


def _neutron_type(status: int) -> str:
    return {
        400: "BadRequest",
        401: "NotAuthorized",
        403: "Forbidden",
        404: "NotFound",
        409: "Conflict",
    }.get(status, "HTTPInternalServerError")


def _render(resp: falcon.Response, style: str, status: int, message: str, kind: str | None) -> None:
    resp.status = falcon.code_to_http_status(status)
    body = error_body(style, status, message, kind)
    if isinstance(body, str):
        resp.content_type = "text/plain"
        resp.text = body
    else:
        resp.media = body


# -- the app ---------------------------------------------------------------------------
class _Auth:
    def __init__(self, tokens: TokenValidator, public: Callable[[str], bool]) -> None:
        self.tokens = tokens
        self.public = public

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.scope = None
        # the resource an engine makes this call for, into the call log
        req.context.origin_token = call_origin.set(req.get_header(ORIGIN_HEADER))
        if self.public(req.path):
            return
        token = req.get_header("X-Auth-Token")
        if not token:
            raise Unauthorized("The request you have made requires authentication.")
        req.context.scope = self.tokens.scope(token)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: object, succeeded: bool
    ) -> None:
        token = getattr(req.context, "origin_token", None)
        if token is not None:
            call_origin.reset(token)


def create_service_app(
    *,
    style: str,
    tokens: TokenValidator,
    routes: Iterable[tuple[str, object]],
    public: Callable[[str], bool] = lambda path: False,
) -> App:
    """A service's Falcon app: auth, error bodies in ``style``, and ``routes``.

    ``public(path)`` says which paths need no token (version documents).
    """
    app: App = falcon.App(middleware=[_Auth(tokens, public)])
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    app.resp_options.secure_cookies_by_default = False

    def cloud_error(req: falcon.Request, resp: falcon.Response, exc: CloudError, _p: Any) -> None:
        _render(resp, style, exc.http_status, exc.message, exc.kind)

    def http_error(
        req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError, _p: Any
    ) -> None:
        message = exc.description or exc.title or ""
        if exc.status_code == 404:
            message = "The resource could not be found."
        _render(resp, style, exc.status_code, message, None)
        headers = exc.headers or {}
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
        for name, value in pairs:
            resp.set_header(name, value)

    def unexpected(req: falcon.Request, resp: falcon.Response, exc: Exception, _p: Any) -> None:
        log.exception("sandbox %s: unexpected error on %s %s", style, req.method, req.path)
        _render(resp, style, 500, "An unexpected error occurred.", None)

    app.add_error_handler(Exception, unexpected)
    app.add_error_handler(falcon.HTTPError, http_error)
    app.add_error_handler(CloudError, cloud_error)
    for path, resource in routes:
        app.add_route(path, resource)
    return app


def scope_of(req: falcon.Request) -> CloudScope:
    """The caller's scope (set by the auth middleware)."""
    scope: CloudScope | None = req.context.scope
    if scope is None:
        raise Unauthorized("The request you have made requires authentication.")
    return scope


def json_body(req: falcon.Request, key: str | None = None) -> Any:
    """The parsed JSON body (``body[key]`` when a key is given); 400 when malformed."""
    raw = req.bounded_stream.read()
    if not raw:
        data: Any = {}
    else:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise BadRequest(f"Malformed request body: {exc}") from exc
    if key is None:
        return data
    if not isinstance(data, dict) or not isinstance(data.get(key), dict):
        raise BadRequest(f"Missing or invalid '{key}' in request body.")
    return data[key]


def query(req: falcon.Request) -> dict[str, str]:
    """Query parameters (the last value when repeated)."""
    out: dict[str, str] = {}
    for name, value in req.params.items():
        out[name] = value[-1] if isinstance(value, list) else value
    return out


# -- microversions -----------------------------------------------------------------------
_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def parse_version(text: str) -> tuple[int, int]:
    match = _VERSION.match(text.strip())
    if not match:
        raise BadRequest(f"Invalid API version: {text}")
    return int(match.group(1)), int(match.group(2))


def negotiate_microversion(
    req: falcon.Request,
    resp: falcon.Response,
    service: str,
    minimum: str,
    maximum: str,
    *,
    legacy_header: str | None = None,
) -> tuple[int, int]:
    """The microversion the request asks for (``OpenStack-API-Version: <service> X.Y``).

    Absent: the minimum; ``latest``: the maximum; out of range: 406; malformed: 400. The
    response echoes the version and a ``Vary`` header.
    """
    low, high = parse_version(minimum), parse_version(maximum)
    wanted: str | None = None
    header = req.get_header("OpenStack-API-Version")
    if header:
        for part in header.split(","):
            words = part.strip().split()
            if len(words) == 2 and words[0].lower() == service:
                wanted = words[1]
    if wanted is None and legacy_header:
        wanted = req.get_header(legacy_header)
    if wanted is None:
        version = low
    elif wanted.strip().lower() == "latest":
        version = high
    else:
        version = parse_version(wanted)
        if not low <= version <= high:
            text = f"{version[0]}.{version[1]}"
            raise CloudError(
                f"Version {text} is not supported by the API. Minimum is {minimum} and "
                f"maximum is {maximum}.",
                status=406,
            )
    text = f"{version[0]}.{version[1]}"
    resp.set_header("OpenStack-API-Version", f"{service} {text}")
    vary = "OpenStack-API-Version"
    if legacy_header:
        resp.set_header(legacy_header, text)
        vary += f", {legacy_header}"
    resp.set_header("Vary", vary)
    return version
