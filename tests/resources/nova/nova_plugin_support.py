"""Shared setup of the OS::Nova plugin tests: a seeded in-process sandbox and plugin contexts.

``Cloud`` holds a fresh simulated cloud (compute, network, image, block storage) and
builds each plugin's context with the real in-process adapters for one project. A
private network with a subnet, routed to the external ``public`` network, is made for
the servers to use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.adapter import BlockStorageAdapter
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.image.adapter import ImageAdapter
from kiln.cloud.sandbox.image.model import ImageModel
from kiln.plugin import Resource
from kiln.testing.plugin_context import FakeContext, fake_resource

R = TypeVar("R", bound=Resource)

PROJECT = "11111111111111111111111111111111"
USER = "22222222222222222222222222222222"


@dataclass
class Cloud:
    """A seeded sandbox and the clients of one project."""

    admin: bool = False
    with_network: bool = True
    software_configs: dict[str, Any] = field(default_factory=dict)
    sandbox: SandboxCloud = field(default_factory=SandboxCloud)

    def __post_init__(self) -> None:
        models: list[tuple[str, Any]] = [("image", ImageModel)]
        if self.with_network:
            # Loaded on demand: tests of types without servers need no network sandbox.
            network = importlib.import_module("kiln.cloud.sandbox.network.model")
            models.append(("network", network.NetworkModel))
        models += [("block_storage", BlockStorageModel), ("compute", ComputeModel)]
        for name, model in models:
            self.sandbox.add(name, model(self.sandbox))
        for service in self.sandbox.services.values():
            service.seed()
        roles = frozenset({"admin", "member"} if self.admin else {"member"})
        self.scope = CloudScope(project_id=PROJECT, user_id=USER, roles=roles)
        self.compute = ComputeAdapter(self.sandbox.compute, self.scope)
        self.image = ImageAdapter(self.sandbox.image, self.scope)
        self.block_storage = BlockStorageAdapter(self.sandbox.block_storage, self.scope)
        if self.with_network:
            adapter = importlib.import_module("kiln.cloud.sandbox.network.adapter")
            self.network = adapter.NetworkAdapter(self.sandbox.network, self.scope)

    def clients(self) -> dict[str, Any]:
        return {
            "compute": self.compute,
            "network": getattr(self, "network", None),
            "image": self.image,
            "block_storage": self.block_storage,
            "software_config": self.software_configs,
        }

    def resource(
        self, plugin: type[R], properties: dict[str, Any], **kw: Any
    ) -> tuple[R, FakeContext]:
        kw.setdefault("project_id", PROJECT)
        return fake_resource(plugin, properties, clients=self.clients(), **kw)

    def private_network(self, name: str = "private", cidr: str = "10.0.0.0/24") -> tuple[str, str]:
        """A tenant network with one subnet, routed to ``public``; (network id, subnet id)."""
        net = self.network.create_network({"name": name})
        subnet = self.network.create_subnet(
            {"name": f"{name}-subnet", "network_id": net.id, "cidr": cidr, "ip_version": 4}
        )
        public = self.network.find_network("public")
        router = self.network.create_router(
            {"name": f"{name}-router", "external_gateway_info": {"network_id": public.id}}
        )
        self.network.add_router_interface(router.id, subnet_id=subnet.id)
        return net.id, subnet.id
