"""A whole simulated cloud served over HTTP with its identity, for tests and benchmarks.

:class:`SandboxServer` runs the sandbox identity (SQLite file) and every simulated
service behind one port; the cloud behind it can be swapped (:meth:`SandboxServer.reset`)
so each test starts from fresh fixtures while the identity, the server and the
openstacksdk connections are made once. :meth:`SandboxServer.connector` gives the
openstacksdk path, :meth:`SandboxServer.inprocess` the in-process one, for the same cloud.
Imports: anything (test support).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.openstack.connector import OpenStackConnector
from kiln.cloud.sandbox.assemble import (
    available_services,
    build_cloud,
    catalog_entries,
    create_sandbox_app,
)
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.cloud.sandbox.control_app import create_control_app
from kiln.cloud.sandbox.http_server import ServerHandle, serve_in_thread
from kiln.cloud.sandbox.identity import IdentityStore, bootstrap, create_identity_app
from kiln.cloud.sandbox.identity.bootstrap import BootstrapResult
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.cloud.sandbox.rest import IdentityTokens
from kiln.cloud.sandbox.simulator import SandboxConfig

PASSWORDS = {"admin": "admin-secret", "demo": "demo-secret", "kiln": "kiln-secret"}


class _Swappable:
    """A WSGI app whose target can be replaced between tests."""

    def __init__(self) -> None:
        self.target: Callable[..., Any] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        assert self.target is not None
        return self.target(environ, start_response)


@dataclass
class SandboxServer:
    """Identity and the simulated services on one ephemeral port."""

    data_dir: Path
    services: Iterable[str] = field(default_factory=available_services)
    cloud: SandboxCloud = field(init=False)
    seed: BootstrapResult = field(init=False)
    handle: ServerHandle = field(init=False)
    _app: _Swappable = field(init=False, default_factory=_Swappable)
    _connectors: dict[str, OpenStackConnector] = field(init=False, default_factory=dict)

    def start(self) -> SandboxServer:
        engine = sa.create_engine(f"sqlite:///{self.data_dir / 'identity.sqlite'}")
        self.store = IdentityStore(engine)
        self.seed = bootstrap(
            self.store,
            admin_password=PASSWORDS["admin"],
            demo_password=PASSWORDS["demo"],
            service_password=PASSWORDS["kiln"],
        )
        self.tokens = IdentityTokens(TokenService(self.store).validate)
        self.handle = serve_in_thread(self._app, threads=16)
        self.services = tuple(self.services)
        self.identity_app = create_identity_app(
            self.store, catalog=catalog_entries(self.handle.url, self.services)
        )
        self.reset()
        return self

    def reset(self, config: SandboxConfig | None = None) -> SandboxCloud:
        """A fresh cloud (seeded) behind the same server and identity."""
        self.cloud = build_cloud(config=config, services=self.services)
        self._app.target = create_sandbox_app(
            self.cloud,
            self.tokens,
            self.identity_app,
            control_app=create_control_app(self.cloud, self.tokens),
        )
        return self.cloud

    @property
    def auth_url(self) -> str:
        return f"{self.handle.url}/v3"

    def auth(self, user: str = "demo") -> dict[str, Any]:
        return {
            "auth_url": self.auth_url,
            "username": user,
            "password": PASSWORDS[user],
            "project_name": user,
            "user_domain_id": "default",
            "project_domain_id": "default",
        }

    def scope(self, user: str = "demo") -> CloudScope:
        """The scope the user's token has (its project, user id and roles)."""
        project = self.seed.admin_project if user == "admin" else self.seed.demo_project
        account = self.seed.admin_user if user == "admin" else self.seed.demo_user
        roles = frozenset(
            {"admin", "member", "reader"} if user == "admin" else {"member", "reader"}
        )
        return CloudScope(project_id=project.id, user_id=account.id, roles=roles)

    def connector(self, user: str = "demo") -> OpenStackConnector:
        """openstacksdk over HTTP, authenticated as ``user`` (made once per server)."""
        if user not in self._connectors:
            self._connectors[user] = OpenStackConnector.from_config(auth=self.auth(user))
        return self._connectors[user]

    def inprocess(self) -> SandboxConnector:
        return SandboxConnector(self.cloud)

    def stop(self) -> None:
        self.handle.stop()
