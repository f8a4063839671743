"""Roles, grants (``/v3/projects/{p}/users/{u}/roles/{r}``) and ``/v3/role_assignments``.

A grant needs a cloud admin, or an admin of the domain of both the target and the user
(Heat's stack domain admin giving its users ``heat_stack_user``). A domain admin may not
hand out the admin role: admin on a project is cloud admin here.
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.sandbox.identity.documents import collection, role_doc
from kiln.cloud.sandbox.identity.errors import Forbidden, NotFound
from kiln.cloud.sandbox.identity.records import Assignment
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


class Roles:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.service.caller(req)
        base = self.service.base_url(req)
        roles = self.service.store.list_roles(name=query(req, "name"))
        resp.media = collection("roles", (role_doc(r, base) for r in roles), base, "roles")

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.service.admin(req)
        ref = field(read_json(req), "role", dict)
        role = self.service.store.create_role(
            name_field(ref),
            description=field(ref, "description", str, required=False) or "",
        )
        resp.status = falcon.HTTP_201
        resp.media = {"role": role_doc(role, self.service.base_url(req))}


class Role:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, role_id: str) -> None:
        self.service.caller(req)
        role = self.service.store.get_role(role_id)
        resp.media = {"role": role_doc(role, self.service.base_url(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, role_id: str) -> None:
        self.service.admin(req)
        self.service.store.delete_role(role_id)
        resp.status = falcon.HTTP_204


class TargetUserRoles:
    """``GET /v3/{projects|domains}/{target}/users/{user}/roles``: the direct grants."""

    def __init__(self, service: IdentityService, target_type: str) -> None:
        self.service = service
        self.target_type = target_type

    def on_get(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        target_id, user_id = ids[f"{self.target_type}_id"], ids["user_id"]
        self.service.admin_or_self(req, user_id)
        store = self.service.store
        _check_target(self.service, self.target_type, target_id)
        store.get_user(user_id)
        assigned = store.list_assignments(
            user_id=user_id, target_type=self.target_type, target_id=target_id
        )
        base = self.service.base_url(req)
        roles = store.roles_by_id(a.role_id for a in assigned)
        path = f"{self.target_type}s/{target_id}/users/{user_id}/roles"
        resp.media = collection("roles", (role_doc(r, base) for r in roles), base, path)


class Grant:
    """``PUT|HEAD|GET|DELETE /v3/{projects|domains}/{target}/users/{user}/roles/{role}``."""

    def __init__(self, service: IdentityService, target_type: str) -> None:
        self.service = service
        self.target_type = target_type

    def _grant(
        self, ids: dict[str, str], changer: TokenInfo | None = None
    ) -> tuple[str, str, dict[str, str]]:
        """Check that the three exist, and that ``changer`` (when given) may grant or
        revoke the role; (user id, role id, target keywords)."""
        target_id = ids[f"{self.target_type}_id"]
        if changer is not None and not (changer.is_admin or changer.domain is not None):
            raise Forbidden(FORBIDDEN)
        target_domain = _check_target(self.service, self.target_type, target_id)
        user = self.service.store.get_user(ids["user_id"])
        self.service.store.get_role(ids["role_id"])
        if changer is not None and not changer.is_admin:
            require_domain(changer, target_domain)
            require_domain(changer, user.domain_id)
            if self._confers_admin(ids["role_id"]):
                raise Forbidden(FORBIDDEN)
        return (
            ids["user_id"],
            ids["role_id"],
            {"target_type": self.target_type, "target_id": target_id},
        )

    def _confers_admin(self, role_id: str) -> bool:
        store = self.service.store
        return any(r.name == "admin" for r in store.roles_by_id(store.expand_implied([role_id])))

    def on_put(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        user_id, role_id, target = self._grant(ids, self.service.caller(req))
        self.service.store.grant(user_id, role_id, **target)
        resp.status = falcon.HTTP_204

    def on_head(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        self.service.admin_or_self(req, ids["user_id"])
        user_id, role_id, target = self._grant(ids)
        if not self.service.store.has_grant(user_id, role_id, **target):
            raise NotFound(f"Could not find role assignment with role: {role_id}.")
        resp.status = falcon.HTTP_204

    on_get = on_head

    def on_delete(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        user_id, role_id, target = self._grant(ids, self.service.caller(req))
        self.service.store.revoke_grant(user_id, role_id, **target)
        resp.status = falcon.HTTP_204


def _check_target(service: IdentityService, target_type: str, target_id: str) -> str:
    """404 unless the project or domain exists; the domain it is in (or is)."""
    if target_type == "project":
        return service.store.get_project(target_id).domain_id
    return service.store.get_domain(target_id).id


class RoleAssignments:
    """``GET /v3/role_assignments`` with Keystone's filters, ``effective`` and names."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        user_id = query(req, "user.id")
        if not caller.is_admin and user_id != caller.user.id:
            raise Forbidden("You are not authorized to perform the requested action.")
        project_id = query(req, "scope.project.id")
        domain_id = query(req, "scope.domain.id")
        target_type = "project" if project_id else "domain" if domain_id else None
        store = self.service.store
        assignments = store.list_assignments(
            user_id=user_id, target_type=target_type, target_id=project_id or domain_id
        )
        if flag(req, "effective"):
            assignments = self._with_implied(assignments)
        role_id = query(req, "role.id")
        if role_id is not None:
            assignments = [a for a in assignments if a.role_id == role_id]
        base = self.service.base_url(req)
        names = flag(req, "include_names")
        resp.media = collection(
            "role_assignments",
            (self._document(a, base, names) for a in assignments),
            base,
            "role_assignments",
        )

    def _with_implied(self, assignments: list[Assignment]) -> list[Assignment]:
        result: dict[Assignment, None] = {}
        for a in assignments:
            for role_id in sorted(self.service.store.expand_implied([a.role_id])):
                result[Assignment(a.user_id, a.target_type, a.target_id, role_id)] = None
        return list(result)

    def _document(self, a: Assignment, base: str, names: bool) -> dict[str, Any]:
        store = self.service.store
        role: dict[str, Any] = {"id": a.role_id}
        user: dict[str, Any] = {"id": a.user_id}
        target: dict[str, Any] = {"id": a.target_id}
        if names:
            role["name"] = store.get_role(a.role_id).name
            found_user = store.get_user(a.user_id)
            user_domain = store.get_domain(found_user.domain_id)
            user.update(
                name=found_user.name, domain={"id": user_domain.id, "name": user_domain.name}
            )
            if a.target_type == "project":
                project = store.get_project(a.target_id)
                project_domain = store.get_domain(project.domain_id)
                target.update(
                    name=project.name, domain={"id": project_domain.id, "name": project_domain.name}
                )
            else:
                target["name"] = store.get_domain(a.target_id).name
        link = f"{base}/v3/{a.target_type}s/{a.target_id}/users/{a.user_id}/roles/{a.role_id}"
        return {
            "role": role,
            "user": user,
            "scope": {a.target_type: target},
            "links": {"assignment": link},
        }
