"""Who is calling: the request context the API builds once per request.

The auth layer (keystonemiddleware, or the explicit no-auth development mode)
puts a ``RequestContext`` in the WSGI environ under ``ENVIRON_KEY``; routes read
it back with ``context_of``. ``is_admin`` follows Heat's ``context_is_admin``
rule: the admin role in the admin project.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kiln.rpc import messages as m

ENVIRON_KEY = "kiln.context"


@dataclass(frozen=True)
class RequestContext:
    project_id: str
    user_id: str = ""
    user_name: str = ""
    project_name: str = ""
    roles: tuple[str, ...] = ()
    auth_token: str | None = None
    request_id: str = ""
    #: Keystone's is_admin_project flag (True unless the token says otherwise)
    is_admin_project: bool = True
    domain_id: str = "default"
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: resource types the policy denies this caller, for calls that take a template
    denied_resource_types: tuple[str, ...] = ()

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles and self.is_admin_project

    def rpc(self) -> m.Context:
        """The part of the context the engine needs."""
        return m.Context(
            self.project_id,
            self.user_id,
            self.is_admin,
            self.denied_resource_types,
            tuple(self.roles),
            self.auth_token,
        )

    def policy_credentials(self) -> dict[str, Any]:
        """What oslo.policy checks rules against."""
        return {
            "project_id": self.project_id,
            "user_id": self.user_id,
            "roles": list(self.roles),
            "is_admin": self.is_admin,
            "is_admin_project": self.is_admin_project,
        }


def context_of(environ: Mapping[str, Any]) -> RequestContext | None:
    found = environ.get(ENVIRON_KEY)
    return found if isinstance(found, RequestContext) else None
