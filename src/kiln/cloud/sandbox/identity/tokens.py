"""Tokens: Fernet-encrypted, signed payloads that expire and can be revoked.

A token carries the user, the scope (project, domain or trust), the auth methods, issue and
expiry times and its audit ids; the payload is encrypted and authenticated with the
store's token key, so a token cannot be forged or altered. Validation checks the
signature, the expiry (against the store's clock), the revocation list and the current
state: a disabled or deleted user, project or trust, or a role taken away, makes the token
invalid. Roles are worked out at validation, as Keystone does, with implied roles added.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from cryptography.fernet import InvalidToken
from sqlalchemy.engine import Connection

from kiln.cloud.sandbox.identity import tables as t
from kiln.cloud.sandbox.identity.database import to_db_time
from kiln.cloud.sandbox.identity.errors import Conflict, IdentityError, Unauthorized
from kiln.cloud.sandbox.identity.records import Domain, Project, Role, Trust, User
from kiln.cloud.sandbox.identity.store import IdentityStore
from kiln.cloud.sandbox.identity.trusts import get_trust

DEFAULT_LIFETIME = timedelta(hours=1)
# How long after expiry ``?allow_expired=1`` still validates a token (Keystone: 2 days).
ALLOW_EXPIRED_WINDOW = timedelta(days=2)


@dataclass(frozen=True)
class TokenPayload:
    """What the encrypted token itself says."""

    user_id: str
    methods: tuple[str, ...]
    project_id: str | None
    domain_id: str | None
    trust_id: str | None
    issued_at: datetime
    expires_at: datetime
    audit_ids: tuple[str, ...]  # this token's, then the one of the token it came from

    def encode(self) -> bytes:
        return json.dumps(
            {
                "u": self.user_id,
                "m": list(self.methods),
                "p": self.project_id,
                "d": self.domain_id,
                "t": self.trust_id,
                "i": self.issued_at.timestamp(),
                "e": self.expires_at.timestamp(),
                "a": list(self.audit_ids),
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, data: bytes) -> TokenPayload:
        raw = json.loads(data)
        return cls(
            user_id=raw["u"],
            methods=tuple(raw["m"]),
            project_id=raw["p"],
            domain_id=raw["d"],
            trust_id=raw["t"],
            issued_at=datetime.fromtimestamp(raw["i"], UTC),
            expires_at=datetime.fromtimestamp(raw["e"], UTC),
            audit_ids=tuple(raw["a"]),
        )


@dataclass(frozen=True)
class TokenInfo:
    """A valid token with everything it refers to loaded."""

    payload: TokenPayload
    user: User
    user_domain: Domain
    project: Project | None
    project_domain: Domain | None
    domain: Domain | None  # the scope of a domain-scoped token
    roles: tuple[Role, ...]
    trust: Trust | None

    @property
    def role_names(self) -> set[str]:
        return {r.name for r in self.roles}

    @property
    def is_admin(self) -> bool:
        """A cloud admin: the admin role on a project (or through a trust). The admin
        role on a domain makes a domain admin only (:meth:`administers`)."""
        return "admin" in self.role_names and self.domain is None

    def administers(self, domain_id: str) -> bool:
        """Whether the token may manage the domain's projects, users and grants."""
        if self.is_admin:
            return True
        return (
            self.domain is not None and self.domain.id == domain_id and "admin" in self.role_names
        )


def new_audit_id() -> str:
    return secrets.token_urlsafe(16)


class TokenService:
    """Issues, validates and revokes tokens against an :class:`IdentityStore`."""

    def __init__(self, store: IdentityStore, *, lifetime: timedelta = DEFAULT_LIFETIME) -> None:
        self.store = store
        self.lifetime = lifetime

    def issue(
        self,
        user: User,
        methods: Sequence[str],
        *,
        project_id: str | None = None,
        domain_id: str | None = None,
        trust: Trust | None = None,
        expires_at: datetime | None = None,
        parent_audit_ids: Sequence[str] = (),
    ) -> tuple[str, TokenInfo]:
        """A new token for an authenticated user; 401 when the scope is not allowed."""
        now = self.store.now()
        expiry = now + self.lifetime
        for limit in (expires_at, trust.expires_at if trust else None):
            if limit is not None and limit < expiry:
                expiry = limit
        audit_chain = parent_audit_ids[-1:] if parent_audit_ids else ()
        payload = TokenPayload(
            user_id=user.id,
            methods=tuple(dict.fromkeys(methods)),
            project_id=trust.project_id if trust else project_id,
            domain_id=None if trust else domain_id,
            trust_id=trust.id if trust else None,
            issued_at=now,
            expires_at=expiry,
            audit_ids=(new_audit_id(), *audit_chain),
        )
        info = self._resolve(payload)
        token_id = self.store.fernet("token").encrypt(payload.encode()).decode()
        return token_id, info

    def validate(self, token_id: str, *, allow_expired: bool = False) -> TokenInfo:
        """The token's current meaning; 401 when it is not (or no longer) valid."""
        try:
            data = self.store.fernet("token").decrypt(token_id.encode())
            payload = TokenPayload.decode(data)
        except (InvalidToken, ValueError, KeyError, TypeError) as exc:
            raise Unauthorized("The request you have made requires authentication.") from exc
        now = self.store.now()
        grace = ALLOW_EXPIRED_WINDOW if allow_expired else timedelta(0)
        if payload.expires_at + grace <= now:
            raise Unauthorized("The token has expired.")
        if self.is_revoked(payload.audit_ids):
            raise Unauthorized("The token has been revoked.")
        return self._resolve(payload)

    def revoke(self, info: TokenInfo) -> None:
        """Revoke the token (and every token made from it with the token method)."""
        audit_id = info.payload.audit_ids[0]
        now = self.store.now()

        def record(c: Connection) -> None:
            # Forget revocations of tokens that have expired anyway.
            c.execute(t.revocations.delete().where(t.revocations.c.expires_at < to_db_time(now)))
            exists = c.execute(
                sa.select(sa.func.count()).where(t.revocations.c.audit_id == audit_id)
            ).scalar()
            if not exists:
                c.execute(
                    t.revocations.insert().values(
                        audit_id=audit_id,
                        expires_at=to_db_time(info.payload.expires_at + ALLOW_EXPIRED_WINDOW),
                        revoked_at=to_db_time(now),
                    )
                )

        try:
            self.store.write(record)
        except Conflict:
            pass  # revoked by a concurrent request

    def is_revoked(self, audit_ids: Iterable[str]) -> bool:
        query = sa.select(sa.func.count()).where(t.revocations.c.audit_id.in_(list(audit_ids)))
        return bool(self.store.read(lambda c: c.execute(query).scalar()))

    def _resolve(self, payload: TokenPayload) -> TokenInfo:
        """Load what the payload names and work out the roles; 401 when something is gone."""
        store = self.store
        try:
            user = store.get_user(payload.user_id)
            user_domain = store.get_domain(user.domain_id)
            if not (user.enabled and user_domain.enabled):
                raise Unauthorized("The user is disabled.")
            trust = None
            if payload.trust_id:
                trust = get_trust(store, payload.trust_id, for_new_token=False)
            project = store.get_project(payload.project_id) if payload.project_id else None
            project_domain = store.get_domain(project.domain_id) if project else None
            domain = store.get_domain(payload.domain_id) if payload.domain_id else None
            role_ids = self._role_ids(payload, trust)
        except Unauthorized:
            raise
        except IdentityError as exc:
            raise Unauthorized(f"The token refers to something that is gone: {exc}") from exc
        if project is not None and not (
            project.enabled and project_domain and project_domain.enabled
        ):
            raise Unauthorized(f"Project {project.id} is disabled.")
        if domain is not None and not domain.enabled:
            raise Unauthorized(f"Domain {domain.id} is disabled.")
        if (project or domain) and not role_ids:
            scope = project.id if project else domain.id if domain else ""
            raise Unauthorized(f"User {user.id} has no access to {scope}.")
        return TokenInfo(
            payload=payload,
            user=user,
            user_domain=user_domain,
            project=project,
            project_domain=project_domain,
            domain=domain,
            roles=tuple(store.roles_by_id(role_ids)),
            trust=trust,
        )

    def _role_ids(self, payload: TokenPayload, trust: Trust | None) -> set[str]:
        store = self.store
        if trust is not None:
            if trust.project_id is None:
                return set()
            trustee = store.get_user(trust.trustee_user_id)
            trustor = store.get_user(trust.trustor_user_id)
            if not (trustee.enabled and trustor.enabled):
                raise Unauthorized("The trustor or trustee is disabled.")
            held = store.effective_role_ids(
                trust.trustor_user_id, target_type="project", target_id=trust.project_id
            )
            if not set(trust.role_ids) <= held:
                raise Unauthorized("The trustor no longer holds the delegated roles.")
            return store.expand_implied(trust.role_ids)
        if payload.project_id is not None:
            return store.effective_role_ids(
                payload.user_id, target_type="project", target_id=payload.project_id
            )
        if payload.domain_id is not None:
            return store.effective_role_ids(
                payload.user_id, target_type="domain", target_id=payload.domain_id
            )
        return set()
