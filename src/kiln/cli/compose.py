"""The composition root: one engine (service, handlers, workers) over one database.

``kiln all``, ``kiln engine``, the API tests and the benchmarks build their
engine here, so every mode runs the same wiring.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from kiln.cli.global_environment import packaged_global_environment
from kiln.cloud.api.clients import CloudConnector
from kiln.core.clock import Clock, SystemClock
from kiln.db.engine import create_engine
from kiln.db.migrate import upgrade
from kiln.db.software import StoredConfigs
from kiln.engine.catalog_handlers import REPORT_INTERVAL, CatalogHandlers
from kiln.engine.cloud_constraints import register_cloud_constraints
from kiln.engine.handlers import EngineHandlers
from kiln.engine.resource_handlers import ResourceHandlers
from kiln.engine.service import StackService
from kiln.engine.software_handlers import SoftwareHandlers
from kiln.engine.steps import EngineDeps
from kiln.engine.worker import EngineRuntime, Notifier
from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import GlobalEnvironment


@dataclass
class EngineParts:
    deps: EngineDeps
    service: StackService
    notifier: Notifier
    handlers: dict[type, Callable[[Any], Any]] = field(default_factory=dict)
    runtime: EngineRuntime | None = None

    def start(
        self, threads: int = 4, *, heartbeat_interval: float = 5.0, idle_poll: float = 1.0
    ) -> EngineRuntime:
        self.runtime = EngineRuntime(
            self.deps,
            threads=threads,
            notifier=self.notifier,
            heartbeat_interval=heartbeat_interval,
            idle_poll=idle_poll,
        )
        self.runtime.start()
        return self.runtime

    def stop(self) -> None:
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None


def open_database(url: str, *, migrate: bool = True) -> Engine:
    db = create_engine(url)
    if migrate:
        upgrade(db)
    return db


def _constraints(registry: PluginRegistry, with_cloud: bool) -> CustomConstraints:
    custom = registry.custom_constraints(CustomConstraints.offline())
    return register_cloud_constraints(custom) if with_cloud else custom


def build_engine(
    db: Engine,
    *,
    engine_id: str | None = None,
    clock: Clock | None = None,
    clients: Mapping[str, Any] | None = None,
    registry: PluginRegistry | None = None,
    max_events_per_stack: int = 1000,
    max_concurrent_tasks_per_stack: int = 64,
    cloud: CloudConnector | None = None,
    global_environment: GlobalEnvironment | None = None,
    heartbeat_interval: float = REPORT_INTERVAL,
    **settings: Any,
) -> EngineParts:
    """``settings``: further ``EngineDeps`` fields (``lease``, ``limits``,
    ``default_timeout_mins``). ``global_environment`` goes with the plugins discovered
    here (default: the one Kiln ships); a given ``registry`` keeps its own."""
    if registry is None:
        registry = PluginRegistry.discover(
            global_environment=global_environment or packaged_global_environment()
        )
    notifier = Notifier()
    deps = EngineDeps(
        db=db,
        registry=registry,
        custom=_constraints(registry, cloud is not None),
        clock=clock or SystemClock(),
        engine_id=engine_id or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}",
        clients=dict(clients or {}),
        max_events_per_stack=max_events_per_stack,
        max_concurrent_tasks_per_stack=max_concurrent_tasks_per_stack,
        wake=notifier.notify,
        cloud=cloud,
        **settings,
    )
    deps.clients = {"software_config": StoredConfigs(db), **deps.clients}
    service = StackService(deps, wake=notifier.notify)
    handlers = EngineHandlers(service).table()
    # the services listing judges engines by the interval they really report at
    handlers.update(CatalogHandlers(service, report_interval=heartbeat_interval).table())
    handlers.update(SoftwareHandlers(service).table())
    handlers.update(ResourceHandlers(service).table())
    return EngineParts(deps, service, notifier, handlers)
