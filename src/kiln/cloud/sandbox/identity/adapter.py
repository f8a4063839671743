"""The in-process :class:`~kiln.cloud.api.identity.StackDomainApi`: the identity store, no HTTP.

It acts as the stack domain admin does over REST, with the same limits: objects outside
the stack-user domain are Forbidden (or, for lookups by name, not found), and the admin
role is never granted. Records hold the JSON documents the REST routes return, and the
identity service's own errors become :mod:`kiln.cloud.api.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from kiln.cloud.api.errors import Forbidden, NotFound, error_for_status
from kiln.cloud.api.identity import (
    Ec2Credential,
    Project,
    Role,
    User,
    ec2_blob,
    password_auth,
)
from kiln.cloud.sandbox.identity import documents
from kiln.cloud.sandbox.identity.authenticate import authenticate
from kiln.cloud.sandbox.identity.ec2 import (
    create_credential,
    delete_credential,
    get_credential,
    list_credentials,
)
from kiln.cloud.sandbox.identity.errors import IdentityError
from kiln.cloud.sandbox.identity.store import IdentityStore
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.cloud.sandbox.identity.web import FORBIDDEN

T = TypeVar("T")


@dataclass(frozen=True)
class SandboxIdentity:
    """What the in-process identity client needs: the sandbox's Keystone and its domain."""

    store: IdentityStore
    tokens: TokenService
    #: the stack-user domain (bootstrap's ``heat``)
    domain_id: str
    #: the identity URL the sandbox serves (``http://host:5000/v3``)
    auth_url: str


@contextmanager
def _cloud_errors() -> Iterator[None]:
    """The identity service's errors as the cloud API's (the status decides the class)."""
    try:
        yield
    except IdentityError as exc:
        raise error_for_status(exc.http_status, exc.message, service="identity") from exc


class StackDomainAdapter:
    """StackDomainApi over :class:`SandboxIdentity`, in process."""

    def __init__(self, identity: SandboxIdentity) -> None:
        self.identity = identity
        self.store = identity.store
        # the base URL of the links in documents, as the REST routes build them
        self._base = identity.auth_url.rstrip("/").removesuffix("/v3")

    @property
    def domain_id(self) -> str:
        return self.identity.domain_id

    @property
    def auth_url(self) -> str:
        return self.identity.auth_url

    def _call(self, fn: Callable[[], T]) -> T:
        with _cloud_errors():
            return fn()

    def _in_domain(self, domain_id: str) -> None:
        if domain_id != self.domain_id:
            raise Forbidden(FORBIDDEN, service="identity")

    # -- projects -------------------------------------------------------------------------
    def create_project(self, name: str, *, description: str = "") -> Project:
        project = self._call(
            lambda: self.store.create_project(
                name, domain_id=self.domain_id, description=description
            )
        )
        return Project(documents.project_doc(project, self._base))

    def find_project(self, name: str) -> Project:
        found = self._call(lambda: self.store.list_projects(name=name, domain_id=self.domain_id))
        if not found:
            raise NotFound(f"Could not find project: {name}.", service="identity")
        return Project(documents.project_doc(found[0], self._base))

    def delete_project(self, project_id: str) -> None:
        self._in_domain(self._call(lambda: self.store.get_project(project_id)).domain_id)
        self._call(lambda: self.store.delete_project(project_id))

    # -- users ----------------------------------------------------------------------------
    def create_user(self, name: str, *, project_id: str, password: str) -> User:
        self._in_domain(self._call(lambda: self.store.get_project(project_id)).domain_id)
        user = self._call(
            lambda: self.store.create_user(
                name, domain_id=self.domain_id, password=password, default_project_id=project_id
            )
        )
        return User(documents.user_doc(user, self._base))

    def find_user(self, name: str) -> User:
        found = self._call(lambda: self.store.list_users(name=name, domain_id=self.domain_id))
        if not found:
            raise NotFound(f"Could not find user: {name}.", service="identity")
        return User(documents.user_doc(found[0], self._base))

    def update_user(
        self, user_id: str, *, enabled: bool | None = None, password: str | None = None
    ) -> User:
        self._in_domain(self._call(lambda: self.store.get_user(user_id)).domain_id)
        changes: dict[str, object] = {}
        if enabled is not None:
            changes["enabled"] = enabled
        if password is not None:
            changes["password"] = password
        user = self._call(lambda: self.store.update_user(user_id, **changes))
        return User(documents.user_doc(user, self._base))

    def delete_user(self, user_id: str) -> None:
        self._in_domain(self._call(lambda: self.store.get_user(user_id)).domain_id)
        self._call(lambda: self.store.delete_user(user_id))

    # -- roles ----------------------------------------------------------------------------
    def find_role(self, name: str) -> Role:
        role = self._call(lambda: self.store.find_role(name=name))
        return Role(documents.role_doc(role, self._base))

    def grant_project_role(self, project_id: str, user_id: str, role_id: str) -> None:
        store = self.store
        self._in_domain(self._call(lambda: store.get_project(project_id)).domain_id)
        self._in_domain(self._call(lambda: store.get_user(user_id)).domain_id)
        self._call(lambda: store.get_role(role_id))
        # as over REST: a domain admin hands out no role that makes a cloud admin
        if any(r.name == "admin" for r in store.roles_by_id(store.expand_implied([role_id]))):
            raise Forbidden(FORBIDDEN, service="identity")
        self._call(
            lambda: store.grant(user_id, role_id, target_type="project", target_id=project_id)
        )

    # -- EC2 credentials ------------------------------------------------------------------
    def create_ec2_credential(
        self, user_id: str, project_id: str, *, access: str, secret: str
    ) -> Ec2Credential:
        self._in_domain(self._call(lambda: self.store.get_user(user_id)).domain_id)
        blob = ec2_blob(access, secret)
        credential = self._call(
            lambda: create_credential(
                self.store, user_id=user_id, type="ec2", blob=blob, project_id=project_id
            )
        )
        return Ec2Credential(documents.credential_doc(credential, self._base))

    def list_ec2_credentials(self, user_id: str) -> list[Ec2Credential]:
        # as over REST: the credentials of a user the admin may not see are not listed
        try:
            user = self._call(lambda: self.store.get_user(user_id))
        except NotFound:
            return []
        if user.domain_id != self.domain_id:
            return []
        found = self._call(lambda: list_credentials(self.store, user_id=user_id, type="ec2"))
        return [Ec2Credential(documents.credential_doc(c, self._base)) for c in found]

    def delete_credential(self, credential_id: str) -> None:
        credential = self._call(lambda: get_credential(self.store, credential_id))
        self._in_domain(self._call(lambda: self.store.get_user(credential.user_id)).domain_id)
        self._call(lambda: delete_credential(self.store, credential_id))

    # -- tokens ---------------------------------------------------------------------------
    def user_token(self, user_id: str, password: str, project_id: str) -> str:
        body = password_auth(user_id, password, project_id)
        token_id, _info = self._call(lambda: authenticate(self.store, self.identity.tokens, body))
        return token_id
