"""The in-process cloud connector: plugins call the sandbox's models directly, no HTTP.

Each call of :meth:`SandboxConnector.client` returns the service's in-process adapter
acting for the given scope; the adapter runs the same model code the REST apps run, so
the two paths see one state. ``identity`` is served when the connector is given the
sandbox's Keystone (:class:`SandboxIdentity`): its client acts as the stack domain admin,
whatever the scope.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.identity.adapter import SandboxIdentity, StackDomainAdapter
from kiln.cloud.sandbox.services import BY_NAME


class SandboxConnector:
    """Clients of the simulated cloud, in process."""

    def __init__(self, cloud: SandboxCloud, *, identity: SandboxIdentity | None = None) -> None:
        self.cloud = cloud
        self._adapters: dict[str, Any] = {}
        self._identity = StackDomainAdapter(identity) if identity is not None else None

    def client(self, service: str, scope: CloudScope) -> Any:
        if service == "identity":
            if self._identity is None:
                raise LookupError("the sandbox connector has no identity service")
            return self._identity
        model = self.cloud.services.get(service)
        if model is None:
            raise LookupError(f"the sandbox does not simulate {service}")
        adapter = self._adapters.get(service)
        if adapter is None:
            adapter = self._adapters[service] = BY_NAME[service].adapter_class()
        return adapter(model, scope)
