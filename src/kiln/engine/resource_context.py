"""The ResourceContext the engine gives a plugin for one step of one action.

Writes are buffered: the physical id and data store changes are persisted by
the engine together with the step's outcome (phase, cookie, completion), in
one transaction. A step that crashes half-way persisted nothing, so the
resumed step starts again from the last recorded phase.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kiln.cloud.api.clients import CloudConnector
from kiln.cloud.api.scope import CloudScope
from kiln.core.clock import Clock
from kiln.db.resources import ResourceDatum
from kiln.plugin.names import physical_resource_name

_DELETED = object()


@dataclass(frozen=True)
class ScopedCloud:
    """Cloud clients acting for one stack's project and owner."""

    connector: CloudConnector
    scope: CloudScope

    def client(self, service: str) -> Any:
        return self.connector.client(service, self.scope)


@dataclass
class EngineResourceContext:
    """One resource's view during one step."""

    name: str
    type_name: str
    stack_name: str
    stack_id: str
    project_id: str
    action: str
    properties: Mapping[str, Any]
    metadata: Any
    resource_uuid: str
    clock: Clock
    stored_physical_id: str | None
    stored_data: Mapping[str, ResourceDatum]
    clients: Mapping[str, Any] = field(default_factory=dict)
    update_policy: Mapping[str, Any] = field(default_factory=dict)
    name_limit: int = 255
    rng: random.Random = field(default_factory=random.SystemRandom)
    #: the stack's cloud (clients acting for its project), when one is configured
    cloud: ScopedCloud | None = None
    #: makes (once) and returns the stack tree's stack-domain project
    stack_user_project: Callable[[], str] | None = None
    pending_physical_id: Any = _DELETED
    pending_data: dict[str, tuple[Any, bool] | None] = field(default_factory=dict)

    # -- identity -------------------------------------------------------------------
    @property
    def physical_id(self) -> str | None:
        if self.pending_physical_id is not _DELETED:
            return self.pending_physical_id  # type: ignore[no-any-return]
        return self.stored_physical_id

    def set_physical_id(self, physical_id: str | None) -> None:
        self.pending_physical_id = physical_id

    @property
    def physical_id_changed(self) -> bool:
        return self.pending_physical_id is not _DELETED

    def physical_resource_name(self) -> str:
        return physical_resource_name(
            self.stack_name, self.name, self.resource_uuid, self.name_limit
        )

    def metadata_set(self, metadata: Any) -> None:
        # written with the step's outcome, like the properties (see _complete)
        self.metadata = metadata

    def stack_user_project_id(self) -> str:
        if self.stack_user_project is None:
            raise LookupError("no identity service is configured for stack users")
        return self.stack_user_project()

    # -- data store -------------------------------------------------------------------
    def data_get(self, key: str, default: Any = None) -> Any:
        if key in self.pending_data:
            pending = self.pending_data[key]
            return default if pending is None else pending[0]
        stored = self.stored_data.get(key)
        return default if stored is None else json.loads(stored.value)

    def data_set(self, key: str, value: Any, *, redact: bool = False) -> None:
        self.pending_data[key] = (value, redact)

    def data_delete(self, key: str) -> None:
        self.pending_data[key] = None

    # -- the world ----------------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock.now()

    @property
    def random(self) -> random.Random:
        return self.rng

    def client(self, service: str) -> Any:
        client = self.clients.get(service)
        if client is not None:
            return client
        if self.cloud is not None:
            return self.cloud.client(service)
        raise LookupError(f"no {service} client is configured")
