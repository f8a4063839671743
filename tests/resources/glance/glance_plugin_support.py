"""Shared setup of the OS::Glance plugin tests: a sandbox cloud with Glance, and its client.

The store's clock is a number the test moves (``cloud.clock.advance``), so a transition
given a delay stays in progress until the test lets time pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image.adapter import ImageAdapter
from kiln.cloud.sandbox.image.model import ImageModel
from kiln.cloud.sandbox.store import DocumentStore

PROJECT = "project"  # FakeContext's default project


@dataclass
class ManualClock:
    """Seconds since the epoch, moved only by the test."""

    now: float = 1_767_225_600.0  # 2026-01-01

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class GlanceSandbox:
    """A seeded sandbox with the image service, and a client acting for PROJECT."""

    clock: ManualClock = field(default_factory=ManualClock)
    cloud: SandboxCloud = field(init=False)

    def __post_init__(self) -> None:
        self.cloud = SandboxCloud(store=DocumentStore(now=self.clock))
        self.cloud.add("image", ImageModel(self.cloud))
        self.cloud.image.seed()

    def image_client(self, project_id: str = PROJECT, admin: bool = False) -> ImageAdapter:
        roles = frozenset({"admin"}) if admin else frozenset()
        return ImageAdapter(self.cloud.image, CloudScope(project_id=project_id, roles=roles))

    def clients(self, **kw: Any) -> dict[str, Any]:
        return {"image": self.image_client(**kw)}
