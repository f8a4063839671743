"""``kiln all``: the simulated cloud with its identity, the native API and engine workers
in one process.

Embedded mode (ARCHITECTURE.md 1): one SQLite database in a data directory,
in-process messaging, the sandbox's Keystone as the identity service. It writes
``clouds.yaml`` entries ``kiln`` (admin) and ``kiln-demo`` (a member of the
``demo`` project), so ``openstack --os-cloud kiln stack list`` works at once.
Ctrl-C stops cleanly; a restart resumes every stack that was in progress (the
database is the queue, and expired leases are handed back by the sweeper).
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import secrets
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

import click
import sqlalchemy as sa
import yaml

from kiln.api.middleware.token_cache import TokenCache
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiDeps, ApiSettings
from kiln.api.policy import OsloPolicy
from kiln.cli.compose import EngineParts, build_engine, open_database
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
from kiln.cloud.sandbox.identity import (
    CatalogEntry,
    IdentityStore,
    bootstrap,
    create_identity_app,
)
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.cloud.sandbox.rest import IdentityTokens
from kiln.cloud.sandbox.simulator import SandboxConfig
from kiln.rpc.transport import InProcessTransport

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = pathlib.Path(os.environ.get("KILN_DATA_DIR", "~/.local/share/kiln"))


@dataclass
class Credentials:
    """The passwords ``kiln all`` made on first start (kept in the data directory)."""

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
class Embedded:
    """Everything ``kiln all`` runs, so tests can start and stop it in-process too."""

    data_dir: pathlib.Path
    host: str = "127.0.0.1"
    identity_port: int = 5000
    api_port: int = 8004
    no_auth: bool = False
    workers: int = 4
    public_host: str | None = None
    #: oslo.messaging URL (``rabbit://...``) for API-to-engine calls; None: in process
    transport_url: str | None = None
    engine: EngineParts | None = None
    servers: list[ServerHandle] = field(default_factory=list)
    closers: list[Any] = field(default_factory=list)
    credentials: Credentials | None = None
    #: latency, delays, faults and quotas of the simulated cloud
    sandbox_config: SandboxConfig | None = None
    cloud: SandboxCloud | None = None

    @property
    def advertised(self) -> str:
        return self.public_host or self.host

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.credentials = Credentials.load_or_create(self.data_dir)
        db = open_database(f"sqlite:///{self.data_dir / 'kiln.db'}")
        self.cloud = build_cloud(
            engine=sa.create_engine(f"sqlite:///{self.data_dir / 'cloud.db'}"),
            config=self.sandbox_config,
            services=available_services(),
        )
        self.engine = build_engine(db, cloud=SandboxConnector(self.cloud))
        identity_url = f"http://{self.advertised}:{self.identity_port}"
        api_url = f"http://{self.advertised}:{self.api_port}"
        store = IdentityStore(db)
        bootstrap(
            store,
            admin_password=self.credentials.admin,
            demo_password=self.credentials.demo,
            service_password=self.credentials.service,
        )
        catalog = [
            CatalogEntry("orchestration", "heat", f"{api_url}/v1/%(project_id)s"),
            *catalog_entries(identity_url, self.cloud.services),
        ]
        tokens = IdentityTokens(TokenService(store).validate)
        sandbox = create_sandbox_app(
            self.cloud,
            tokens,
            create_identity_app(store, catalog=catalog),
            control_app=create_control_app(self.cloud, tokens),
        )
        self.servers.append(_serve(sandbox, self.host, self.identity_port, threads=16))
        token_cache = TokenCache()
        store.add_change_listener(token_cache.clear)
        deps = ApiDeps(
            engine=self._engine_transport(),
            policy=OsloPolicy(),
            settings=ApiSettings(),
        )
        api = _native_pipeline(
            deps, identity_url, self.credentials, token_cache, no_auth=self.no_auth
        )
        self.servers.append(_serve(api, self.host, self.api_port, threads=16))
        # Workers start last: a start-up that fails (a port in use) leaves no work half run.
        self.engine.start(threads=self.workers)

    def _engine_transport(self) -> Any:
        """How the API reaches the engine: a direct call, or oslo.messaging when configured.

        The direct call still encodes every message and reply as the bus would, so
        nothing that could not cross the bus works here by accident. (oslo.messaging's
        own in-process driver polls every 50 ms: every API call would cost that.)
        """
        assert self.engine is not None
        if self.transport_url is None:
            return InProcessTransport(self.engine.handlers, serialize=True)
        from kiln.rpc.oslo_transport import EngineClient, EngineServer

        server = EngineServer(
            self.transport_url, self.engine.handlers, server_name=self.engine.deps.engine_id
        )
        server.start()
        client = EngineClient(self.transport_url)
        self.closers += [client.close, server.stop]
        return client

    def stop(self) -> None:
        for server in reversed(self.servers):
            server.stop()
        self.servers.clear()
        for close in self.closers:
            close()
        self.closers.clear()
        if self.engine is not None:
            self.engine.stop()

    def clouds(self) -> dict[str, Any]:
        assert self.credentials is not None
        auth_url = f"http://{self.advertised}:{self.identity_port}/v3"

        def entry(user: str, password: str, project: str) -> dict[str, Any]:
            return {
                "auth": {
                    "auth_url": auth_url,
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


def _native_pipeline(
    deps: ApiDeps,
    identity_url: str,
    credentials: Credentials,
    token_cache: TokenCache,
    *,
    no_auth: bool,
) -> Any:
    from kiln.api.pipeline import AuthSettings, build_native_pipeline

    auth = None
    if not no_auth:
        auth = AuthSettings(
            auth_url=f"{identity_url}/v3",
            username="kiln",
            password=credentials.service,
            project_name="admin",
            token_cache=token_cache,
        )
    return build_native_pipeline(create_app(deps), settings=deps.settings, auth=auth)


def _serve(app: Any, host: str, port: int, threads: int = 8) -> ServerHandle:
    try:
        return serve_in_thread(app, host, port, threads=threads)
    except OSError as err:
        raise click.ClickException(
            f"cannot listen on {host}:{port} ({err.strerror or err}); is another kiln all "
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


def _load_sandbox_config(path: pathlib.Path | None) -> SandboxConfig | None:
    if path is None:
        return None
    try:
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError("expected a mapping")
        return SandboxConfig.from_mapping(data)
    except (yaml.YAMLError, ValueError, TypeError) as err:
        raise click.BadParameter(f"{path}: {err}", param_hint="--sandbox-config") from None


@click.command("all")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=pathlib.Path),
    default=None,
    help="Where the database and credentials live [default: $KILN_DATA_DIR or "
    "~/.local/share/kiln].",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--public-host", default=None, help="Host name written into URLs.")
@click.option("--identity-port", type=int, default=5000, show_default=True)
@click.option("--api-port", type=int, default=8004, show_default=True)
@click.option("--workers", type=int, default=4, show_default=True)
@click.option("--no-auth", is_flag=True, help="Development mode: no tokens; project from URL.")
@click.option(
    "--transport-url",
    default=None,
    help="oslo.messaging URL for API-to-engine calls (rabbit://...); default: in process.",
)
@click.option(
    "--clouds-yaml",
    type=click.Path(dir_okay=False, path_type=pathlib.Path),
    default=None,
    help="clouds.yaml to write the kiln entries into [default: ~/.config/openstack/clouds.yaml].",
)
@click.option(
    "--sandbox-config",
    type=click.Path(dir_okay=False, exists=True, path_type=pathlib.Path),
    default=None,
    help="YAML file of the simulated cloud's latency, delays, faults and quotas.",
)
def all_command(
    data_dir: pathlib.Path | None,
    host: str,
    public_host: str | None,
    identity_port: int,
    api_port: int,
    workers: int,
    no_auth: bool,
    transport_url: str | None,
    clouds_yaml: pathlib.Path | None,
    sandbox_config: pathlib.Path | None,
) -> None:
    """Run identity, the API and the engine in one process (the sandbox)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    running = Embedded(
        data_dir=(data_dir or DEFAULT_DATA_DIR).expanduser(),
        host=host,
        public_host=public_host,
        identity_port=identity_port,
        api_port=api_port,
        workers=workers,
        no_auth=no_auth,
        transport_url=transport_url,
        sandbox_config=_load_sandbox_config(sandbox_config),
    )
    try:
        running.start()
    except BaseException:
        running.stop()
        raise
    target = (clouds_yaml or pathlib.Path("~/.config/openstack/clouds.yaml")).expanduser()
    write_clouds(running.clouds(), target)
    (running.data_dir / "clouds.yaml").write_text(
        yaml.safe_dump({"clouds": running.clouds()}, sort_keys=False)
    )
    click.echo(
        f"kiln: identity http://{running.advertised}:{identity_port}/v3, "
        f"orchestration http://{running.advertised}:{api_port}/v1\n"
        f"kiln: data in {running.data_dir}; clouds 'kiln' (admin) and 'kiln-demo' written to "
        f"{target}\n"
        "kiln: try  openstack --os-cloud kiln stack list   or   kiln stack list\n"
        "kiln: ready",
        err=True,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    click.echo("kiln: stopping", err=True)
    running.stop()
