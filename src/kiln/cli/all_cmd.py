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

import logging
import os
import pathlib
from dataclasses import dataclass, field
from typing import Any

import click
import yaml

from kiln.api.middleware.token_cache import TokenCache
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiDeps, ApiSettings
from kiln.api.policy import OsloPolicy
from kiln.cli.compose import EngineParts, build_engine, open_database
from kiln.cli.runtime import wait_for_stop
from kiln.cli.sandbox_site import (
    Credentials,
    SandboxSite,
    load_sandbox_config,
    serve,
    write_clouds,
)
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.cloud.sandbox.http_server import ServerHandle
from kiln.cloud.sandbox.identity import CatalogEntry
from kiln.cloud.sandbox.identity.catalog import REGION
from kiln.cloud.sandbox.simulator import SandboxConfig
from kiln.plugin.heat_endpoints import SERVICE as ENDPOINTS
from kiln.plugin.heat_endpoints import HeatEndpoints
from kiln.rpc.transport import InProcessTransport

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = pathlib.Path(os.environ.get("KILN_DATA_DIR", "~/.local/share/kiln"))


#: where the CloudFormation-compatible API belongs (Heat's heat-api-cfn port)
CFN_PORT = 8000


@dataclass
class Embedded:
    """Everything ``kiln all`` runs, so tests can start and stop it in-process too."""

    data_dir: pathlib.Path
    host: str = "127.0.0.1"
    identity_port: int = 5000
    api_port: int = 8004
    no_auth: bool = False
    #: engine worker threads: each waits out one cloud call at a time, so a cloud with
    #: latency needs many (the database work itself is serialised on SQLite)
    #: a worker thread waits out each cloud call: at 200 ms a call, 100 servers' calls
    #: need about this many to keep up with their dependency graph (bench_cloud)
    workers: int = 128
    public_host: str | None = None
    #: oslo.messaging URL (``rabbit://...``) for API-to-engine calls; None: in process
    transport_url: str | None = None
    engine: EngineParts | None = None
    servers: list[ServerHandle] = field(default_factory=list)
    closers: list[Any] = field(default_factory=list)
    credentials: Credentials | None = None
    #: latency, delays, faults and quotas of the simulated cloud
    sandbox_config: SandboxConfig | None = None
    #: Kiln's per-stack-tree limit of tasks running at once
    max_tasks_per_stack: int = 64
    site: SandboxSite | None = None
    cloud: SandboxCloud | None = None
    #: how the engine reaches the cloud: ``sandbox`` (in process) or ``openstack``
    #: (openstacksdk over the sandbox's REST APIs, with Keystone trusts, as a real cloud)
    cloud_adapter: str = "sandbox"

    @property
    def advertised(self) -> str:
        return self.public_host or self.host

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.credentials = Credentials.load_or_create(self.data_dir)
        db = open_database(f"sqlite:///{self.data_dir / 'kiln.db'}")
        api_url = f"http://{self.advertised}:{self.api_port}"
        self.site = SandboxSite(
            data_dir=self.data_dir,
            identity_db=db,
            credentials=self.credentials,
            host=self.host,
            port=self.identity_port,
            advertised=self.advertised,
            config=self.sandbox_config,
            extra_catalog=[CatalogEntry("orchestration", "heat", f"{api_url}/v1/%(project_id)s")],
        ).start()
        assert self.site.handle is not None and self.site.store is not None
        self.servers.append(self.site.handle)
        self.cloud = self.site.cloud
        # Agents of POLL_SERVER_CFN servers are pointed at this host's CloudFormation port.
        endpoints = HeatEndpoints(
            metadata_server_url=f"http://{self.advertised}:{CFN_PORT}", region_name=REGION
        )
        self.engine = build_engine(
            db,
            cloud=self._connector(),
            max_concurrent_tasks_per_stack=self.max_tasks_per_stack,
            clients={ENDPOINTS: endpoints},
        )
        identity_url = self.site.url
        store = self.site.store
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
        self.servers.append(serve(api, self.host, self.api_port, threads=16))
        # Workers start last: a start-up that fails (a port in use) leaves no work half run.
        self.engine.start(threads=self.workers)

    def _connector(self) -> Any:
        assert self.site is not None and self.site.cloud is not None
        assert self.credentials is not None
        # identity: the stack domain admin of the sandbox's "heat" domain (stack users)
        if self.cloud_adapter == "sandbox":
            return SandboxConnector(self.site.cloud, identity=self.site.stack_domain())
        from kiln.cloud.openstack.connector import OpenStackConnector

        # Kiln's service user receives each stack owner's trust, as Heat's does.
        return OpenStackConnector.from_config(
            auth={
                "auth_url": f"{self.site.url}/v3",
                "username": "kiln",
                "password": self.credentials.service,
                "project_name": "admin",
                "user_domain_id": "default",
                "project_domain_id": "default",
            },
            stack_domain=self.site.stack_domain_auth(),
        )

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
        assert self.site is not None
        return self.site.clouds()


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
@click.option(
    "--workers",
    type=int,
    default=128,
    show_default=True,
    help="Engine worker threads (each waits out one cloud call at a time).",
)
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
    "--cloud-adapter",
    type=click.Choice(["sandbox", "openstack"]),
    default="sandbox",
    show_default=True,
    help="How the engine reaches the cloud: in process, or with openstacksdk over the "
    "sandbox's REST APIs and Keystone trusts (the path a real cloud takes).",
)
@click.option(
    "--max-tasks-per-stack",
    type=int,
    default=64,
    show_default=True,
    help="Tasks of one stack tree that may run at once (0: no limit).",
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
    cloud_adapter: str,
    max_tasks_per_stack: int,
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
        sandbox_config=load_sandbox_config(sandbox_config),
        max_tasks_per_stack=max_tasks_per_stack,
        cloud_adapter=cloud_adapter,
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
    wait_for_stop()
    click.echo("kiln: stopping", err=True)
    running.stop()
