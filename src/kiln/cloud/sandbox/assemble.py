"""Build a complete simulated cloud, and serve it over HTTP on one port.

``build_cloud`` makes the store (persistent when given a database), the simulator and
one model per service, and seeds the default fixtures. ``create_sandbox_app`` puts every
service's REST app, the identity service and the ``/_sim`` control endpoint behind one
path dispatcher, the way devstack lays out a cloud on one host:
``/compute/v2.1``, ``/network/v2.0``, ``/volume/v3``, ``/image/v2``, ``/load-balancer/v2``,
``/alarming/v2``, ``/_sim``, and identity at ``/v3``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Engine

from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.dispatch import PrefixDispatcher, WsgiApp
from kiln.cloud.sandbox.identity.catalog import CatalogEntry
from kiln.cloud.sandbox.rest import TokenValidator
from kiln.cloud.sandbox.services import BY_NAME, SERVICES
from kiln.cloud.sandbox.simulator import SandboxConfig, Simulator
from kiln.cloud.sandbox.store import DocumentStore

ALL_SERVICES: tuple[str, ...] = tuple(spec.name for spec in SERVICES)


def available_services() -> tuple[str, ...]:
    """The services whose code is installed (a plugin package may add or leave out some)."""
    return tuple(
        spec.name
        for spec in SERVICES
        if importlib.util.find_spec(f"kiln.cloud.sandbox.{spec.package}.model") is not None
    )


def build_cloud(
    *,
    engine: Engine | None = None,
    config: SandboxConfig | None = None,
    services: Iterable[str] = ALL_SERVICES,
    seed: bool = True,
) -> SandboxCloud:
    """A simulated cloud with the given services (all by default), seeded."""
    cloud = SandboxCloud(store=DocumentStore(engine), sim=Simulator(config))
    names = list(services)
    for name in names:
        spec = BY_NAME[name]
        cloud.add(name, spec.model_class()(cloud))
    if seed:
        for name in names:
            cloud.services[name].seed()
    return cloud


def catalog_entries(base_url: str, services: Iterable[str] = ALL_SERVICES) -> list[CatalogEntry]:
    """The identity catalog entries of the simulated services served at ``base_url``."""
    entries: list[CatalogEntry] = []
    for name in services:
        spec = BY_NAME[name]
        for service_type, service_name, suffix in spec.catalog:
            entries.append(
                CatalogEntry(service_type, service_name, f"{base_url}{spec.prefix}{suffix}")
            )
    return entries


def create_sandbox_app(
    cloud: SandboxCloud,
    tokens: TokenValidator,
    identity_app: WsgiApp,
    *,
    control_app: WsgiApp | None = None,
    services: Iterable[str] | None = None,
) -> Callable[..., Any]:
    """One WSGI app serving identity at the root and every service under its prefix."""
    mounts: dict[str, WsgiApp] = {}
    for name in services if services is not None else list(cloud.services):
        spec = BY_NAME[name]
        mounts[spec.prefix] = spec.create_app(cloud, tokens)
    if control_app is not None:
        mounts["/_sim"] = control_app
    return PrefixDispatcher(mounts, default=identity_app)
