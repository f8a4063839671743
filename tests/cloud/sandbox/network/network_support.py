"""Shared helpers of the simulated Neutron tests: a seeded cloud and two project scopes."""

from __future__ import annotations

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.network.model import NetworkModel

DEMO = CloudScope(project_id="demo-project", user_id="demo", roles=frozenset({"member"}))
OTHER = CloudScope(project_id="other-project", user_id="other", roles=frozenset({"member"}))
ADMIN = CloudScope(project_id="admin-project", user_id="admin", roles=frozenset({"admin"}))


def seeded_model() -> NetworkModel:
    cloud = SandboxCloud()
    model = NetworkModel(cloud)
    cloud.add("network", model)
    model.seed()
    return model
