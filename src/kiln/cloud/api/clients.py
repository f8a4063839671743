"""How the engine gets a cloud client for a stack: a connector, per service and scope.

Service names are the keys plugins pass to ``ctx.client(...)``; each names a Protocol
of this package (``compute`` -> :class:`kiln.cloud.api.compute.ComputeApi`, ...;
``identity`` -> :class:`kiln.cloud.api.identity.StackDomainApi`, which acts as the stack
domain admin whatever the scope).
Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from typing import Any, Protocol

from kiln.cloud.api.scope import CloudScope

#: the services a connector serves, by the name plugins ask for
SERVICES = (
    "compute",
    "network",
    "block_storage",
    "image",
    "load_balancer",
    "alarming",
    "identity",
)


class CloudConnector(Protocol):
    """Clients for one scope: the sandbox's in-process adapter, or a real cloud."""

    def client(self, service: str, scope: CloudScope) -> Any:
        """The client of ``service`` acting for ``scope``; LookupError if not served."""
        ...


class TrustIssuer(Protocol):
    """A connector that acts through Keystone trusts (a real cloud's, or the sandbox's
    over HTTP): a stack's deferred work runs as a trust its owner gave Kiln."""

    def create_trust(self, auth_token: str, scope: CloudScope) -> str:
        """A trust from the token's user (``scope``'s project and roles) to Kiln."""
        ...

    def delete_trust(self, trust_id: str) -> None:
        """Give the trust back (a stack is gone); a trust already gone is fine."""
        ...
