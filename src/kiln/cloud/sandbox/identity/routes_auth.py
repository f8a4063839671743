"""Version discovery and the ``/v3/auth`` routes: issue, validate and revoke tokens."""

from __future__ import annotations

import falcon

from kiln.cloud.sandbox.identity.authenticate import authenticate
from kiln.cloud.sandbox.identity.documents import (
    collection,
    domain_doc,
    project_doc,
    token_doc,
    version_entry,
)
from kiln.cloud.sandbox.identity.errors import Forbidden, NotFound, Unauthorized, ValidationError
from kiln.cloud.sandbox.identity.tokens import TokenInfo
from kiln.cloud.sandbox.identity.web import IdentityService, flag, read_json


class Versions:
    """``GET /``: the list of API versions (300 Multiple Choices, as Keystone answers)."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_300
        resp.media = {"versions": {"values": [version_entry(self.service.base_url(req))]}}


class Version:
    """``GET /v3``: this version's document."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"version": version_entry(self.service.base_url(req))}


class Tokens:
    """``/v3/auth/tokens``."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        service = self.service
        token_id, info = authenticate(service.store, service.tokens, read_json(req))
        resp.status = falcon.HTTP_201
        resp.set_header("X-Subject-Token", token_id)
        resp.media = self._document(req, info)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        token_id, info = self._subject(req)
        resp.set_header("X-Subject-Token", token_id)
        resp.media = self._document(req, info)

    def on_head(self, req: falcon.Request, resp: falcon.Response) -> None:
        token_id, _info = self._subject(req)
        resp.set_header("X-Subject-Token", token_id)

    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        _token_id, info = self._subject(req)
        self.service.tokens.revoke(info)
        resp.status = falcon.HTTP_204

    def _document(self, req: falcon.Request, info: TokenInfo) -> dict[str, object]:
        catalog = None
        if not flag(req, "nocatalog"):
            project_id = info.project.id if info.project else None
            catalog = self.service.catalog_for(req, project_id)
        return token_doc(info, catalog)

    def _subject(self, req: falcon.Request) -> tuple[str, TokenInfo]:
        """The token named by X-Subject-Token, which the caller may look at; 404 if invalid."""
        caller = self.service.caller(req)
        token_id = req.get_header("X-Subject-Token")
        if not token_id:
            raise ValidationError("X-Subject-Token header is required.")
        allow_expired = req.method == "GET" and flag(req, "allow_expired")
        try:
            subject = self.service.tokens.validate(token_id, allow_expired=allow_expired)
        except Unauthorized as exc:
            raise NotFound(f"Could not find token: {exc.message}") from exc
        allowed = caller.is_admin or "service" in caller.role_names
        if not (allowed or caller.user.id == subject.user.id):
            raise Forbidden("You are not authorized to perform the requested action.")
        return token_id, subject


class AuthCatalog:
    """``GET /v3/auth/catalog``: the catalog of the caller's token."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        if caller.project is None and caller.domain is None:
            raise Forbidden("The catalog needs a scoped token.")
        project_id = caller.project.id if caller.project else None
        base = self.service.base_url(req)
        resp.media = {
            "catalog": self.service.catalog_for(req, project_id),
            "links": {"self": f"{base}/v3/auth/catalog", "previous": None, "next": None},
        }


class AuthProjects:
    """``GET /v3/auth/projects``: the projects the caller has a role on."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        store = self.service.store
        ids = {
            a.target_id
            for a in store.list_assignments(user_id=caller.user.id, target_type="project")
        }
        projects = [p for p in store.list_projects() if p.id in ids and p.enabled]
        base = self.service.base_url(req)
        resp.media = collection(
            "projects", (project_doc(p, base) for p in projects), base, "auth/projects"
        )


class AuthDomains:
    """``GET /v3/auth/domains``: the domains the caller has a role on."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        store = self.service.store
        ids = {
            a.target_id
            for a in store.list_assignments(user_id=caller.user.id, target_type="domain")
        }
        domains = [d for d in store.list_domains() if d.id in ids and d.enabled]
        base = self.service.base_url(req)
        resp.media = collection(
            "domains", (domain_doc(d, base) for d in domains), base, "auth/domains"
        )
