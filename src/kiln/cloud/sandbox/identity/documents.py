"""JSON documents in Keystone's shapes, with links built from the service's base URL."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kiln.cloud.sandbox.identity.records import (
    Credential,
    Domain,
    Project,
    Role,
    Trust,
    User,
)
from kiln.cloud.sandbox.identity.tokens import TokenInfo

VERSION_ID = "v3.14"
VERSION_UPDATED = "2020-04-07T00:00:00Z"
MEDIA_TYPE = "application/vnd.openstack.identity-v3+json"


def iso(when: datetime | None) -> str | None:
    """Keystone's timestamp format, ``2026-01-01T12:00:00.000000Z``."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if when else None


def version_entry(base: str) -> dict[str, Any]:
    return {
        "id": VERSION_ID,
        "status": "stable",
        "updated": VERSION_UPDATED,
        "links": [{"rel": "self", "href": f"{base}/v3/"}],
        "media-types": [{"base": "application/json", "type": MEDIA_TYPE}],
    }


def collection(key: str, items: Iterable[dict[str, Any]], base: str, path: str) -> dict[str, Any]:
    return {
        key: list(items),
        "links": {"self": f"{base}/v3/{path}", "previous": None, "next": None},
    }


def domain_doc(domain: Domain, base: str) -> dict[str, Any]:
    return {
        "id": domain.id,
        "name": domain.name,
        "description": domain.description,
        "enabled": domain.enabled,
        "tags": [],
        "options": {},
        "links": {"self": f"{base}/v3/domains/{domain.id}"},
    }


def project_doc(project: Project, base: str) -> dict[str, Any]:
    return {
        "id": project.id,
        "name": project.name,
        "domain_id": project.domain_id,
        "description": project.description,
        "enabled": project.enabled,
        "parent_id": project.parent_id or project.domain_id,
        "is_domain": False,
        "tags": list(project.tags),
        "options": {},
        "links": {"self": f"{base}/v3/projects/{project.id}"},
    }


def user_doc(user: User, base: str) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": user.id,
        "name": user.name,
        "domain_id": user.domain_id,
        "enabled": user.enabled,
        "password_expires_at": None,
        "options": dict(user.options),
        "links": {"self": f"{base}/v3/users/{user.id}"},
    }
    if user.default_project_id:
        doc["default_project_id"] = user.default_project_id
    if user.description:
        doc["description"] = user.description
    if user.email:
        doc["email"] = user.email
    return doc


def role_doc(role: Role, base: str) -> dict[str, Any]:
    return {
        "id": role.id,
        "name": role.name,
        "domain_id": None,
        "description": role.description,
        "options": {},
        "links": {"self": f"{base}/v3/roles/{role.id}"},
    }


def trust_doc(trust: Trust, roles: Iterable[Role], base: str) -> dict[str, Any]:
    return {
        "id": trust.id,
        "trustor_user_id": trust.trustor_user_id,
        "trustee_user_id": trust.trustee_user_id,
        "project_id": trust.project_id,
        "impersonation": trust.impersonation,
        "roles": [{"id": r.id, "name": r.name, "domain_id": None} for r in roles],
        "roles_links": {"self": f"{base}/v3/OS-TRUST/trusts/{trust.id}/roles"},
        "expires_at": iso(trust.expires_at),
        "remaining_uses": trust.remaining_uses,
        "allow_redelegation": trust.allow_redelegation,
        "redelegation_count": 0,
        "redelegated_trust_id": None,
        "links": {"self": f"{base}/v3/OS-TRUST/trusts/{trust.id}"},
    }


def credential_doc(credential: Credential, base: str) -> dict[str, Any]:
    return {
        "id": credential.id,
        "type": credential.type,
        "user_id": credential.user_id,
        "project_id": credential.project_id,
        "blob": credential.blob,
        "links": {"self": f"{base}/v3/credentials/{credential.id}"},
    }


def token_doc(info: TokenInfo, catalog: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The body of a token response; ``catalog`` None leaves it out (``?nocatalog``)."""
    payload = info.payload
    token: dict[str, Any] = {
        "methods": list(payload.methods),
        "user": {
            "id": info.user.id,
            "name": info.user.name,
            "domain": {"id": info.user_domain.id, "name": info.user_domain.name},
            "password_expires_at": None,
        },
        "audit_ids": list(payload.audit_ids),
        "expires_at": iso(payload.expires_at),
        "issued_at": iso(payload.issued_at),
    }
    if info.project is not None and info.project_domain is not None:
        token["project"] = {
            "id": info.project.id,
            "name": info.project.name,
            "domain": {"id": info.project_domain.id, "name": info.project_domain.name},
        }
        token["is_domain"] = False
        # oslo.policy's "is_admin_project:True" (Heat's context_is_admin): the admin project.
        token["is_admin_project"] = (
            info.project.name == "admin" and info.project.domain_id == "default"
        )
    elif info.domain is not None:
        token["domain"] = {"id": info.domain.id, "name": info.domain.name}
    if info.project is not None or info.domain is not None:
        token["roles"] = [{"id": r.id, "name": r.name} for r in info.roles]
        if catalog is not None:
            token["catalog"] = catalog
    if info.trust is not None:
        token["OS-TRUST:trust"] = {
            "id": info.trust.id,
            "impersonation": info.trust.impersonation,
            "trustor_user": {"id": info.trust.trustor_user_id},
            "trustee_user": {"id": info.trust.trustee_user_id},
        }
    return {"token": token}
