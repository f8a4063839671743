"""Domains, projects and users: what ``openstack project|user ...`` and Heat use.

Listing and changing them needs a cloud admin (admin on a project), or an admin of their
domain (a domain-scoped token with the admin role: Heat's stack domain admin) for the
projects and users of that domain only. A user may read itself and a token may read its
own project.
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.sandbox.identity.documents import (
    collection,
    domain_doc,
    project_doc,
    user_doc,
)
from kiln.cloud.sandbox.identity.errors import Forbidden, ValidationError
from kiln.cloud.sandbox.identity.records import Project as ProjectRecord
from kiln.cloud.sandbox.identity.records import User as UserRecord
from kiln.cloud.sandbox.identity.tokens import TokenInfo
from kiln.cloud.sandbox.identity.web import (
    FORBIDDEN,
    IdentityService,
    field,
    flag,
    name_field,
    query,
    read_json,
    require_domain,
)


def _default_domain(caller: TokenInfo) -> str:
    """Where a new project or user goes when the body names no domain."""
    return caller.domain.id if caller.domain is not None else "default"


def _enabled_filter(req: falcon.Request) -> bool | None:
    return flag(req, "enabled") if "enabled" in req.params else None


def _listed_domain(service: IdentityService, req: falcon.Request) -> str | None:
    """The ``domain_id`` filter of a project or user list: a domain admin lists its own
    domain only (403 when it asks for another); a cloud admin lists what it asks for."""
    caller = service.caller(req)
    wanted = query(req, "domain_id")
    if caller.is_admin:
        return wanted
    domain_id = wanted or (caller.domain.id if caller.domain is not None else "")
    require_domain(caller, domain_id)
    return domain_id


def _managed_project(caller: TokenInfo, service: IdentityService, project_id: str) -> ProjectRecord:
    """A project the caller may change (403 before 404 for callers who manage no domain)."""
    if not (caller.is_admin or caller.domain is not None):
        raise Forbidden(FORBIDDEN)
    project = service.store.get_project(project_id)
    require_domain(caller, project.domain_id)
    return project


def _managed_user(caller: TokenInfo, service: IdentityService, user_id: str) -> UserRecord:
    """A user the caller may change (403 before 404 for callers who manage no domain)."""
    if not (caller.is_admin or caller.domain is not None):
        raise Forbidden(FORBIDDEN)
    user = service.store.get_user(user_id)
    require_domain(caller, user.domain_id)
    return user


class Domains:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.service.caller(req)
        base = self.service.base_url(req)
        domains = self.service.store.list_domains(name=query(req, "name"))
        resp.media = collection("domains", (domain_doc(d, base) for d in domains), base, "domains")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.service.admin(req)
        ref = field(read_json(req), "domain", dict)
        domain = self.service.store.create_domain(
            name_field(ref),
            description=field(ref, "description", str, required=False) or "",
            enabled=field(ref, "enabled", bool, required=False) is not False,
        )
        resp.status = falcon.HTTP_201
        resp.media = {"domain": domain_doc(domain, self.service.base_url(req))}


class Domain:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, domain_id: str) -> None:
        self.service.caller(req)
        domain = self.service.store.get_domain(domain_id)
        resp.media = {"domain": domain_doc(domain, self.service.base_url(req))}


class Projects:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        domain_id = _listed_domain(self.service, req)
        base = self.service.base_url(req)
        projects = self.service.store.list_projects(
            name=query(req, "name"),
            domain_id=domain_id,
            parent_id=query(req, "parent_id"),
            enabled=_enabled_filter(req),
        )
        resp.media = collection(
            "projects", (project_doc(p, base) for p in projects), base, "projects"
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        ref = field(read_json(req), "project", dict)
        domain_id = field(ref, "domain_id", str, required=False) or _default_domain(caller)
        require_domain(caller, domain_id)
        tags = field(ref, "tags", list, required=False) or []
        if not all(isinstance(tag, str) for tag in tags):
            raise ValidationError("'tags' must be a list of strings.")
        project = self.service.store.create_project(
            name_field(ref),
            domain_id=domain_id,
            description=field(ref, "description", str, required=False) or "",
            enabled=field(ref, "enabled", bool, required=False) is not False,
            parent_id=field(ref, "parent_id", str, required=False),
            tags=tags,
        )
        resp.status = falcon.HTTP_201
        resp.media = {"project": project_doc(project, self.service.base_url(req))}


class Project:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        caller = self.service.caller(req)
        own = caller.project is not None and caller.project.id == project_id
        if own:
            project = self.service.store.get_project(project_id)
        else:
            project = _managed_project(caller, self.service, project_id)
        resp.media = {"project": project_doc(project, self.service.base_url(req))}

    def on_patch(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        _managed_project(self.service.caller(req), self.service, project_id)
        ref = field(read_json(req), "project", dict)
        changes: dict[str, Any] = {}
        for key, kind in (("description", str), ("enabled", bool), ("tags", list)):
            if key in ref:
                changes[key] = field(ref, key, kind)
        if "name" in ref:
            changes["name"] = name_field(ref)
        if not all(isinstance(tag, str) for tag in changes.get("tags", [])):
            raise ValidationError("'tags' must be a list of strings.")
        project = self.service.store.update_project(project_id, **changes)
        resp.media = {"project": project_doc(project, self.service.base_url(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        _managed_project(self.service.caller(req), self.service, project_id)
        self.service.store.delete_project(project_id)
        resp.status = falcon.HTTP_204


class Users:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        domain_id = _listed_domain(self.service, req)
        base = self.service.base_url(req)
        users = self.service.store.list_users(
            name=query(req, "name"), domain_id=domain_id, enabled=_enabled_filter(req)
        )
        resp.media = collection("users", (user_doc(u, base) for u in users), base, "users")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        ref = field(read_json(req), "user", dict)
        store = self.service.store
        domain_id = field(ref, "domain_id", str, required=False) or _default_domain(caller)
        require_domain(caller, domain_id)
        default_project_id = field(ref, "default_project_id", str, required=False)
        if default_project_id is not None:
            require_domain(caller, store.get_project(default_project_id).domain_id)
        user = store.create_user(
            name_field(ref),
            domain_id=domain_id,
            password=field(ref, "password", str, required=False),
            enabled=field(ref, "enabled", bool, required=False) is not False,
            default_project_id=default_project_id,
            description=field(ref, "description", str, required=False) or "",
            email=field(ref, "email", str, required=False),
            options=field(ref, "options", dict, required=False),
        )
        resp.status = falcon.HTTP_201
        resp.media = {"user": user_doc(user, self.service.base_url(req))}


class User:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        self.service.admin_or_self(req, user_id)
        user = self.service.store.get_user(user_id)
        resp.media = {"user": user_doc(user, self.service.base_url(req))}

    def on_patch(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        caller = self.service.caller(req)
        _managed_user(caller, self.service, user_id)
        ref = field(read_json(req), "user", dict)
        changes: dict[str, Any] = {}
        if "name" in ref:
            changes["name"] = name_field(ref)
        nullable = ("email", "password", "default_project_id")
        for key, kind in (
            ("description", str),
            ("email", str),
            ("enabled", bool),
            ("password", str),
            ("default_project_id", str),
            ("options", dict),
        ):
            if key in ref:
                changes[key] = field(ref, key, kind, required=key not in nullable)
        if changes.get("default_project_id"):
            project = self.service.store.get_project(changes["default_project_id"])
            require_domain(caller, project.domain_id)
        user = self.service.store.update_user(user_id, **changes)
        resp.media = {"user": user_doc(user, self.service.base_url(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        _managed_user(self.service.caller(req), self.service, user_id)
        self.service.store.delete_user(user_id)
        resp.status = falcon.HTTP_204


class UserProjects:
    """``GET /v3/users/{id}/projects``: the projects the user has a role on."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        self.service.admin_or_self(req, user_id)
        store = self.service.store
        store.get_user(user_id)
        ids = {a.target_id for a in store.list_assignments(user_id=user_id, target_type="project")}
        base = self.service.base_url(req)
        projects = [p for p in store.list_projects() if p.id in ids]
        resp.media = collection(
            "projects", (project_doc(p, base) for p in projects), base, f"users/{user_id}/projects"
        )
