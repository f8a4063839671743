"""Trusts (OS-TRUST): storage and the rules for creating and using one.

A trust lets the trustee act for the trustor on one project with a subset of the
trustor's roles. Kiln stores one per stack (trustee = the orchestration service user) and
uses trust-scoped tokens for deferred work.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.cloud.sandbox.identity import tables as t
from kiln.cloud.sandbox.identity.database import from_db_time, new_id, to_db_time
from kiln.cloud.sandbox.identity.errors import Forbidden, NotFound, ValidationError
from kiln.cloud.sandbox.identity.records import Trust
from kiln.cloud.sandbox.identity.store import IdentityStore


def create_trust(
    store: IdentityStore,
    *,
    trustor_user_id: str,
    trustee_user_id: str,
    project_id: str | None,
    role_ids: Sequence[str],
    impersonation: bool,
    expires_at: datetime | None = None,
    remaining_uses: int | None = None,
    allow_redelegation: bool = False,
) -> Trust:
    """Check the trust against the current state, then store it.

    The caller has already checked that it is the trustor. The trustee must exist, the
    expiry be in the future, and the trustor hold every delegated role on the project.
    """
    store.get_user(trustee_user_id)
    now = store.now()
    if expires_at is not None and expires_at <= now:
        raise ValidationError("Expiration time of the trust must be in the future.")
    if remaining_uses is not None and remaining_uses <= 0:
        raise ValidationError("remaining_uses must be a positive integer or null.")
    if role_ids and project_id is None:
        raise ValidationError("A trust with roles needs a project_id.")
    if project_id is not None:
        store.get_project(project_id)
        held = store.effective_role_ids(
            trustor_user_id, target_type="project", target_id=project_id
        )
        for role_id in role_ids:
            if role_id not in held:
                raise Forbidden(f"The trustor does not have role {role_id} on the project.")
    trust = Trust(
        id=new_id(),
        trustor_user_id=trustor_user_id,
        trustee_user_id=trustee_user_id,
        project_id=project_id,
        impersonation=impersonation,
        role_ids=tuple(dict.fromkeys(role_ids)),
        expires_at=expires_at,
        remaining_uses=remaining_uses,
        allow_redelegation=allow_redelegation,
        created_at=now,
    )

    def insert(c: Connection) -> None:
        c.execute(
            t.trusts.insert().values(
                id=trust.id,
                trustor_user_id=trustor_user_id,
                trustee_user_id=trustee_user_id,
                project_id=project_id,
                impersonation=impersonation,
                allow_redelegation=allow_redelegation,
                expires_at=to_db_time(expires_at) if expires_at else None,
                remaining_uses=remaining_uses,
                created_at=to_db_time(now),
            )
        )
        for role_id in trust.role_ids:
            c.execute(t.trust_roles.insert().values(trust_id=trust.id, role_id=role_id))

    store.write(insert)
    return trust


def _load(c: Connection, where: sa.ColumnElement[bool]) -> list[Trust]:
    rows = c.execute(sa.select(t.trusts).where(where).order_by(t.trusts.c.created_at)).mappings()
    trusts = []
    for row in rows.all():
        roles = c.execute(
            sa.select(t.trust_roles.c.role_id).where(t.trust_roles.c.trust_id == row["id"])
        ).scalars()
        trusts.append(
            Trust(
                id=row["id"],
                trustor_user_id=row["trustor_user_id"],
                trustee_user_id=row["trustee_user_id"],
                project_id=row["project_id"],
                impersonation=bool(row["impersonation"]),
                role_ids=tuple(sorted(roles.all())),
                expires_at=from_db_time(row["expires_at"]) if row["expires_at"] else None,
                remaining_uses=row["remaining_uses"],
                allow_redelegation=bool(row["allow_redelegation"]),
                created_at=from_db_time(row["created_at"]),
            )
        )
    return trusts


def is_usable(trust: Trust, now: datetime, *, for_new_token: bool = True) -> bool:
    """Not expired and, for issuing a new token, not used up.

    A token issued with the last use stays valid: the uses count issued tokens.
    """
    if trust.expires_at is not None and trust.expires_at <= now:
        return False
    if not for_new_token:
        return True
    return trust.remaining_uses is None or trust.remaining_uses > 0


def get_trust(store: IdentityStore, trust_id: str, *, for_new_token: bool = True) -> Trust:
    """The trust; 404 when it is unknown, deleted, expired or (``for_new_token``) used up."""
    found = store.read(lambda c: _load(c, t.trusts.c.id == trust_id))
    if not found or not is_usable(found[0], store.now(), for_new_token=for_new_token):
        raise NotFound(f"Could not find trust: {trust_id}.")
    return found[0]


def list_trusts(
    store: IdentityStore, *, trustor_user_id: str | None = None, trustee_user_id: str | None = None
) -> list[Trust]:
    clauses: list[sa.ColumnElement[bool]] = [sa.true()]
    if trustor_user_id is not None:
        clauses.append(t.trusts.c.trustor_user_id == trustor_user_id)
    if trustee_user_id is not None:
        clauses.append(t.trusts.c.trustee_user_id == trustee_user_id)
    now = store.now()
    return [tr for tr in store.read(lambda c: _load(c, sa.and_(*clauses))) if is_usable(tr, now)]


def delete_trust(store: IdentityStore, trust_id: str) -> None:
    get_trust(store, trust_id)

    def delete(c: Connection) -> None:
        c.execute(t.trust_roles.delete().where(t.trust_roles.c.trust_id == trust_id))
        c.execute(t.trusts.delete().where(t.trusts.c.id == trust_id))

    store.write(delete)


def consume_use(store: IdentityStore, trust: Trust) -> bool:
    """Count one token issued under a limited trust; False when none is left."""
    if trust.remaining_uses is None:
        return True
    c_ = t.trusts.c
    stmt = (
        t.trusts.update()
        .where(c_.id == trust.id, c_.remaining_uses > 0)
        .values(remaining_uses=c_.remaining_uses - 1)
    )
    return bool(store.write(lambda c: c.execute(stmt).rowcount))
