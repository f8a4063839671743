"""Stack users: the Keystone users that in-instance agents act as (resource-types.md §0.6).

A resource whose server-side agent must read metadata or send signals (a server with
``user_data_format: SOFTWARE_CONFIG``; later wait condition handles, scaling policies and
deployments) gets a user of its own in the stack user domain. The user lives in the
stack tree's stack-domain project (one per top-level stack, made on first use: see
``ResourceContext.stack_user_project_id``) and holds only the ``heat_stack_user`` role,
which the API's policy lets read metadata and signal, nothing more.

Everything is idempotent, because a step may be re-run after a crash before its resource
data was saved: the user's name is the resource's physical name, so a second create
finds the first user (409) and resets its password. Secrets come from ``secrets``, never
from the (possibly seeded) ``ctx.random``. Imports: kiln.plugin, kiln.cloud.api.
"""

from __future__ import annotations

import secrets
import string
from typing import cast

from kiln.cloud.api.errors import Conflict, NotFound
from kiln.cloud.api.identity import Project, StackDomainApi
from kiln.plugin.context import ResourceContext
from kiln.plugin.resource import ResourceFailure

#: the only role a stack user has
STACK_USER_ROLE = "heat_stack_user"
PROJECT_DESCRIPTION = "Heat stack user project"
#: Keystone's limit on project names
PROJECT_NAME_LIMIT = 64

# resource data keys (Heat's names, so an abandoned stack's data reads the same)
USER_ID = "user_id"
PASSWORD = "password"
ACCESS_KEY = "access_key"
SECRET_KEY = "secret_key"
CREDENTIAL_ID = "credential_id"

_PASSWORD_CHARS = string.ascii_letters + string.digits


def stack_user_project_name(project_id: str, root_stack_id: str) -> str:
    """``<project>-<root stack id>``, cut to Keystone's 64 characters (as Heat names it)."""
    return f"{project_id}-{root_stack_id}"[:PROJECT_NAME_LIMIT]


def make_stack_user_project(
    identity: StackDomainApi, project_id: str, root_stack_id: str
) -> Project:
    """The stack tree's stack-domain project: made, or found when made before (a re-run
    step, or two resources of the stack at once)."""
    name = stack_user_project_name(project_id, root_stack_id)
    try:
        return identity.create_project(name, description=PROJECT_DESCRIPTION)
    except Conflict:
        return identity.find_project(name)


def identity_client(ctx: ResourceContext) -> StackDomainApi:
    """The stack user domain's Keystone; a clear failure when none is configured."""
    try:
        return cast("StackDomainApi", ctx.client("identity"))
    except LookupError as err:
        raise ResourceFailure(
            "Stack users need the stack user domain: configure stack_user_domain_name (or "
            "stack_user_domain_id), stack_domain_admin and stack_domain_admin_password"
        ) from err


class StackUser:
    """The stack user of one resource, through its context."""

    def __init__(self, ctx: ResourceContext) -> None:
        self.ctx = ctx

    @property
    def identity(self) -> StackDomainApi:
        return identity_client(self.ctx)

    @property
    def user_id(self) -> str | None:
        found = self.ctx.data_get(USER_ID)
        return str(found) if found else None

    @property
    def project_id(self) -> str:
        return self.ctx.stack_user_project_id()

    def password(self) -> str:
        """The user's password: the stored one, else a new random one (stored, redacted)."""
        found = self.ctx.data_get(PASSWORD)
        if found:
            return str(found)
        made = "".join(secrets.choice(_PASSWORD_CHARS) for _ in range(32))
        self.ctx.data_set(PASSWORD, made, redact=True)
        return made

    def create(self) -> str:
        """Make the user (or find the one a cut-short step made); its id."""
        existing = self.user_id
        if existing:
            return existing
        identity = self.identity
        project_id = self.project_id
        password = self.password()
        name = self.ctx.physical_resource_name()
        try:
            user_id = identity.create_user(name, project_id=project_id, password=password).id
        except Conflict:
            user_id = identity.find_user(name).id
            identity.update_user(user_id, enabled=True, password=password)
        role = identity.find_role(STACK_USER_ROLE)
        identity.grant_project_role(project_id, user_id, role.id)
        self.ctx.data_set(USER_ID, user_id)
        return user_id

    def keypair(self) -> tuple[str, str]:
        """The user's EC2 access and secret keys, made on first use."""
        access, secret = self.ctx.data_get(ACCESS_KEY), self.ctx.data_get(SECRET_KEY)
        if access and secret:
            return str(access), str(secret)
        user_id = self.create()
        access, secret = secrets.token_hex(16), secrets.token_hex(16)
        credential = self.identity.create_ec2_credential(
            user_id, self.project_id, access=access, secret=secret
        )
        self.ctx.data_set(ACCESS_KEY, access)
        self.ctx.data_set(SECRET_KEY, secret, redact=True)
        self.ctx.data_set(CREDENTIAL_ID, credential.id)
        return access, secret

    def token(self) -> str:
        """A token of the user, scoped to the stack-domain project."""
        user_id = self.create()
        return self.identity.user_token(user_id, self.password(), self.project_id)

    def set_enabled(self, enabled: bool) -> None:
        """Disable (suspend) or enable (resume) the user; nothing when there is none."""
        if self.user_id:
            try:
                self.identity.update_user(self.user_id, enabled=enabled)
            except NotFound:
                pass

    def delete(self) -> None:
        """Remove the user's EC2 credentials, then the user; what is gone already is fine."""
        user_id = self.user_id
        if user_id is None:
            user_id = self._find_by_name()
        if user_id is None:
            return
        identity = self.identity
        for credential in identity.list_ec2_credentials(user_id):
            try:
                identity.delete_credential(credential.id)
            except NotFound:
                pass
        try:
            identity.delete_user(user_id)
        except NotFound:
            pass
        for key in (USER_ID, PASSWORD, ACCESS_KEY, SECRET_KEY, CREDENTIAL_ID):
            self.ctx.data_delete(key)

    def _find_by_name(self) -> str | None:
        """A user a create made before its step's data was saved (a crash in between)."""
        try:
            identity = identity_client(self.ctx)
        except ResourceFailure:
            return None  # no stack user domain: no user was ever made
        try:
            return identity.find_user(self.ctx.physical_resource_name()).id
        except NotFound:
            return None
