"""The native Orchestration API v1 as a Falcon app (routes tenant-relative).

``create_app`` gathers the routes of every noun module; ``faults`` turns every
error into Heat's body. The WSGI pipeline in front of it (version negotiation,
request ids, limits, authentication) is built by ``kiln.api.pipeline``; this
app alone expects ``/{tenant_id}/...`` paths with a request context present.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import falcon

from kiln.api import faults
from kiln.api.native import (
    actions,
    events,
    lookup,
    resource_types,
    resources,
    services,
    snapshots,
    software_configs,
    software_deployments,
    stacks,
    templates,
)
from kiln.api.native.support import ApiDeps, RouteFactory, check_tenant, webob_response

#: The noun modules, each with ``routes(deps)``. Order matters only where
#: Falcon would see two templates as the same (it rejects that at start-up).
ROUTE_FACTORIES: list[RouteFactory] = [lookup.routes]
ROUTE_FACTORIES += [templates.routes, resource_types.routes, services.routes]
ROUTE_FACTORIES += [software_configs.routes, software_deployments.routes]
ROUTE_FACTORIES += [resources.routes, events.routes]
ROUTE_FACTORIES += [stacks.routes, actions.routes, snapshots.routes]


class TenantScope:
    """heat-api.md 1.4: a non-admin's URL tenant must be the token's project."""

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        tenant = params.get("tenant_id")
        if tenant is not None and resource is not None:
            check_tenant(req, tenant)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        if req.method == "OPTIONS" and resp.status in (200, "200 OK", falcon.HTTP_200):
            resp.status = falcon.HTTP_204
            resp.text = None
            resp.media = None


def create_app(
    deps: ApiDeps, factories: Sequence[RouteFactory] | None = None
) -> falcon.App[falcon.Request, falcon.Response]:
    middleware: list[Any] = [TenantScope(), lookup.ArnRedirect(deps)]
    app = falcon.App(middleware=middleware)
    app.req_options.keep_blank_qs_values = True
    app.req_options.auto_parse_qs_csv = False
    app.resp_options.secure_cookies_by_default = False
    for factory in factories if factories is not None else ROUTE_FACTORIES:
        for template, resource in factory(deps):
            app.add_route(template, resource)
    debug = deps.settings.debug

    def on_error(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
        status, body = faults.body_for(ex, debug=debug)
        resp.status = status
        resp.media = body

    def on_http_error(
        req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError, params: Any
    ) -> None:
        status = ex.status_code
        if isinstance(ex, falcon.HTTPRouteNotFound) or status == 404:
            webob_response(resp, req, 404, "The resource could not be found.\n\n")
            return
        if status == 405:
            resp.status = 405
            resp.media = faults.error_body(
                405,
                "HTTPMethodNotAllowed",
                "The method specified is not allowed for this resource.",
            )
            allow = dict(ex.headers or {}).get("Allow")
            if allow:
                resp.set_header("Allow", allow)
            return
        kind = {400: "HTTPBadRequest", 413: "RequestLimitExceeded"}.get(status, "HTTPError")
        resp.status = status
        resp.media = faults.error_body(status, kind, ex.description or ex.title or "")

    app.add_error_handler(Exception, on_error)
    app.add_error_handler(falcon.HTTPError, on_http_error)
    return app
