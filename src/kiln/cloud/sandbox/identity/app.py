"""The identity service as a Falcon WSGI app.

Every URL it returns (version links, ``links``, the identity entry of the catalog) is built
from the incoming request, unless a public URL is configured; catalog templates may use
``%(host)s`` to follow the host the client used.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import falcon

from kiln.cloud.sandbox.identity import routes_admin as admin
from kiln.cloud.sandbox.identity import routes_auth as auth
from kiln.cloud.sandbox.identity import routes_ec2 as ec2
from kiln.cloud.sandbox.identity import routes_roles as roles
from kiln.cloud.sandbox.identity import routes_trusts as trusts
from kiln.cloud.sandbox.identity.catalog import (
    REGION,
    CatalogEntry,
    render_endpoints,
    render_services,
)
from kiln.cloud.sandbox.identity.documents import collection
from kiln.cloud.sandbox.identity.errors import IdentityError, NotFound
from kiln.cloud.sandbox.identity.store import IdentityStore
from kiln.cloud.sandbox.identity.tokens import DEFAULT_LIFETIME, TokenService
from kiln.cloud.sandbox.identity.web import IdentityService

log = logging.getLogger(__name__)


def create_identity_app(
    store: IdentityStore,
    *,
    catalog: Iterable[CatalogEntry] = (),
    public_url: str | None = None,
    token_lifetime: timedelta = DEFAULT_LIFETIME,
) -> falcon.App[falcon.Request, falcon.Response]:
    """The Keystone v3 subset over ``store``.

    ``catalog``: the services every project-scoped token lists (identity itself is added
    unless given). ``public_url``: the base URL clients use, when it differs from what
    requests show (a proxy in front); by default each response uses the request's own.
    """
    service = IdentityService(
        store=store,
        tokens=TokenService(store, lifetime=token_lifetime),
        catalog=tuple(catalog),
        public_url=public_url,
    )
    app = falcon.App()
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    app.add_error_handler(Exception, _unexpected_error)
    app.add_error_handler(falcon.HTTPError, _falcon_error)
    app.add_error_handler(IdentityError, _make_identity_error_handler(service))
    _add_routes(app, service)
    return app


def _add_routes(app: falcon.App[falcon.Request, falcon.Response], service: IdentityService) -> None:
    routes: list[tuple[str, object]] = [
        ("/", auth.Versions(service)),
        ("/v3", auth.Version(service)),
        ("/v3/auth/tokens", auth.Tokens(service)),
        ("/v3/auth/catalog", auth.AuthCatalog(service)),
        ("/v3/auth/projects", auth.AuthProjects(service)),
        ("/v3/auth/domains", auth.AuthDomains(service)),
        ("/v3/domains", admin.Domains(service)),
        ("/v3/domains/{domain_id}", admin.Domain(service)),
        ("/v3/projects", admin.Projects(service)),
        ("/v3/projects/{project_id}", admin.Project(service)),
        ("/v3/users", admin.Users(service)),
        ("/v3/users/{user_id}", admin.User(service)),
        ("/v3/users/{user_id}/projects", admin.UserProjects(service)),
        ("/v3/roles", roles.Roles(service)),
        ("/v3/roles/{role_id}", roles.Role(service)),
        ("/v3/role_assignments", roles.RoleAssignments(service)),
        ("/v3/OS-TRUST/trusts", trusts.Trusts(service)),
        ("/v3/OS-TRUST/trusts/{trust_id}", trusts.TrustItem(service)),
        ("/v3/OS-TRUST/trusts/{trust_id}/roles", trusts.TrustRoles(service)),
        ("/v3/credentials", ec2.Credentials(service)),
        ("/v3/credentials/{credential_id}", ec2.CredentialItem(service)),
        ("/v3/users/{user_id}/credentials/OS-EC2", ec2.UserEc2Credentials(service)),
        ("/v3/users/{user_id}/credentials/OS-EC2/{access}", ec2.UserEc2Credential(service)),
        ("/v3/ec2tokens", ec2.Ec2Tokens(service)),
        ("/v3/services", CatalogList(service, "services")),
        ("/v3/endpoints", CatalogList(service, "endpoints")),
        ("/v3/regions", CatalogList(service, "regions")),
    ]
    for target in ("project", "domain"):
        prefix = f"/v3/{target}s/{{{target}_id}}/users/{{user_id}}/roles"
        routes.append((prefix, roles.TargetUserRoles(service, target)))
        routes.append((prefix + "/{role_id}", roles.Grant(service, target)))
    for path, resource in routes:
        app.add_route(path, resource)


class CatalogList:
    """``GET /v3/services|endpoints|regions``: the fixed catalog, read-only."""

    def __init__(self, service: IdentityService, kind: str) -> None:
        self.service = service
        self.kind = kind

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.service.caller(req)
        entries = self.service.catalog_entries(req)
        items: list[dict[str, Any]]
        if self.kind == "services":
            items = render_services(entries)
            wanted_type = req.params.get("type")
            if isinstance(wanted_type, str):
                items = [i for i in items if i["type"] == wanted_type]
        elif self.kind == "endpoints":
            items = render_endpoints(entries, host=self.service.host(req))
            for key in ("interface", "service_id"):
                value = req.params.get(key)
                if isinstance(value, str):
                    items = [i for i in items if i[key] == value]
        else:
            items = [{"id": REGION, "description": "", "parent_region_id": None}]
        base = self.service.base_url(req)
        resp.media = collection(self.kind, items, base, self.kind)


def _make_identity_error_handler(service: IdentityService) -> Any:
    def handle(
        req: falcon.Request, resp: falcon.Response, exc: IdentityError, _params: Any
    ) -> None:
        resp.status = falcon.code_to_http_status(exc.http_status)
        resp.media = exc.body()
        if exc.http_status == 401:
            resp.set_header("WWW-Authenticate", f'Keystone uri="{service.base_url(req)}"')

    return handle


def _falcon_error(
    req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError, _params: Any
) -> None:
    """Falcon's own errors (unknown path 404, 405, bad header) in Keystone's body."""
    code = exc.status_code
    title = exc.title or ""
    message = exc.description or title
    if code == 404:
        message = NotFound("The resource could not be found.").message
    resp.status = falcon.code_to_http_status(code)
    resp.media = {"error": {"code": code, "title": title, "message": message}}
    headers = exc.headers or {}
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers)
    for name, value in pairs:
        resp.set_header(name, value)


def _unexpected_error(
    req: falcon.Request, resp: falcon.Response, exc: Exception, _params: Any
) -> None:
    log.exception("identity: unexpected error on %s %s", req.method, req.path)
    resp.status = falcon.HTTP_500
    resp.media = {
        "error": {
            "code": 500,
            "title": "Internal Server Error",
            "message": "An unexpected error prevented the server from fulfilling your request.",
        }
    }
