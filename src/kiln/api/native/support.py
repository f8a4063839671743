"""What every native route needs: the caller, the body, query values, URLs.

Query rules follow heat-api.md 1.11 (booleans only true/false, integers digits
only), bodies 1.8 (parsed when they look like JSON; a route that needs one and
got none is a 400), times 1.12.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

import falcon

from kiln.api.context import RequestContext, context_of
from kiln.api.faults import HTTPError, bad_request, forbidden
from kiln.rpc import messages as m
from kiln.rpc.transport import Transport

MISSING_BODY = (
    "The server could not comply with the request since it is either malformed or "
    "otherwise incorrect."
)


class Policy:
    """The policy check routes call; the real one is oslo.policy (kiln.api.policy)."""

    def enforce(
        self, rule: str, context: RequestContext, target: dict[str, Any] | None = None
    ) -> None:
        """Raise ``faults.Forbidden`` unless ``context`` may use ``rule``."""

    def denied_resource_types(self, context: RequestContext) -> tuple[str, ...]:
        """The types (or ``Prefix::*``) the policy's ``resource_types:`` rules deny."""
        return ()

    def resource_type_allowed(self, type_name: str, context: RequestContext) -> bool:
        """Whether ``context`` may see and use ``type_name`` (``resource_types:<Type>``).

        A refusal is reported as ``faults.Forbidden(type_name)``, as Heat does."""
        return True


@dataclass
class ApiSettings:
    """Heat's options that change what the API answers (heat-api.md 7)."""

    max_json_body_size: int = 1_048_576
    max_template_size: int = 524_288
    max_stacks_per_tenant: int = 512
    max_snapshots_per_stack: int = 32
    template_fetch_timeout: int = 60
    max_nested_stack_depth: int = 5
    enable_stack_abandon: bool = True
    enable_stack_adopt: bool = True
    hidden_stack_tags: Sequence[str] = ()
    debug: bool = False
    revision: str = "unknown"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ApiDeps:
    """What routes use: the engine (through RPC), the policy, the settings."""

    engine: Transport
    policy: Policy = field(default_factory=Policy)
    settings: ApiSettings = field(default_factory=ApiSettings)

    def call(self, message: Any) -> Any:
        return self.engine.call(message)


class Endpoint:
    """Base of the route classes: each holds the API's dependencies."""

    def __init__(self, deps: ApiDeps) -> None:
        self.deps = deps


# -- the caller -----------------------------------------------------------------------------
def context(req: falcon.Request) -> RequestContext:
    found = context_of(req.env)
    if found is None:  # the pipeline always sets one; a bare app in a test may not
        raise HTTPError(
            401, "HTTPUnauthorized", "The request you have made requires authentication."
        )
    return found


def check_tenant(req: falcon.Request, tenant: str) -> None:
    """heat-api.md 1.4: a non-admin's URL tenant must be the token's project."""
    ctx = context(req)
    if not ctx.is_admin and tenant != ctx.project_id:
        raise forbidden()


#: the calls that take a template: the engine checks its types against the policy
TEMPLATE_RULES = frozenset(
    {
        "stacks:create",
        "stacks:update",
        "stacks:update_patch",
        "stacks:update_no_change",
        "stacks:preview",
        "stacks:preview_update",
        "stacks:preview_update_patch",
    }
)


def authorize(deps: ApiDeps, req: falcon.Request, rule: str) -> RequestContext:
    """The caller, once ``rule`` allows it (target: the caller's project, as Heat does)."""
    ctx = context(req)
    deps.policy.enforce(rule, ctx, {"project_id": ctx.project_id})
    if rule in TEMPLATE_RULES:
        ctx = replace(ctx, denied_resource_types=deps.policy.denied_resource_types(ctx))
    return ctx


# -- bodies ---------------------------------------------------------------------------------
def body(req: falcon.Request, *, required: bool = True) -> dict[str, Any]:
    """The request's JSON object (heat-api.md 1.8); {} when absent and not required."""
    raw = req.bounded_stream.read() if (req.content_length or 0) > 0 else b""
    content_type = (req.content_type or "").split(";")[0].strip().lower()
    looks_json = raw.lstrip()[:1] == b"{"
    if raw and looks_json and content_type in ("", "application/json", "text/plain"):
        try:
            found = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise bad_request(str(exc)) from None
        if isinstance(found, dict):
            return found
    if required:
        raise bad_request(MISSING_BODY)
    return {}


# -- query values ---------------------------------------------------------------------------
def query_bool(req: falcon.Request, name: str, default: bool = False) -> bool:
    raw = req.get_param(name)
    if raw is None:
        return default
    lowered = raw.lower()
    if lowered not in ("true", "false"):
        raise bad_request(
            f'Unrecognized value "{raw}" for "{name}", acceptable values are: true, false.'
        )
    return lowered == "true"


def query_int(req: falcon.Request, name: str) -> int | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    if raw.startswith("-") and raw[1:].isdigit():
        raise bad_request(
            f"Value '{raw}' is invalid for '{name}' which only accepts non-negative integer."
        )
    if not raw.isdigit():
        raise bad_request(f"Only integer is acceptable by '{name}'.")
    return int(raw)


def query_list(req: falcon.Request, name: str) -> list[str]:
    """Every value of a repeatable parameter."""
    return list(req.get_param_as_list(name) or [])


# -- output ---------------------------------------------------------------------------------
def heat_time(when: datetime | None) -> str | None:
    if when is None:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def base_url(req: falcon.Request) -> str:
    """scheme://host[:port][/prefix] of the incoming request, with /v1 if routed under it."""
    return req.prefix


def stack_url(req: falcon.Request, tenant: str, name: str, stack_id: str) -> str:
    segments = "/".join(quote(s, safe="") for s in (tenant, "stacks", name, stack_id))
    return f"{base_url(req)}/{segments}"


def stack_links(req: falcon.Request, tenant: str, name: str, stack_id: str) -> list[dict[str, str]]:
    return [{"href": stack_url(req, tenant, name, stack_id), "rel": "self"}]


def with_query(req: falcon.Request, url: str) -> str:
    """``url`` with the request's query string, repeated keys kept."""
    pairs = [(k, v) for k, vs in _params(req) for v in vs]
    return f"{url}?{urlencode(pairs)}" if pairs else url


def _params(req: falcon.Request) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for key, value in req.params.items():
        found.append((key, value if isinstance(value, list) else [value]))
    return found


def webob_response(resp: falcon.Response, req: falcon.Request, status: int, message: str) -> None:
    """The toolkit-style body Heat's 202/302/404 have (heat-api.md 1.9)."""
    titles = {202: "Accepted", 302: "Found", 404: "Not Found", 400: "Bad Request"}
    title = titles.get(status, "")
    resp.status = status
    accept = req.get_header("Accept") or ""
    if "application/json" in accept:
        resp.media = {"code": f"{status} {title}", "title": title, "message": message}
    elif accept:
        resp.content_type = "text/html"
        heading = f"{status} {title}"
        resp.text = (
            f"<html><head><title>{heading}</title></head>"
            f"<body><h1>{heading}</h1>{message}</body></html>"
        )
    else:
        resp.content_type = "text/plain"
        resp.text = f"{status} {title}\n\n{message}\n"


def accepted(resp: falcon.Response, req: falcon.Request) -> None:
    webob_response(resp, req, 202, "The request is accepted for processing.<br /><br />\n\n\n")


def redirect(resp: falcon.Response, req: falcon.Request, location: str) -> None:
    webob_response(
        resp,
        req,
        302,
        f'The resource was found at <a href="{location}">{location}</a>;\n'
        "you should be redirected automatically.\n\n",
    )
    resp.location = location


def rpc_context(req: falcon.Request) -> m.Context:
    return context(req).rpc()


Route = tuple[str, Any]
RouteFactory = Callable[[ApiDeps], Sequence[Route]]
