"""Credentials (``/v3/credentials``), the per-user EC2 API (OS-EC2) and ``/v3/ec2tokens``.

A user manages its own credentials; a cloud admin anyone's; a domain admin those of the
users of its domain (Heat's stack domain admin making key pairs for stack users).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import falcon

from kiln.cloud.sandbox.identity.documents import collection, credential_doc, token_doc
from kiln.cloud.sandbox.identity.ec2 import (
    create_credential,
    delete_credential,
    ec2_blob,
    ec2_credential_id,
    get_credential,
    list_credentials,
    signature_matches,
)
from kiln.cloud.sandbox.identity.errors import (
    Forbidden,
    NotFound,
    Unauthorized,
    ValidationError,
)
from kiln.cloud.sandbox.identity.records import Credential
from kiln.cloud.sandbox.identity.tokens import TokenInfo
from kiln.cloud.sandbox.identity.trusts import get_trust
from kiln.cloud.sandbox.identity.web import (
    FORBIDDEN,
    IdentityService,
    field,
    query,
    read_json,
)


def _may_manage(service: IdentityService, caller: TokenInfo, user_id: str) -> bool:
    """The caller is the user, a cloud admin, or an admin of the user's domain."""
    if caller.is_admin or caller.user.id == user_id:
        return True
    if caller.domain is None:
        return False
    try:
        user = service.store.get_user(user_id)
    except NotFound:
        return False
    return caller.administers(user.domain_id)


def _owned(service: IdentityService, caller: TokenInfo, credential: Credential) -> Credential:
    if not _may_manage(service, caller, credential.user_id):
        raise Forbidden(FORBIDDEN)
    return credential


class Credentials:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        user_id = query(req, "user_id")
        if user_id is None and not caller.is_admin:
            user_id = caller.user.id  # others see only their own
        found = []
        if user_id is None or _may_manage(self.service, caller, user_id):
            found = list_credentials(self.service.store, user_id=user_id, type=query(req, "type"))
        base = self.service.base_url(req)
        resp.media = collection(
            "credentials", (credential_doc(c, base) for c in found), base, "credentials"
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        caller = self.service.caller(req)
        ref = field(read_json(req), "credential", dict)
        user_id = field(ref, "user_id", str)
        if not _may_manage(self.service, caller, user_id):
            raise Forbidden(FORBIDDEN)
        kind = field(ref, "type", str)
        project_id = field(ref, "project_id", str, required=kind == "ec2")
        credential = create_credential(
            self.service.store,
            user_id=user_id,
            type=kind,
            blob=field(ref, "blob", str),
            project_id=project_id,
        )
        resp.status = falcon.HTTP_201
        resp.media = {"credential": credential_doc(credential, self.service.base_url(req))}


class CredentialItem:
    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, credential_id: str) -> None:
        caller = self.service.caller(req)
        credential = _owned(self.service, caller, get_credential(self.service.store, credential_id))
        resp.media = {"credential": credential_doc(credential, self.service.base_url(req))}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, credential_id: str) -> None:
        caller = self.service.caller(req)
        _owned(self.service, caller, get_credential(self.service.store, credential_id))
        delete_credential(self.service.store, credential_id)
        resp.status = falcon.HTTP_204


def _ec2_doc(credential: Credential, base: str) -> dict[str, Any]:
    blob = ec2_blob(credential.blob)
    return {
        "user_id": credential.user_id,
        "tenant_id": credential.project_id,
        "access": blob["access"],
        "secret": blob["secret"],
        "trust_id": blob.get("trust_id"),
        "links": {
            "self": f"{base}/v3/users/{credential.user_id}/credentials/OS-EC2/{blob['access']}"
        },
    }


class UserEc2Credentials:
    """``/v3/users/{user_id}/credentials/OS-EC2``: list and create a user's EC2 key pairs."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        self.service.admin_or_self(req, user_id)
        self.service.store.get_user(user_id)
        found = list_credentials(self.service.store, user_id=user_id, type="ec2")
        base = self.service.base_url(req)
        resp.media = collection(
            "credentials",
            (_ec2_doc(c, base) for c in found),
            base,
            f"users/{user_id}/credentials/OS-EC2",
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, user_id: str) -> None:
        caller = self.service.admin_or_self(req, user_id)
        project_id = field(read_json(req), "tenant_id", str)
        blob: dict[str, Any] = {"access": uuid.uuid4().hex, "secret": uuid.uuid4().hex}
        if caller.trust is not None:
            blob["trust_id"] = caller.trust.id  # keys made under a trust act through it
        credential = create_credential(
            self.service.store,
            user_id=user_id,
            type="ec2",
            blob=json.dumps(blob),
            project_id=project_id,
        )
        resp.status = falcon.HTTP_201
        resp.media = {"credential": _ec2_doc(credential, self.service.base_url(req))}


class UserEc2Credential:
    """``/v3/users/{user_id}/credentials/OS-EC2/{access}``."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def _find(self, req: falcon.Request, user_id: str, access: str) -> Credential:
        self.service.admin_or_self(req, user_id)
        credential = get_credential(self.service.store, ec2_credential_id(access))
        if credential.user_id != user_id or credential.type != "ec2":
            raise NotFound(f"Could not find credential: {access}.")
        return credential

    def on_get(self, req: falcon.Request, resp: falcon.Response, user_id: str, access: str) -> None:
        credential = self._find(req, user_id, access)
        resp.media = {"credential": _ec2_doc(credential, self.service.base_url(req))}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, user_id: str, access: str
    ) -> None:
        credential = self._find(req, user_id, access)
        delete_credential(self.service.store, credential.id)
        resp.status = falcon.HTTP_204


class Ec2Tokens:
    """``POST /v3/ec2tokens``: a token for whoever signed the request with an EC2 key."""

    def __init__(self, service: IdentityService) -> None:
        self.service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = read_json(req)
        credentials = body.get("credentials", body.get("ec2Credentials"))
        if not isinstance(credentials, dict):
            raise ValidationError("'credentials' is a required property.")
        access = field(credentials, "access", str)
        field(credentials, "signature", str)
        store = self.service.store
        try:
            credential = get_credential(store, ec2_credential_id(access))
        except NotFound as exc:
            raise Unauthorized("EC2 access key not found.") from exc
        blob = ec2_blob(credential.blob)
        if credential.type != "ec2" or not signature_matches(blob["secret"], credentials):
            raise Unauthorized("EC2 signature not supplied or invalid.")
        user = store.get_user(credential.user_id)
        tokens = self.service.tokens
        trust_id = blob.get("trust_id")
        if trust_id:
            try:
                trust = get_trust(store, trust_id)
            except NotFound as exc:
                raise Unauthorized(f"Trust {trust_id} is gone.") from exc
            acting = store.get_user(trust.trustor_user_id) if trust.impersonation else user
            token_id, info = tokens.issue(acting, ["ec2credential"], trust=trust)
        else:
            token_id, info = tokens.issue(user, ["ec2credential"], project_id=credential.project_id)
        resp.set_header("X-Subject-Token", token_id)
        project_id = info.project.id if info.project else None
        resp.media = token_doc(info, self.service.catalog_for(req, project_id))
