"""IdentityStore: domains, projects, users, roles and role assignments.

Every method runs one short transaction (see :class:`Database`). Trusts, credentials and
revocations are stored by their own modules through :meth:`Database.read` and
:meth:`Database.write`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.cloud.sandbox.identity import tables as t
from kiln.cloud.sandbox.identity.database import Database, new_id
from kiln.cloud.sandbox.identity.errors import Conflict, NotFound
from kiln.cloud.sandbox.identity.passwords import hash_password
from kiln.cloud.sandbox.identity.records import (
    Assignment,
    Domain,
    Project,
    Role,
    User,
    project_from_row,
    user_from_row,
)


class IdentityStore(Database):
    """The identity service's state; ``now`` is its clock (tests inject one)."""

    # -- domains --------------------------------------------------------------------------

    def create_domain(
        self, name: str, *, id: str | None = None, description: str = "", enabled: bool = True
    ) -> Domain:
        domain = Domain(id or new_id(), name, description, enabled)
        self.write(lambda c: c.execute(t.domains.insert().values(**domain.__dict__)))
        return domain

    def list_domains(self, *, name: str | None = None) -> list[Domain]:
        query = sa.select(t.domains).order_by(t.domains.c.name)
        if name is not None:
            query = query.where(t.domains.c.name == name)
        rows = self.read(lambda c: c.execute(query).mappings().all())
        return [Domain(r["id"], r["name"], r["description"] or "", r["enabled"]) for r in rows]

    def get_domain(self, domain_id: str) -> Domain:
        query = sa.select(t.domains).where(t.domains.c.id == domain_id)
        row = self.read(lambda c: c.execute(query).mappings().first())
        if row is None:
            raise NotFound(f"Could not find domain: {domain_id}.")
        return Domain(row["id"], row["name"], row["description"] or "", row["enabled"])

    def find_domain(self, *, id: str | None = None, name: str | None = None) -> Domain:
        if id is not None:
            return self.get_domain(id)
        found = self.list_domains(name=name)
        if not found:
            raise NotFound(f"Could not find domain: {name}.")
        return found[0]

    # -- projects -------------------------------------------------------------------------

    def create_project(
        self,
        name: str,
        *,
        domain_id: str = "default",
        id: str | None = None,
        description: str = "",
        enabled: bool = True,
        parent_id: str | None = None,
        tags: Iterable[str] = (),
    ) -> Project:
        self.get_domain(domain_id)
        project = Project(
            id or new_id(), name, domain_id, description, enabled, parent_id, tuple(tags)
        )
        values = {**project.__dict__, "tags": json.dumps(list(project.tags))}
        self.write(lambda c: c.execute(t.projects.insert().values(**values)))
        return project

    def list_projects(self, **filters: Any) -> list[Project]:
        query = sa.select(t.projects).order_by(t.projects.c.name)
        for key, value in filters.items():
            if value is not None:
                query = query.where(t.projects.c[key] == value)
        rows = self.read(lambda c: c.execute(query).mappings().all())
        return [project_from_row(r) for r in rows]

    def get_project(self, project_id: str) -> Project:
        found = self.list_projects(id=project_id)
        if not found:
            raise NotFound(f"Could not find project: {project_id}.")
        return found[0]

    def find_project(
        self, *, id: str | None = None, name: str | None = None, domain_id: str | None = None
    ) -> Project:
        if id is not None:
            return self.get_project(id)
        found = self.list_projects(name=name, domain_id=domain_id)
        if not found:
            raise NotFound(f"Could not find project: {name}.")
        return found[0]

    def update_project(self, project_id: str, **changes: Any) -> Project:
        self.get_project(project_id)
        if "tags" in changes:
            changes["tags"] = json.dumps(list(changes["tags"]))
        if changes:
            stmt = t.projects.update().where(t.projects.c.id == project_id).values(**changes)
            self.write(lambda c: c.execute(stmt))
        return self.get_project(project_id)

    def delete_project(self, project_id: str) -> None:
        self.get_project(project_id)

        def delete(c: Connection) -> None:
            c.execute(t.projects.delete().where(t.projects.c.id == project_id))
            c.execute(
                t.assignments.delete().where(
                    t.assignments.c.target_type == "project",
                    t.assignments.c.target_id == project_id,
                )
            )

        self.write(delete)

    # -- users ----------------------------------------------------------------------------

    def create_user(
        self,
        name: str,
        *,
        domain_id: str = "default",
        password: str | None = None,
        id: str | None = None,
        enabled: bool = True,
        default_project_id: str | None = None,
        description: str = "",
        email: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> User:
        self.get_domain(domain_id)
        user = User(
            id or new_id(),
            name,
            domain_id,
            enabled,
            default_project_id,
            description,
            email,
            options or {},
            hash_password(password) if password is not None else None,
        )
        values = {**user.__dict__, "options": json.dumps(dict(user.options))}
        self.write(lambda c: c.execute(t.users.insert().values(**values)))
        return user

    def list_users(self, **filters: Any) -> list[User]:
        query = sa.select(t.users).order_by(t.users.c.name)
        for key, value in filters.items():
            if value is not None:
                query = query.where(t.users.c[key] == value)
        rows = self.read(lambda c: c.execute(query).mappings().all())
        return [user_from_row(r) for r in rows]

    def get_user(self, user_id: str) -> User:
        found = self.list_users(id=user_id)
        if not found:
            raise NotFound(f"Could not find user: {user_id}.")
        return found[0]

    def find_user(
        self, *, id: str | None = None, name: str | None = None, domain_id: str | None = None
    ) -> User:
        if id is not None:
            return self.get_user(id)
        found = self.list_users(name=name, domain_id=domain_id)
        if not found:
            raise NotFound(f"Could not find user: {name}.")
        return found[0]

    def update_user(self, user_id: str, **changes: Any) -> User:
        self.get_user(user_id)
        if "password" in changes:
            password = changes.pop("password")
            changes["password_hash"] = hash_password(password) if password is not None else None
        if "options" in changes:
            changes["options"] = json.dumps(changes["options"])
        if changes:
            stmt = t.users.update().where(t.users.c.id == user_id).values(**changes)
            self.write(lambda c: c.execute(stmt))
        return self.get_user(user_id)

    def delete_user(self, user_id: str) -> None:
        """Delete the user with its assignments, trusts (either side) and credentials."""
        self.get_user(user_id)

        def delete(c: Connection) -> None:
            trusts = t.trusts.c
            trust_ids = sa.select(trusts.id).where(
                sa.or_(trusts.trustor_user_id == user_id, trusts.trustee_user_id == user_id)
            )
            c.execute(t.trust_roles.delete().where(t.trust_roles.c.trust_id.in_(trust_ids)))
            c.execute(t.trusts.delete().where(trusts.id.in_(trust_ids)))
            c.execute(t.credentials.delete().where(t.credentials.c.user_id == user_id))
            c.execute(t.assignments.delete().where(t.assignments.c.user_id == user_id))
            c.execute(t.users.delete().where(t.users.c.id == user_id))

        self.write(delete)

    # -- roles ----------------------------------------------------------------------------

    def create_role(self, name: str, *, id: str | None = None, description: str = "") -> Role:
        role = Role(id or new_id(), name, description)
        self.write(lambda c: c.execute(t.roles.insert().values(**role.__dict__)))
        return role

    def list_roles(self, *, name: str | None = None) -> list[Role]:
        query = sa.select(t.roles).order_by(t.roles.c.name)
        if name is not None:
            query = query.where(t.roles.c.name == name)
        rows = self.read(lambda c: c.execute(query).mappings().all())
        return [Role(r["id"], r["name"], r["description"] or "") for r in rows]

    def get_role(self, role_id: str) -> Role:
        query = sa.select(t.roles).where(t.roles.c.id == role_id)
        row = self.read(lambda c: c.execute(query).mappings().first())
        if row is None:
            raise NotFound(f"Could not find role: {role_id}.")
        return Role(row["id"], row["name"], row["description"] or "")

    def find_role(self, *, id: str | None = None, name: str | None = None) -> Role:
        if id is not None:
            return self.get_role(id)
        found = self.list_roles(name=name)
        if not found:
            raise NotFound(f"Could not find role: {name}.")
        return found[0]

    def delete_role(self, role_id: str) -> None:
        self.get_role(role_id)
        ir = t.implied_roles.c

        def delete(c: Connection) -> None:
            c.execute(t.roles.delete().where(t.roles.c.id == role_id))
            c.execute(t.assignments.delete().where(t.assignments.c.role_id == role_id))
            c.execute(
                t.implied_roles.delete().where(
                    sa.or_(ir.prior_role_id == role_id, ir.implied_role_id == role_id)
                )
            )

        self.write(delete)

    def add_implied_role(self, prior_role_id: str, implied_role_id: str) -> None:
        stmt = t.implied_roles.insert().values(
            prior_role_id=prior_role_id, implied_role_id=implied_role_id
        )
        self.write(lambda c: c.execute(stmt))

    def list_implied_roles(self) -> set[tuple[str, str]]:
        """Every (prior role id, implied role id) rule."""
        rows = self.read(lambda c: c.execute(sa.select(t.implied_roles)).all())
        return {(prior, implied) for prior, implied in rows}

    def expand_implied(self, role_ids: Iterable[str]) -> set[str]:
        """The roles plus every role they imply, transitively."""
        implies: dict[str, set[str]] = {}
        for prior, implied in self.list_implied_roles():
            implies.setdefault(prior, set()).add(implied)
        result = set(role_ids)
        pending = list(result)
        while pending:
            for implied in implies.get(pending.pop(), ()):
                if implied not in result:
                    result.add(implied)
                    pending.append(implied)
        return result

    # -- assignments ------------------------------------------------------------------------

    def grant(self, user_id: str, role_id: str, *, target_type: str, target_id: str) -> None:
        """Give the user the role on a project or domain; granting twice is harmless."""
        if self.has_grant(user_id, role_id, target_type=target_type, target_id=target_id):
            return
        values = dict(
            user_id=user_id, role_id=role_id, target_type=target_type, target_id=target_id
        )
        try:
            self.write(lambda c: c.execute(t.assignments.insert().values(**values)))
        except Conflict:
            pass  # a concurrent identical grant

    def revoke_grant(self, user_id: str, role_id: str, *, target_type: str, target_id: str) -> None:
        if not self.has_grant(user_id, role_id, target_type=target_type, target_id=target_id):
            raise NotFound(f"Could not find role assignment with role: {role_id}.")
        stmt = t.assignments.delete().where(
            *self._grant_clauses(user_id, role_id, target_type, target_id)
        )
        self.write(lambda c: c.execute(stmt))

    def has_grant(self, user_id: str, role_id: str, *, target_type: str, target_id: str) -> bool:
        query = sa.select(sa.func.count()).where(
            *self._grant_clauses(user_id, role_id, target_type, target_id)
        )
        return bool(self.read(lambda c: c.execute(query).scalar()))

    @staticmethod
    def _grant_clauses(
        user_id: str, role_id: str, target_type: str, target_id: str
    ) -> list[sa.ColumnElement[bool]]:
        c = t.assignments.c
        return [
            c.user_id == user_id,
            c.role_id == role_id,
            c.target_type == target_type,
            c.target_id == target_id,
        ]

    def list_assignments(
        self,
        *,
        user_id: str | None = None,
        role_id: str | None = None,
        target_type: str | None = None,
        target_id: str | None = None,
    ) -> list[Assignment]:
        c = t.assignments.c
        query = sa.select(t.assignments).order_by(c.user_id, c.target_id, c.role_id)
        for column, value in (
            (c.user_id, user_id),
            (c.role_id, role_id),
            (c.target_type, target_type),
            (c.target_id, target_id),
        ):
            if value is not None:
                query = query.where(column == value)
        rows = self.read(lambda conn: conn.execute(query).all())
        return [Assignment(*row) for row in rows]

    def effective_role_ids(self, user_id: str, *, target_type: str, target_id: str) -> set[str]:
        """The user's roles on the target, with implied roles added."""
        direct = self.list_assignments(
            user_id=user_id, target_type=target_type, target_id=target_id
        )
        return self.expand_implied(a.role_id for a in direct)

    def roles_by_id(self, role_ids: Iterable[str]) -> list[Role]:
        wanted = set(role_ids)
        return [r for r in self.list_roles() if r.id in wanted]
