"""One simulated cloud: the shared store and simulator, and one model per service.

Service models (``kiln.cloud.sandbox.<service>.model``) are plain classes constructed as
``Model(cloud)``; they reach each other through this object at call time
(``self.cloud.network.bind_port(...)``), never at construction, so the order they are
built in does not matter. ``kiln.cloud.sandbox.assemble.build_cloud`` builds a complete one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kiln.cloud.sandbox.simulator import Simulator
from kiln.cloud.sandbox.store import DocumentStore


@dataclass
class SandboxCloud:
    """The state of the simulated cloud and its services."""

    store: DocumentStore = field(default_factory=DocumentStore)
    sim: Simulator = field(default_factory=Simulator)
    #: the service models by catalog name; also reachable as attributes
    services: dict[str, Any] = field(default_factory=dict)
    #: where the simulated services are reached over HTTP (filled by whoever serves them)
    public_urls: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, model: Any) -> None:
        self.services[name] = model

    def __getattr__(self, name: str) -> Any:
        services = self.__dict__.get("services", {})
        if name in services:
            return services[name]
        raise AttributeError(name)

    # -- helpers shared by the models ------------------------------------------------
    @staticmethod
    def new_id() -> str:
        return str(uuid.uuid4())

    def timestamp(self) -> str:
        """Now, as OpenStack writes it (``2024-05-01T12:00:00Z``)."""
        now = datetime.fromtimestamp(self.store.now(), UTC)
        return now.strftime("%Y-%m-%dT%H:%M:%SZ")
