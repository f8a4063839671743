"""The contract fixture: the same scenarios through the in-process adapter and through
openstacksdk over the sandbox's REST API, so the real-cloud path is always exercised.

One sandbox server (identity + every service on an ephemeral port) serves the session;
each test gets a fresh, seeded cloud behind it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.testing.sandbox_harness import SandboxServer


@pytest.fixture(scope="session")
def sandbox_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    server = SandboxServer(tmp_path_factory.mktemp("contract")).start()
    yield server
    server.stop()


@dataclass
class ContractCloud:
    """One way of reaching the sandbox: ``inprocess`` or ``openstack``."""

    path: str
    server: SandboxServer

    @property
    def sandbox(self) -> SandboxCloud:
        return self.server.cloud

    def client(self, service: str, *, admin: bool = False) -> Any:
        user = "admin" if admin else "demo"
        scope = self.server.scope(user)
        if self.path == "inprocess":
            return self.server.inprocess().client(service, scope)
        return self.server.connector(user).client(service, scope)


@pytest.fixture(params=["inprocess", "openstack"])
def contract_cloud(request: pytest.FixtureRequest, sandbox_server: SandboxServer) -> ContractCloud:
    sandbox_server.reset()
    return ContractCloud(request.param, sandbox_server)
