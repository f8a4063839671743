"""``kiln engine``: one engine process of a scaled-out deployment.

It serves the API's calls on ``[engine] topic`` over oslo.messaging, claims tasks
from the shared database (PostgreSQL or MariaDB) with its worker threads, and makes
resources in the cloud of ``[trustee]``. Any number run on any hosts: each call
goes to one of them, every task to whichever claims it first, and an engine that
dies leaves only leases, which the others' sweepers hand back.

Wake-ups: a step or a call that readies work wakes this engine's workers at once
and, through a fanout cast on the ``kiln-wakeup`` topic, every other engine. The
database stays the queue: without the bus, engines still find work within
``[engine] idle_poll``.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import signal
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import click
from oslo_config import cfg

from kiln.cli import config
from kiln.cli.compose import EngineParts, build_engine
from kiln.cli.global_environment import read_environment_dir
from kiln.cli.runtime import wait_for_stop
from kiln.db.engine import create_engine
from kiln.db.migrate import current_revision, head_revision
from kiln.plugin.heat_endpoints import SERVICE as ENDPOINTS
from kiln.plugin.heat_endpoints import HeatEndpoints
from kiln.template.stack import Limits

log = logging.getLogger(__name__)


@dataclass
class EngineProcess:
    """What ``kiln engine`` runs, startable and stoppable in-process by tests."""

    conf: cfg.ConfigOpts
    workers: int | None = None
    engine: EngineParts | None = None
    #: the RPC server: stopped first, so no call arrives while the workers stop
    server: Any = None
    #: what to close after the workers, in order
    closers: list[Any] = field(default_factory=list)

    @property
    def engine_id(self) -> str:
        assert self.engine is not None
        return self.engine.deps.engine_id

    def start(self) -> None:
        conf = self.conf
        url = config.database_url(conf)
        if not conf.transport_url:
            raise config.ConfigError("[DEFAULT] transport_url is not set")
        db = create_engine(url, **config.pool_options(conf, url))
        self.closers.append(db.dispose)
        check_schema(db)
        self.engine = build_engine(
            db,
            engine_id=f"{conf.host}-{uuid.uuid4().hex[:8]}",
            cloud=cloud_connector(conf),
            max_events_per_stack=conf.max_events_per_stack,
            max_concurrent_tasks_per_stack=conf.engine.max_tasks_per_stack,
            lease=timedelta(seconds=conf.engine.lease_seconds),
            limits=Limits(
                max_resources_per_stack=conf.max_resources_per_stack,
                max_nested_stack_depth=conf.max_nested_stack_depth,
                max_template_size=conf.max_template_size,
            ),
            default_timeout_mins=max(1, conf.stack_action_timeout // 60),
            global_environment=read_environment_dir(conf.environment_dir),
            heartbeat_interval=conf.engine.heartbeat_interval,
            clients={
                ENDPOINTS: HeatEndpoints(
                    metadata_server_url=conf.heat_metadata_server_url,
                    region_name=conf.region_name_for_services,
                )
            },
        )
        self._connect_bus(conf.transport_url, conf.engine.topic)
        self.engine.start(
            threads=self.workers or conf.engine.workers,
            heartbeat_interval=conf.engine.heartbeat_interval,
            idle_poll=conf.engine.idle_poll,
        )
        log.info("engine %s serving topic %s", self.engine_id, conf.engine.topic)

    def _connect_bus(self, transport_url: str, topic: str) -> None:
        from kiln.rpc.oslo_transport import EngineServer, WakeupListener, WakeupNotifier

        assert self.engine is not None
        notifier = self.engine.notifier
        wakeups = WakeupNotifier(transport_url, topic=f"{topic}-wakeup")
        notifier.forward = wakeups.notify
        listener = WakeupListener(transport_url, notifier.notify_local, topic=f"{topic}-wakeup")
        listener.start()
        self.closers[:0] = [listener.stop, wakeups.close]  # before the database's dispose
        self.server = EngineServer(
            transport_url, self.engine.handlers, topic=topic, server_name=self.engine_id
        )
        self.server.start()

    def stop(self) -> None:
        # Stop taking calls first, then the workers, then close the connections.
        if self.server is not None:
            _quietly(self.server.stop)
            self.server = None
        if self.engine is not None:
            self.engine.stop()
        for close in self.closers:
            _quietly(close)
        self.closers.clear()


def _quietly(close: Any) -> None:
    try:
        close()
    except Exception:
        log.exception("stopping %s failed", close)


def check_schema(db: Any) -> None:
    """Refuse to run on a database other than the one this code was written for."""
    current, head = current_revision(db), head_revision()
    if current != head:
        raise config.ConfigError(
            f"the database is at schema revision {current or 'none'}, this Kiln needs "
            f"{head}: run 'kiln manage db-sync' first"
        )


def cloud_connector(conf: cfg.ConfigOpts) -> Any:
    """The cloud of ``[trustee]`` through openstacksdk, or None (``[engine] cloud = none``).

    Its ``identity`` client is the stack domain admin's (``stack_domain_admin``), when set.
    """
    if conf.engine.cloud == "none":
        return None
    from kiln.cloud.openstack.connector import OpenStackConnector

    options: dict[str, Any] = {"interface": config.interface(conf)}
    if conf.region_name_for_services:
        options["region_name"] = conf.region_name_for_services
    if conf.clients.insecure:
        options["verify"] = False
    elif conf.clients.ca_file:
        options["cacert"] = conf.clients.ca_file
    return OpenStackConnector.from_config(
        auth=config.trustee_auth(conf),
        max_concurrency=conf.clients.max_concurrency,
        stack_domain=config.stack_domain_auth(conf),
        **options,
    )


def run_until_stopped(process: Any, name: str) -> None:
    """Start ``process``, say so, serve until SIGTERM or Ctrl-C, stop it."""
    try:
        process.start()
    except (config.ConfigError, cfg.Error) as exc:
        process.stop()
        raise click.ClickException(str(exc)) from exc
    except BaseException:
        process.stop()
        raise
    click.echo(f"kiln {name}: ready", err=True)
    wait_for_stop()
    click.echo(f"kiln {name}: stopping", err=True)
    process.stop()


def config_files_option(command: Any) -> Any:
    return click.option(
        "--config-file",
        "config_files",
        multiple=True,
        type=click.Path(dir_okay=False, exists=True),
        help="heat.conf-style file (repeatable; later files win) [default: "
        "$KILN_CONFIG_FILE, or kiln.conf in ~/.kiln, ~, /etc/kiln, /etc].",
    )(command)


def configure_logging(conf: cfg.ConfigOpts) -> None:
    logging.basicConfig(
        level=logging.DEBUG if conf.debug else logging.INFO,
        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s",
    )


@click.command("engine")
@config_files_option
@click.option(
    "--workers", type=int, default=None, help="Worker threads [default: [engine] workers]."
)
def engine_command(config_files: tuple[str, ...], workers: int | None) -> None:
    """Run one engine process (scaled-out mode; see docs/deploy.md)."""
    conf = config.load(list(config_files) or None)
    configure_logging(conf)
    # `kill -USR2 <pid>` prints every thread's stack to the log: what is it doing?
    with contextlib.suppress(ValueError, OSError):  # stderr is not a file (embedded)
        faulthandler.register(signal.SIGUSR2, all_threads=True)
    run_until_stopped(EngineProcess(conf, workers=workers), "engine")
