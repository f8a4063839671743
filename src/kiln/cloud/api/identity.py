"""The identity client contract (Keystone v3) of Heat's stack-user machinery.

Types that take signals from inside servers (wait condition handles, scaling policies,
software deployments) give each stack a project in the stack-user domain, a user in it
with the ``heat_stack_user`` role, and maybe an EC2 key pair or a token for that user
(reference resource-types.md 0.6). The client acts as the configured **stack domain
admin**, a user scoped to that domain only: whichever stack asks, these objects live
apart from the stack's own project, and the admin can touch nothing outside the domain
(a 403 is :class:`~kiln.cloud.api.errors.Forbidden`). Records hold Keystone's JSON
(``{"project": {...}}`` unwrapped). Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from kiln.cloud.api.records import Record


class Project(Record):
    """A Keystone project."""

    @property
    def domain_id(self) -> str | None:
        return self.raw.get("domain_id")


class User(Record):
    """A Keystone user (never with its password)."""

    @property
    def domain_id(self) -> str | None:
        return self.raw.get("domain_id")

    @property
    def default_project_id(self) -> str | None:
        return self.raw.get("default_project_id")

    @property
    def enabled(self) -> bool:
        return bool(self.raw.get("enabled", True))


class Role(Record):
    """A Keystone role."""


def ec2_blob(access: str, secret: str) -> str:
    """The ``blob`` of an ``ec2`` credential (what :class:`Ec2Credential` reads back)."""
    return json.dumps({"access": access, "secret": secret})


def password_auth(user_id: str, password: str, project_id: str) -> dict[str, Any]:
    """``POST /v3/auth/tokens`` body: password auth as a user, scoped to a project."""
    return {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"id": user_id, "password": password}},
            },
            "scope": {"project": {"id": project_id}},
        }
    }


class Ec2Credential(Record):
    """A credential of type ``ec2``: its JSON ``blob`` holds the access key and secret."""

    @property
    def _blob(self) -> dict[str, Any]:
        blob = self.raw.get("blob") or "{}"
        parsed = json.loads(blob) if isinstance(blob, str) else blob
        return parsed if isinstance(parsed, dict) else {}

    @property
    def access(self) -> str:
        return str(self._blob.get("access", ""))

    @property
    def secret(self) -> str:
        return str(self._blob.get("secret", ""))

    @property
    def user_id(self) -> str | None:
        return self.raw.get("user_id")

    @property
    def project_id(self) -> str | None:
        return self.raw.get("project_id")


class StackDomainApi(Protocol):
    """Keystone v3 as the stack domain admin (domain-scoped; the stack's scope is unused)."""

    @property
    def domain_id(self) -> str:
        """The stack-user domain's id."""
        ...

    @property
    def auth_url(self) -> str:
        """The public Keystone v3 URL agents inside servers use (``http://host:5000/v3``)."""
        ...

    def create_project(self, name: str, *, description: str = "") -> Project:
        """POST /v3/projects in the stack domain; Conflict when the name is taken there."""
        ...

    def find_project(self, name: str) -> Project:
        """GET /v3/projects?name=&domain_id= (the stack domain); NotFound."""
        ...

    def delete_project(self, project_id: str) -> None:
        """DELETE /v3/projects/{id}; NotFound when gone."""
        ...

    def create_user(self, name: str, *, project_id: str, password: str) -> User:
        """POST /v3/users in the stack domain, ``default_project_id`` set; Conflict."""
        ...

    def find_user(self, name: str) -> User:
        """GET /v3/users?name=&domain_id= (the stack domain); NotFound."""
        ...

    def update_user(
        self, user_id: str, *, enabled: bool | None = None, password: str | None = None
    ) -> User:
        """PATCH /v3/users/{id} with what is given (suspend/resume, a new password)."""
        ...

    def delete_user(self, user_id: str) -> None:
        """DELETE /v3/users/{id} (its credentials and grants go with it); NotFound."""
        ...

    def find_role(self, name: str) -> Role:
        """GET /v3/roles?name=; NotFound."""
        ...

    def grant_project_role(self, project_id: str, user_id: str, role_id: str) -> None:
        """PUT /v3/projects/{p}/users/{u}/roles/{r}; granting twice is harmless."""
        ...

    def create_ec2_credential(
        self, user_id: str, project_id: str, *, access: str, secret: str
    ) -> Ec2Credential:
        """POST /v3/credentials, type ``ec2``, blob ``{"access", "secret"}``."""
        ...

    def list_ec2_credentials(self, user_id: str) -> list[Ec2Credential]:
        """GET /v3/credentials?user_id=&type=ec2."""
        ...

    def delete_credential(self, credential_id: str) -> None:
        """DELETE /v3/credentials/{id}; NotFound when gone."""
        ...

    def user_token(self, user_id: str, password: str, project_id: str) -> str:
        """POST /v3/auth/tokens, password auth as the user scoped to the project: the
        token id (X-Subject-Token). Unauthorized when the password is wrong, the user
        is disabled or has no role there."""
        ...


# CONTRACT READY
