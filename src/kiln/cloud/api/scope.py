"""Who a cloud call is made for: a project, a user and their roles.

The engine builds one scope per stack (its project and owner); the sandbox checks
project ownership and admin-only operations against it; the openstacksdk adapter
authenticates as it (a trust, or configured credentials). Imports: stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CloudScope:
    """The project, user and roles a call acts for."""

    project_id: str
    user_id: str = ""
    roles: frozenset[str] = field(default_factory=frozenset)
    #: a Keystone trust the engine holds for the stack (deferred work), when there is one
    trust_id: str | None = None

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles


#: who is calling the cloud right now (``<stack id>/<resource name>`` while the engine
#: runs a resource's step): clouds that keep a call log record it, so every call can be
#: traced back to the resource that made it
call_origin: ContextVar[str | None] = ContextVar("kiln_cloud_call_origin", default=None)

#: the HTTP header that carries the origin to a cloud over its REST APIs
ORIGIN_HEADER = "X-Kiln-Origin"


@contextmanager
def calling_for(origin: str | None) -> Iterator[None]:
    """Tag the cloud calls made inside the block with ``origin``."""
    token = call_origin.set(origin)
    try:
        yield
    finally:
        call_origin.reset(token)
