"""``/v3/OS-TRUST/trusts``: create, show, list and delete trusts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import falcon

from kiln.cloud.sandbox.identity.documents import collection, role_doc, trust_doc
from kiln.cloud.sandbox.identity.errors import Forbidden, ValidationError
from kiln.cloud.sandbox.identity.records import Role, Trust
from kiln.cloud.sandbox.identity.tokens import TokenInfo
from kiln.cloud.sandbox.identity.trusts import create_trust, delete_trust, get_trust, list_trusts
from kiln.cloud.sandbox.identity.web import IdentityService, field, query, read_json

_FORBIDDEN = "You are not authorized to perform the requested action."


def parse_time(value: str) -> datetime:
    """An ISO 8601 time; a time without a zone is UTC. 400 when it is not one."""
    try:
        when = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(f"Invalid time: {value!r}.") from exc
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _roles(service: IdentityService, refs: list[Any]) -> list[Role]:
    roles = []
    for ref in refs:
        role_id = field(ref, "id", str, required=False)
        name = field(ref, "name", str, required=role_id is None)
        roles.append(service.store.find_role(id=role_id, name=name))
    return roles


def _document(service: IdentityService, req: falcon.Request, trust: Trust) -> dict[str, Any]:
    roles = service.store.roles_by_id(trust.role_ids)
    return trust_doc(trust, roles, service.base_url(req))


def _may_see(caller: TokenInfo, trust: Trust) -> bool:
    return caller.is_admin or caller.user.id in (trust.trustor_user_id, trust.trustee_user_id)


class Trusts:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        ref = field(read_json(req), "trust", dict)
        trustor = field(ref, "trustor_user_id", str)
        if caller.user.id != trustor:
            raise Forbidden("The authenticated user must be the trustor.")
        if caller.trust is not None and not caller.trust.allow_redelegation:
            raise Forbidden("A trust-scoped token cannot create a trust.")
        expires_at = field(ref, "expires_at", str, required=False)
        trust = create_trust(
            self.service.store,
            trustor_user_id=trustor,
            trustee_user_id=field(ref, "trustee_user_id", str),
            project_id=field(ref, "project_id", str, required=False),
            role_ids=[
                r.id for r in _roles(self.service, field(ref, "roles", list, required=False) or [])
            ],
            impersonation=field(ref, "impersonation", bool),
            expires_at=parse_time(expires_at) if expires_at else None,
            remaining_uses=field(ref, "remaining_uses", int, required=False),
            allow_redelegation=bool(field(ref, "allow_redelegation", bool, required=False)),
        )
        resp.status = falcon.HTTP_201
        resp.media = {"trust": _document(self.service, req, trust)}

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        trustor = query(req, "trustor_user_id")
        trustee = query(req, "trustee_user_id")
        if not caller.is_admin and caller.user.id not in (trustor, trustee):
            raise Forbidden(_FORBIDDEN)
        trusts = list_trusts(self.service.store, trustor_user_id=trustor, trustee_user_id=trustee)
        base = self.service.base_url(req)
        resp.media = collection(
            "trusts", (_document(self.service, req, t) for t in trusts), base, "OS-TRUST/trusts"
        )


class TrustItem:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, trust_id: str) -> None:
        caller = self.service.caller(req)
        trust = get_trust(self.service.store, trust_id)
        if not _may_see(caller, trust):
            raise Forbidden(_FORBIDDEN)
        resp.media = {"trust": _document(self.service, req, trust)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, trust_id: str) -> None:
        caller = self.service.caller(req)
        trust = get_trust(self.service.store, trust_id)
        if not (caller.is_admin or caller.user.id == trust.trustor_user_id):
            raise Forbidden(_FORBIDDEN)
        delete_trust(self.service.store, trust_id)
        resp.status = falcon.HTTP_204


class TrustRoles:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, trust_id: str) -> None:
        caller = self.service.caller(req)
        trust = get_trust(self.service.store, trust_id)
        if not _may_see(caller, trust):
            raise Forbidden(_FORBIDDEN)
        base = self.service.base_url(req)
        roles = self.service.store.roles_by_id(trust.role_ids)
        resp.media = collection(
            "roles", (role_doc(r, base) for r in roles), base, f"OS-TRUST/trusts/{trust_id}/roles"
        )
