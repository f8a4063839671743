"""The simulated services: where each one's code lives, where it is mounted, how it is listed.

One row per service; everything that builds or serves a sandbox (``build_cloud``, the
dispatcher, the in-process connector, ``kiln all``) reads this table, so adding a service
is one row here plus its package.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServiceSpec:
    """One simulated service."""

    name: str  # the client name plugins ask for (``ctx.client("compute")``)
    package: str  # kiln.cloud.sandbox.<package>
    model: str  # the model class in <package>.model
    adapter: str  # the in-process adapter class in <package>.adapter
    app_factory: str  # the REST app factory in <package>.app
    prefix: str  # where the REST app is mounted (``/compute``)
    #: catalog entries: (service type, service name, path after the prefix)
    catalog: tuple[tuple[str, str, str], ...]

    def _module(self, part: str) -> Any:
        return importlib.import_module(f"kiln.cloud.sandbox.{self.package}.{part}")

    def model_class(self) -> Any:
        return getattr(self._module("model"), self.model)

    def adapter_class(self) -> Any:
        return getattr(self._module("adapter"), self.adapter)

    def create_app(self, cloud: Any, tokens: Any) -> Any:
        return getattr(self._module("app"), self.app_factory)(cloud, tokens)


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec(
        "image",
        "image",
        "ImageModel",
        "ImageAdapter",
        "create_image_app",
        "/image",
        (("image", "glance", ""),),
    ),
    ServiceSpec(
        "network",
        "network",
        "NetworkModel",
        "NetworkAdapter",
        "create_network_app",
        "/network",
        (("network", "neutron", ""),),
    ),
    ServiceSpec(
        "block_storage",
        "block_storage",
        "BlockStorageModel",
        "BlockStorageAdapter",
        "create_block_storage_app",
        "/volume",
        (
            ("block-storage", "cinder", "/v3/%(project_id)s"),
            ("volumev3", "cinderv3", "/v3/%(project_id)s"),
        ),
    ),
    ServiceSpec(
        "compute",
        "compute",
        "ComputeModel",
        "ComputeAdapter",
        "create_compute_app",
        "/compute",
        (("compute", "nova", "/v2.1"),),
    ),
    ServiceSpec(
        "load_balancer",
        "load_balancer",
        "LoadBalancerModel",
        "LoadBalancerAdapter",
        "create_load_balancer_app",
        "/load-balancer",
        (("load-balancer", "octavia", ""),),
    ),
    ServiceSpec(
        "alarming",
        "alarming",
        "AlarmingModel",
        "AlarmingAdapter",
        "create_alarming_app",
        "/alarming",
        (("alarming", "aodh", ""),),
    ),
)

BY_NAME: dict[str, ServiceSpec] = {spec.name: spec for spec in SERVICES}
