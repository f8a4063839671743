"""Shared setup of the OS::Neutron::* plugin tests: the sandbox, contexts, schema rows.

``Sandbox`` is a real in-process simulated Neutron (model plus adapter, seeded with the
external network ``public`` and its subnet ``public-subnet``); ``Sandbox.resource``
builds a plugin on a FakeContext whose ``network`` client is the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.network.adapter import NetworkAdapter
from kiln.cloud.sandbox.network.model import NetworkModel
from kiln.plugin import Resource
from kiln.testing.plugin_context import FakeContext, fake_resource, run_action

R = TypeVar("R", bound=Resource)

PROJECT = "project-a"


@dataclass
class Sandbox:
    """One simulated Neutron and a client of it acting for ``project``."""

    project: str = PROJECT
    cloud: SandboxCloud = field(default_factory=SandboxCloud)

    def __post_init__(self) -> None:
        model = NetworkModel(self.cloud)
        self.cloud.add("network", model)
        model.seed()
        self.client = NetworkAdapter(self.cloud.network, CloudScope(project_id=self.project))

    def resource(
        self, plugin: type[R], properties: Mapping[str, Any] | None = None, **kw: Any
    ) -> tuple[R, FakeContext]:
        kw.setdefault("project_id", self.project)
        kw.setdefault("clients", {"network": self.client})
        return fake_resource(plugin, properties, **kw)

    def created(
        self, plugin: type[R], properties: Mapping[str, Any] | None = None, **kw: Any
    ) -> tuple[R, FakeContext]:
        """A plugin whose create has run to completion."""
        res, ctx = self.resource(plugin, properties, **kw)
        run_action(res, "create")
        assert ctx.physical_id
        return res, ctx

    def again(self, ctx: FakeContext, plugin: type[R]) -> R:
        """A second plugin on the same context: what the engine builds after a crash."""
        return plugin(ctx)
