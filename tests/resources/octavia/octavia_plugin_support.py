"""Shared setup of the OS::Octavia::* plugin tests: a sandbox cloud with Neutron and Octavia.

:class:`OctaviaWorld` builds the in-process sandbox (network + load balancer models and
their adapters for one project), a tenant network and subnet for VIPs, and plugin
instances on FakeContexts that use those adapters. The cloud's clock is the latest of the
plugin contexts' virtual clocks, so each poll ``run_action`` makes (one virtual second)
also moves the cloud on: transitions given a delay (``delays``, simulator patterns such as
``load_balancer.loadbalancer.create``) end while a plugin polls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.load_balancer.adapter import LoadBalancerAdapter
from kiln.cloud.sandbox.load_balancer.model import LoadBalancerModel
from kiln.cloud.sandbox.network.adapter import NetworkAdapter
from kiln.cloud.sandbox.network.model import NetworkModel
from kiln.cloud.sandbox.simulator import SandboxConfig, Simulator
from kiln.cloud.sandbox.store import DocumentStore
from kiln.plugin import Resource
from kiln.testing.plugin_context import START, FakeContext, run_action
from kiln.testing.schema_rows import (  # noqa: F401 - the tests import them from here
    NO_DEFAULT,
    Row,
    allowed,
    custom,
    in_range,
    schema_rows,
    undocumented,
)

R = TypeVar("R", bound=Resource)
PROJECT = "octavia-tests"


class OctaviaWorld:
    """A sandbox with a tenant subnet, and plugins acting in it."""

    def __init__(self, delays: Mapping[str, float] | None = None) -> None:
        self.contexts: list[FakeContext] = []
        config = SandboxConfig(delays=dict(delays or {}))
        self.cloud = SandboxCloud(
            store=DocumentStore(now=self.now), sim=Simulator(config, now=self.now)
        )
        self.cloud.add("network", NetworkModel(self.cloud))
        self.cloud.add("load_balancer", LoadBalancerModel(self.cloud))
        for model in self.cloud.services.values():
            model.seed()
        scope = CloudScope(project_id=PROJECT)
        self.network = NetworkAdapter(self.cloud.network, scope)
        self.octavia = LoadBalancerAdapter(self.cloud.load_balancer, scope)
        net = self.network.create_network({"name": "tenant-net"})
        self.subnet = self.network.create_subnet(
            {"name": "tenant-subnet", "network_id": net.id, "cidr": "10.0.0.0/24", "ip_version": 4}
        )

    def now(self) -> float:
        clocks = [ctx.clock for ctx in self.contexts] or [START]
        return max(clocks).timestamp()

    def resource(
        self, plugin: type[R], properties: Mapping[str, Any], name: str = "res", **kw: Any
    ) -> tuple[R, FakeContext]:
        """A plugin instance whose ``load_balancer`` and ``network`` clients are the sandbox's."""
        ctx = FakeContext.for_plugin(
            plugin,
            properties,
            name=name,
            project_id=PROJECT,
            clients={"load_balancer": self.octavia, "network": self.network},
            **kw,
        )
        if self.contexts:
            ctx.clock = max(c.clock for c in self.contexts)
        self.contexts.append(ctx)
        return plugin(ctx), ctx

    def created(
        self, plugin: type[R], properties: Mapping[str, Any], name: str = "res"
    ) -> tuple[R, FakeContext]:
        """A plugin instance whose create has run to completion."""
        resource, ctx = self.resource(plugin, properties, name)
        run_action(resource, "create")
        return resource, ctx

    def tree(self, pool: bool = False) -> dict[str, str]:
        """Made directly in the cloud: load balancer ``web``, HTTP listener ``http`` on port
        80 and, when asked, its default pool ``p``; their ids by kind."""
        lb = self.octavia.create_load_balancer({"vip_subnet_id": self.subnet.id, "name": "web"})
        listener = self.octavia.create_listener(
            {"loadbalancer_id": lb.id, "protocol": "HTTP", "protocol_port": 80, "name": "http"}
        )
        ids = {"loadbalancer": lb.id, "listener": listener.id}
        if pool:
            ids["pool"] = self.octavia.create_pool(
                {
                    "listener_id": listener.id,
                    "protocol": "HTTP",
                    "lb_algorithm": "ROUND_ROBIN",
                    "name": "p",
                }
            ).id
        return ids

    def advance(self, seconds: float) -> None:
        """Move the cloud's clock (every context's) forward."""
        for ctx in self.contexts:
            ctx.advance(seconds)
