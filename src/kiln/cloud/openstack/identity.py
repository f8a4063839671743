"""The :class:`~kiln.cloud.api.identity.StackDomainApi` of a real Keystone over REST.

The connection is the stack domain admin's own (``OpenStackConnector.from_config``'s
``stack_domain`` settings): a user of the stack-user domain with a token scoped to that
domain, as Heat's ``stack_domain_admin``. Paths start after ``/v3`` (openstacksdk's
identity adapter discovers the version). A stack user's token is asked for without the
admin's token, with the user's own password.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from keystoneauth1 import exceptions as ksa_exc

from kiln.cloud.api.errors import NotFound, Unavailable, error_for_status
from kiln.cloud.api.identity import (
    Ec2Credential,
    Project,
    Role,
    User,
    ec2_blob,
    password_auth,
)
from kiln.cloud.openstack.rest import RestClient, error_message


def stack_domain_auth(
    *,
    auth_url: str,
    username: str,
    password: str,
    domain_id: str | None = None,
    domain_name: str | None = None,
) -> dict[str, Any]:
    """keystoneauth password settings of a stack domain admin: a user of the stack-user
    domain, scoped to that domain (by id when known, else by name)."""
    if domain_id:
        return {
            "auth_url": auth_url,
            "username": username,
            "password": password,
            "user_domain_id": domain_id,
            "domain_id": domain_id,
        }
    if not domain_name:
        raise ValueError("the stack-user domain needs an id or a name")
    return {
        "auth_url": auth_url,
        "username": username,
        "password": password,
        "user_domain_name": domain_name,
        "domain_name": domain_name,
    }


def _path(kind: str, object_id: str, tail: str = "") -> str:
    return f"/{kind}/{quote(object_id, safe='')}{tail}"


class OpenStackStackDomain:
    """Keystone v3 as the stack domain admin, through a :class:`RestClient` over
    ``conn.identity`` of the admin's domain-scoped connection."""

    def __init__(self, rest: RestClient, *, auth_url: str) -> None:
        self.rest = rest
        url = auth_url.rstrip("/")
        # agents post to <auth_url>/auth/tokens: name the version an unversioned URL lacks
        self._auth_url = url if url.endswith("/v3") else f"{url}/v3"
        self._domain_id: str | None = None

    @property
    def domain_id(self) -> str:
        """The domain of the admin's token (known once it has authenticated)."""
        if self._domain_id is None:
            adapter = self.rest.proxy
            try:
                access = adapter.session.auth.get_access(adapter.session)
            except ksa_exc.ClientException as exc:
                status = getattr(exc, "http_status", None) or 503
                raise error_for_status(status, str(exc), service="identity") from exc
            if not access.domain_id:
                raise error_for_status(
                    400, "the stack domain admin's token is not domain-scoped", service="identity"
                )
            self._domain_id = str(access.domain_id)
        return self._domain_id

    @property
    def auth_url(self) -> str:
        return self._auth_url

    # -- projects -------------------------------------------------------------------------
    def create_project(self, name: str, *, description: str = "") -> Project:
        body = {"project": {"name": name, "domain_id": self.domain_id, "description": description}}
        return Project(self.rest.post("/projects", body)["project"])

    def find_project(self, name: str) -> Project:
        found = self.rest.get("/projects", params={"name": name, "domain_id": self.domain_id})
        projects = (found or {}).get("projects") or []
        if not projects:
            raise NotFound(f"Could not find project: {name}.", service="identity")
        return Project(projects[0])

    def delete_project(self, project_id: str) -> None:
        self.rest.delete(_path("projects", project_id))

    # -- users ----------------------------------------------------------------------------
    def create_user(self, name: str, *, project_id: str, password: str) -> User:
        body = {
            "user": {
                "name": name,
                "domain_id": self.domain_id,
                "default_project_id": project_id,
                "password": password,
                "enabled": True,
            }
        }
        return User(self.rest.post("/users", body)["user"])

    def find_user(self, name: str) -> User:
        found = self.rest.get("/users", params={"name": name, "domain_id": self.domain_id})
        users = (found or {}).get("users") or []
        if not users:
            raise NotFound(f"Could not find user: {name}.", service="identity")
        return User(users[0])

    def update_user(
        self, user_id: str, *, enabled: bool | None = None, password: str | None = None
    ) -> User:
        changes: dict[str, Any] = {}
        if enabled is not None:
            changes["enabled"] = enabled
        if password is not None:
            changes["password"] = password
        return User(self.rest.patch(_path("users", user_id), {"user": changes})["user"])

    def delete_user(self, user_id: str) -> None:
        self.rest.delete(_path("users", user_id))

    # -- roles ----------------------------------------------------------------------------
    def find_role(self, name: str) -> Role:
        found = self.rest.get("/roles", params={"name": name})
        roles = (found or {}).get("roles") or []
        if not roles:
            raise NotFound(f"Could not find role: {name}.", service="identity")
        return Role(roles[0])

    def grant_project_role(self, project_id: str, user_id: str, role_id: str) -> None:
        path = _path("projects", project_id, _path("users", user_id, _path("roles", role_id)))
        self.rest.put(path)

    # -- EC2 credentials ------------------------------------------------------------------
    def create_ec2_credential(
        self, user_id: str, project_id: str, *, access: str, secret: str
    ) -> Ec2Credential:
        body = {
            "credential": {
                "type": "ec2",
                "user_id": user_id,
                "project_id": project_id,
                "blob": ec2_blob(access, secret),
            }
        }
        return Ec2Credential(self.rest.post("/credentials", body)["credential"])

    def list_ec2_credentials(self, user_id: str) -> list[Ec2Credential]:
        found = self.rest.get("/credentials", params={"user_id": user_id, "type": "ec2"})
        return [Ec2Credential(c) for c in (found or {}).get("credentials") or []]

    def delete_credential(self, credential_id: str) -> None:
        self.rest.delete(_path("credentials", credential_id))

    # -- tokens ---------------------------------------------------------------------------
    def user_token(self, user_id: str, password: str, project_id: str) -> str:
        body = password_auth(user_id, password, project_id)
        session = self.rest.proxy.session
        try:
            response = session.post(
                f"{self._auth_url}/auth/tokens",
                json=body,
                params={"nocatalog": ""},
                authenticated=False,
                endpoint_filter=None,
                raise_exc=False,
            )
        except (ksa_exc.ConnectionError, ksa_exc.ConnectTimeout, ksa_exc.RequestTimeout) as exc:
            raise Unavailable(f"identity: {exc}", service="identity") from exc
        if response.status_code >= 400:
            message, kind = error_message(_json(response), response.text)
            raise error_for_status(response.status_code, message, kind=kind, service="identity")
        return str(response.headers["X-Subject-Token"])


def _json(response: Any) -> Mapping[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
