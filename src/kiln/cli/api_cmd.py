"""``kiln api``: the native Orchestration API of a scaled-out deployment.

The WSGI application ``kiln.api.native.wsgi:application`` (the same one gunicorn
serves) on ``[heat_api] bind_host:bind_port`` with cheroot's threads, reaching the
engines over ``[DEFAULT] transport_url``. Run several behind a load balancer: an
API process keeps no state of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click
from oslo_config import cfg

from kiln.api.native import wsgi
from kiln.cli import config
from kiln.cli.engine_cmd import config_files_option, configure_logging, run_until_stopped
from kiln.cli.sandbox_site import serve


@dataclass
class ApiProcess:
    conf: cfg.ConfigOpts
    closers: list[Any] = field(default_factory=list)

    def start(self) -> None:
        conf = self.conf
        if not conf.transport_url:
            raise config.ConfigError("[DEFAULT] transport_url is not set")
        engine = wsgi.engine_transport(conf)
        self.closers.append(getattr(engine, "close", lambda: None))
        app = wsgi.make_application(conf, engine)
        api = conf.heat_api
        handle = serve(app, api.bind_host, api.bind_port, threads=api.threads)
        self.closers.insert(0, handle.stop)

    def stop(self) -> None:
        for close in self.closers:
            close()
        self.closers.clear()


@click.command("api")
@config_files_option
def api_command(config_files: tuple[str, ...]) -> None:
    """Serve the native Orchestration API (scaled-out mode; see docs/deploy.md)."""
    conf = config.load(list(config_files) or None)
    configure_logging(conf)
    run_until_stopped(ApiProcess(conf), "api")
