"""Fixtures: a sandbox cloud with the compute model (and the other models that exist)."""

from __future__ import annotations

import importlib.util

import pytest
from falcon import testing

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.app import create_compute_app
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.image.model import ImageModel
from kiln.cloud.sandbox.network.model import NetworkModel

DEMO = CloudScope("demo-project", "demo-user", frozenset({"member"}))
OTHER = CloudScope("other-project", "other-user", frozenset({"member"}))
ADMIN = CloudScope("admin-project", "admin-user", frozenset({"admin", "member"}))
TOKENS = {"demo-token": DEMO, "other-token": OTHER, "admin-token": ADMIN}


class StaticTokens:
    """Maps fixed tokens to scopes (identity is tested elsewhere)."""

    def scope(self, token: str) -> CloudScope:
        if token not in TOKENS:
            raise Unauthorized("The request you have made requires authentication.")
        return TOKENS[token]


def image_model_available() -> bool:
    return importlib.util.find_spec("kiln.cloud.sandbox.image.model") is not None


@pytest.fixture
def cloud() -> SandboxCloud:
    cloud = SandboxCloud()
    model = ComputeModel(cloud)
    cloud.add("compute", model)
    model.seed()
    return cloud


@pytest.fixture
def model(cloud: SandboxCloud) -> ComputeModel:
    compute: ComputeModel = cloud.compute
    return compute


@pytest.fixture
def demo(model: ComputeModel) -> ComputeAdapter:
    return ComputeAdapter(model, DEMO)


@pytest.fixture
def admin(model: ComputeModel) -> ComputeAdapter:
    return ComputeAdapter(model, ADMIN)


@pytest.fixture
def client(cloud: SandboxCloud) -> testing.TestClient:
    return testing.TestClient(create_compute_app(cloud, StaticTokens()))


# -- a whole cloud: compute with the network, image and volume services it talks to --------
@pytest.fixture
def full() -> SandboxCloud:
    cloud = SandboxCloud()
    for name, model in (
        ("compute", ComputeModel(cloud)),
        ("network", NetworkModel(cloud)),
        ("image", ImageModel(cloud)),
        ("block_storage", BlockStorageModel(cloud)),
    ):
        cloud.add(name, model)
        model.seed()
    return cloud


@pytest.fixture
def compute(full: SandboxCloud) -> ComputeAdapter:
    return ComputeAdapter(full.compute, DEMO)
