"""Stack lookups: name-only or id-only URLs redirect to the canonical one (heat-api.md 1.5).

Any method on ``/stacks/{identity}`` and the listed sub-paths answer 302 with
an absolute Location that keeps the query string. An ARN names the stack
itself, so it redirects without asking the engine.
"""

from __future__ import annotations

from urllib.parse import unquote

import falcon

from kiln.api.native.support import (
    ApiDeps,
    Endpoint,
    Route,
    authorize,
    check_tenant,
    redirect,
    stack_url,
    with_query,
)
from kiln.rpc import messages as m

GET_SUBS = ("resources", "events", "template", "actions", "environment", "files")
POST_SUBS = ("resources", "events", "template", "actions")


def parse_arn(text: str) -> tuple[str, str, str, str] | None:
    """(tenant, name, id, rest) of ``arn:openstack:heat::T:stacks/N/I[/rest]``."""
    fields = text.split(":", 5)
    if len(fields) < 6 or fields[:3] != ["arn", "openstack", "heat"]:
        return None
    tail = fields[5].split("/")
    if len(tail) < 3 or tail[0] != "stacks":
        return None
    rest = "/".join(tail[3:])
    return unquote(fields[4]), unquote(tail[1]), unquote(tail[2]), rest


class StackLookup(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, stack_name: str
    ) -> None:
        # ``{stack_name}``: the variable every /stacks/ template shares (Falcon insists).
        _lookup(self.deps, req, resp, stack_name, None)

    on_post = on_put = on_patch = on_delete = on_get


def redirect_if_sub(
    deps: ApiDeps,
    req: falcon.Request,
    resp: falcon.Response,
    tenant_id: str,
    identity: str,
    second: str,
) -> bool:
    """For ``/stacks/{a}/{b}`` routes: when ``b`` is a lookup sub-path (``resources``,
    ``events``, ...) answer the redirect and return True; the caller handles the
    canonical ``{name}/{id}`` URL otherwise. Falcon cannot tell the two apart by
    template, and neither could Heat: its lookup routes simply come first."""
    allowed = GET_SUBS if req.method == "GET" else POST_SUBS if req.method == "POST" else ()
    if second not in allowed:
        return False
    _lookup(deps, req, resp, identity, second)
    return True


class ArnRedirect:
    """Falcon middleware: ARNs contain '/', so no route template can hold one."""

    PREFIX = "/stacks/arn:openstack:heat::"

    def __init__(self, deps: ApiDeps) -> None:
        self.deps = deps

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        path = req.path
        at = path.find(self.PREFIX)
        if at <= 0 or "/" in path[1:at]:
            return
        check_tenant(req, path[1:at])
        _lookup(self.deps, req, resp, path[at + len("/stacks/") :], None)
        resp.complete = True


def _lookup(
    deps: ApiDeps,
    req: falcon.Request,
    resp: falcon.Response,
    identity: str,
    sub: str | None,
) -> None:
    ctx = authorize(deps, req, "stacks:lookup")
    arn = parse_arn(identity) if identity.startswith("arn:") else None
    if arn is not None:
        tenant, name, stack_id, rest = arn
        location = stack_url(req, tenant, name, stack_id)
        if rest:
            location += "/" + rest
    else:
        ref = deps.call(m.LookupStack(ctx.rpc(), identity))
        location = stack_url(req, ref.project_id, ref.name, ref.id)
    if sub:
        location += "/" + sub
    redirect(resp, req, with_query(req, location))


def routes(deps: ApiDeps) -> list[Route]:
    return [("/{tenant_id}/stacks/{stack_name}", StackLookup(deps))]
