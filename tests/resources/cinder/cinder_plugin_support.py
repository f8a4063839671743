"""Shared setup of the OS::Cinder plugin tests: a sandbox with Cinder, Nova and Glance.

The store's clock is a number the test moves (``sandbox.clock.advance``), so a transition
given a delay (``sandbox.cloud.sim.delays[...]``) stays in progress until the test lets
time pass. Servers for attachments boot ``cirros`` on ``m1.tiny`` without networks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.adapter import BlockStorageAdapter
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.image.adapter import ImageAdapter
from kiln.cloud.sandbox.image.model import ImageModel
from kiln.cloud.sandbox.network.adapter import NetworkAdapter
from kiln.cloud.sandbox.network.model import NetworkModel
from kiln.cloud.sandbox.store import DocumentStore

PROJECT = "project"  # FakeContext's default project
ADMIN = frozenset({"admin"})


@dataclass
class ManualClock:
    """Seconds since the epoch, moved only by the test."""

    now: float = 1_767_225_600.0  # 2026-01-01

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class CinderSandbox:
    """A seeded sandbox with block storage, compute, network and image services."""

    clock: ManualClock = field(default_factory=ManualClock)
    cloud: SandboxCloud = field(init=False)

    def __post_init__(self) -> None:
        self.cloud = SandboxCloud(store=DocumentStore(now=self.clock))
        self.cloud.add("block_storage", BlockStorageModel(self.cloud))
        self.cloud.add("compute", ComputeModel(self.cloud))
        self.cloud.add("network", NetworkModel(self.cloud))
        self.cloud.add("image", ImageModel(self.cloud))
        for model in self.cloud.services.values():
            model.seed()

    def scope(self, admin: bool = False) -> CloudScope:
        return CloudScope(project_id=PROJECT, roles=ADMIN if admin else frozenset())

    def volumes(self, admin: bool = False) -> BlockStorageAdapter:
        return BlockStorageAdapter(self.cloud.block_storage, self.scope(admin))

    def compute(self) -> ComputeAdapter:
        return ComputeAdapter(self.cloud.compute, self.scope())

    def clients(self, admin: bool = False) -> dict[str, Any]:
        scope = self.scope(admin)
        return {
            "block_storage": BlockStorageAdapter(self.cloud.block_storage, scope),
            "compute": ComputeAdapter(self.cloud.compute, scope),
            "network": NetworkAdapter(self.cloud.network, scope),
            "image": ImageAdapter(self.cloud.image, scope),
        }

    # -- fixtures made directly through the clients -------------------------------------------
    def server(self, name: str = "vm") -> str:
        """An ACTIVE server without networks."""
        compute = self.compute()
        flavor = compute.find_flavor("m1.tiny").id
        image = ImageAdapter(self.cloud.image, self.scope()).find_image("cirros").id
        server = compute.create_server(
            {"name": name, "imageRef": image, "flavorRef": flavor, "networks": "none"}
        )
        for _ in range(10):
            if compute.get_server(server.id).status == "ACTIVE":
                return server.id
        raise AssertionError(f"server {name} did not become ACTIVE")

    def volume(self, size: int = 1, name: str = "fixture") -> str:
        """An available volume."""
        volumes = self.volumes()
        volume = volumes.create_volume({"size": size, "name": name})
        assert volumes.get_volume(volume.id).status == "available"
        return volume.id

    def attach(self, server_id: str, volume_id: str) -> None:
        """Attach through Nova and wait (instant with no delays) for ``in-use``."""
        self.compute().create_volume_attachment(server_id, volume_id)
        assert self.volumes().get_volume(volume_id).status == "in-use"

    def backup(self, volume_id: str) -> str:
        volumes = self.volumes()
        backup = volumes.create_backup({"volume_id": volume_id, "force": True})
        assert volumes.get_backup(backup.id).status == "available"
        return backup.id
