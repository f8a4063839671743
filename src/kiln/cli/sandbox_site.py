"""The simulated cloud with its identity service, served on one port.

``kiln sandbox`` runs just this; ``kiln all`` runs it beside the API and the engine.
Identity lives in the given database (``kiln all`` shares its own), the cloud's state in
``cloud.db`` in the data directory, so both outlive a restart. The identity catalog
lists every simulated service, plus whatever the caller adds (the orchestration API).
Bootstrap makes Heat's stack-user domain ``heat`` and its admin ``heat_domain_admin``
(with the admin password); :meth:`SandboxSite.stack_domain` hands that Keystone to the
in-process connector.
"""

from __future__ import annotations

import json
import logging
import pathlib
import secrets
from dataclasses import dataclass, field
from typing import Any

import click
import sqlalchemy as sa
import yaml
from sqlalchemy import Engine

from kiln.cloud.sandbox.assemble import (
    available_services,
    build_cloud,
    catalog_entries,
    create_sandbox_app,
)
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.control_app import create_control_app
from kiln.cloud.sandbox.http_server import ServerHandle, serve_in_thread
from kiln.cloud.sandbox.identity import (
    BootstrapResult,
    CatalogEntry,
    IdentityStore,
    bootstrap,
    create_identity_app,
)
from kiln.cloud.sandbox.identity.adapter import SandboxIdentity
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.cloud.sandbox.identity.trusts import get_trust
from kiln.cloud.sandbox.rest import IdentityTokens
from kiln.cloud.sandbox.simulator import SandboxConfig

log = logging.getLogger(__name__)


@dataclass
class Credentials:
    """The passwords made on first start (kept in the data directory)."""

    admin: str
    demo: str
    service: str

    @classmethod
    def load_or_create(cls, data_dir: pathlib.Path) -> Credentials:
        path = data_dir / "credentials.json"
        if path.exists():
            return cls(**json.loads(path.read_text()))
        made = cls(*(secrets.token_urlsafe(16) for _ in range(3)))
        path.write_text(json.dumps(made.__dict__))
        path.chmod(0o600)
        return made


@dataclass
class SandboxSite:
    """Identity plus the simulated services behind one dispatcher on ``host:port``."""

    data_dir: pathlib.Path
    identity_db: Engine
    credentials: Credentials
    host: str = "127.0.0.1"
    port: int = 5000
    advertised: str = "127.0.0.1"
    config: SandboxConfig | None = None
    #: more catalog entries (the orchestration API of ``kiln all``)
    extra_catalog: list[CatalogEntry] = field(default_factory=list)
    cloud: SandboxCloud | None = None
    store: IdentityStore | None = None
    handle: ServerHandle | None = None
    seed: BootstrapResult | None = None
    token_service: TokenService | None = None

    @property
    def url(self) -> str:
        return f"http://{self.advertised}:{self.port}"

    def start(self) -> SandboxSite:
        self.store = IdentityStore(self.identity_db)
        self.seed = bootstrap(
            self.store,
            admin_password=self.credentials.admin,
            demo_password=self.credentials.demo,
            service_password=self.credentials.service,
        )
        self.cloud = build_cloud(
            engine=sa.create_engine(f"sqlite:///{self.data_dir / 'cloud.db'}"),
            config=self.config,
            services=available_services(),
        )
        catalog = [*self.extra_catalog, *catalog_entries(self.url, self.cloud.services)]
        token_service = self.token_service = TokenService(self.store)
        tokens = IdentityTokens(token_service.validate)
        if "alarming" in self.cloud.services:
            # trust+http(s):// alarm actions are called with a token of the trust
            self.cloud.services["alarming"].token_for_trust = _trust_tokens(
                self.store, token_service
            )
        app = create_sandbox_app(
            self.cloud,
            tokens,
            create_identity_app(self.store, catalog=catalog),
            control_app=create_control_app(self.cloud, tokens),
        )
        self.handle = serve(app, self.host, self.port, threads=16)
        return self

    def stack_domain(self) -> SandboxIdentity:
        """The identity service, for the in-process client of the stack domain admin."""
        assert self.store is not None and self.seed is not None
        assert self.token_service is not None
        return SandboxIdentity(
            store=self.store,
            tokens=self.token_service,
            domain_id=self.seed.stack_domain.id,
            auth_url=f"{self.url}/v3",
        )

    def stack_domain_auth(self) -> dict[str, Any]:
        """keystoneauth settings of ``heat_domain_admin`` (its password is the admin's)."""
        from kiln.cloud.openstack.identity import stack_domain_auth

        assert self.seed is not None
        return stack_domain_auth(
            auth_url=f"{self.url}/v3",
            username=self.seed.stack_domain_admin.name,
            password=self.credentials.admin,
            domain_name=self.seed.stack_domain.name,
        )

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()
            self.handle = None

    def clouds(self) -> dict[str, Any]:
        """clouds.yaml entries: ``kiln`` (admin) and ``kiln-demo`` (a member of ``demo``)."""

        def entry(user: str, password: str, project: str) -> dict[str, Any]:
            return {
                "auth": {
                    "auth_url": f"{self.url}/v3",
                    "username": user,
                    "password": password,
                    "project_name": project,
                    "user_domain_name": "Default",
                    "project_domain_name": "Default",
                },
                "region_name": "RegionOne",
                "interface": "public",
                "identity_api_version": 3,
            }

        return {
            "kiln": entry("admin", self.credentials.admin, "admin"),
            "kiln-demo": entry("demo", self.credentials.demo, "demo"),
        }


def _trust_tokens(store: IdentityStore, service: TokenService) -> Any:
    """``trust id -> token`` for the trust's trustee (None when the trust is unusable)."""

    def token_for(trust_id: str) -> str | None:
        try:
            trust = get_trust(store, trust_id)
            trustee = store.get_user(trust.trustee_user_id)
            token, _info = service.issue(trustee, ["password"], trust=trust)
        except Exception:  # an unusable trust: the action is posted without a token
            log.warning("no token for trust %s", trust_id, exc_info=True)
            return None
        return token

    return token_for


def serve(app: Any, host: str, port: int, threads: int = 8) -> ServerHandle:
    """Serve ``app``, or say clearly why the port cannot be had."""
    try:
        return serve_in_thread(app, host, port, threads=threads)
    except OSError as err:
        raise click.ClickException(
            f"cannot listen on {host}:{port} ({err.strerror or err}); is another kiln "
            "running? Choose other ports with --identity-port / --api-port."
        ) from None


def write_clouds(clouds: dict[str, Any], path: pathlib.Path) -> None:
    """Merge our entries into ``path``, keeping any other cloud there."""
    found: dict[str, Any] = {}
    if path.exists():
        loaded = yaml.safe_load(path.read_text()) or {}
        if isinstance(loaded, dict):
            found = loaded
    found.setdefault("clouds", {}).update(clouds)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(found, sort_keys=False))
    path.chmod(0o600)


def load_sandbox_config(path: pathlib.Path | None) -> SandboxConfig | None:
    """The ``--sandbox-config`` file (YAML: latency, delays, faults, quotas)."""
    if path is None:
        return None
    try:
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError("expected a mapping")
        return SandboxConfig.from_mapping(data)
    except (yaml.YAMLError, ValueError, TypeError) as err:
        raise click.BadParameter(f"{path}: {err}", param_hint="--sandbox-config") from None
