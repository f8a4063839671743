"""The simulated Octavia v2 service: every operation of the load-balancer API.

The operations live in one module per object kind (``loadbalancers``, ``listeners``,
``pools``, ``members``, ``monitors``, ``catalog``), all built on the shared tree and
status machinery of ``base``; this class puts them together as the service model the
sandbox cloud holds (``cloud.load_balancer``). Operations take the caller's scope and
REST-shaped bodies and return the live stored documents (callers copy).
"""

from __future__ import annotations

from kiln.cloud.sandbox.load_balancer.listeners import ListenerOps
from kiln.cloud.sandbox.load_balancer.loadbalancers import LoadBalancerOps
from kiln.cloud.sandbox.load_balancer.members import MemberOps
from kiln.cloud.sandbox.load_balancer.monitors import HealthMonitorOps
from kiln.cloud.sandbox.load_balancer.pools import PoolOps


class LoadBalancerModel(LoadBalancerOps, ListenerOps, PoolOps, MemberOps, HealthMonitorOps):
    """Octavia: load balancers and their trees, providers, flavors, zones and quotas."""

    def seed(self) -> None:
        """Nothing to add: the provider list is fixed, flavors and zones start empty."""
