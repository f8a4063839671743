"""The native API for any WSGI server: ``kiln.api.native.wsgi:application``.

For the scaled-out mode (ARCHITECTURE.md 1): ``gunicorn
kiln.api.native.wsgi:application`` (or uWSGI, mod_wsgi) in front of engines
reached over oslo.messaging. The application is built on its first request
from a heat.conf-style file, read by oslo.config into a private ConfigOpts:
the files listed in ``$KILN_CONFIG_FILE`` (separated by ``os.pathsep``), else
``kiln.conf`` found in oslo.config's usual places (``~/.kiln``, ``~``,
``/etc/kiln``, ``/etc``). Options keep Heat's names and defaults:

- ``[DEFAULT]`` ``transport_url``, ``rpc_response_timeout``, ``debug``,
  ``max_json_body_size``, ``max_template_size``, ``max_stacks_per_tenant``,
  ``max_nested_stack_depth``, ``enable_stack_abandon``, ``enable_stack_adopt``,
  ``hidden_stack_tags``; ``[revision] heat_revision``;
- ``[keystone_authtoken]``: every keystonemiddleware option, read by it;
- ``[paste_deploy] flavor = noauth``: the development mode without Keystone;
- ``[oslo_policy]`` ``policy_file`` (found beside the config file),
  ``enforce_new_defaults``;
- ``[oslo_middleware] enable_proxy_headers_parsing``;
  ``[healthcheck] disable_by_file_path``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg

from kiln.api.middleware.auth import AuthSettings
from kiln.api.middleware.responses import StartResponse, WSGIApp
from kiln.api.native.app import create_app
from kiln.api.native.support import ApiDeps, ApiSettings
from kiln.api.pipeline import build_native_pipeline
from kiln.api.policy import OsloPolicy
from kiln.rpc.transport import Transport

CONFIG_ENV = "KILN_CONFIG_FILE"

DEFAULT_OPTS = [
    cfg.StrOpt("transport_url", help="The message bus the engines listen on."),
    cfg.IntOpt("rpc_response_timeout", default=60, help="Seconds to wait for an engine."),
    cfg.BoolOpt("debug", default=False, help="Tracebacks in 500 error bodies."),
    cfg.IntOpt(
        "max_json_body_size", default=1_048_576, help="Largest request body accepted, in bytes."
    ),
    cfg.IntOpt("max_template_size", default=524_288, help="Largest template accepted, in bytes."),
    cfg.IntOpt(
        "max_stacks_per_tenant",
        default=512,
        help="Top-level stacks one project may have (-1: unlimited; admins are exempt).",
    ),
    cfg.IntOpt("max_nested_stack_depth", default=5, help="How deep stacks may nest."),
    cfg.BoolOpt("enable_stack_abandon", default=False, help="Allow abandoning stacks."),
    cfg.BoolOpt("enable_stack_adopt", default=False, help="Allow adopting stacks."),
    cfg.ListOpt(
        "hidden_stack_tags",
        default=[],
        help="Stacks with any of these tags are hidden from listings unless asked for.",
    ),
]
#: the engines' topic: one deployment's API and engines must agree on it (and two
#: deployments sharing a broker must not)
ENGINE_TOPIC_OPT = cfg.StrOpt(
    "topic",
    default="kiln-engine",
    help="oslo.messaging topic the engines serve calls on; wake-ups go on <topic>-wakeup.",
)
GROUP_OPTS: dict[str, list[cfg.Opt]] = {
    "engine": [ENGINE_TOPIC_OPT],
    "revision": [
        cfg.StrOpt("heat_revision", default="unknown", help="Build revision the API reports.")
    ],
    "paste_deploy": [cfg.StrOpt("flavor", help='"noauth": no Keystone (development only).')],
    "oslo_middleware": [
        cfg.BoolOpt(
            "enable_proxy_headers_parsing",
            default=False,
            help="Trust X-Forwarded-* headers (only behind a proxy that sets them).",
        )
    ],
    "healthcheck": [
        cfg.StrOpt(
            "disable_by_file_path",
            help="While this file exists, /healthcheck answers 503 (take the node out).",
        )
    ],
}


def load_config(files: Sequence[str] | None = None) -> cfg.ConfigOpts:
    """A private ConfigOpts over ``files`` (None: ``$KILN_CONFIG_FILE`` or the usual search)."""
    if files is None and os.environ.get(CONFIG_ENV):
        files = [f for f in os.environ[CONFIG_ENV].split(os.pathsep) if f]
    conf = cfg.ConfigOpts()
    conf.register_opts(DEFAULT_OPTS)
    for group, opts in GROUP_OPTS.items():
        conf.register_opts(opts, group=group)
    conf(args=[], project="kiln", default_config_files=list(files) if files is not None else None)
    return conf


def api_settings(conf: cfg.ConfigOpts) -> ApiSettings:
    return ApiSettings(
        max_json_body_size=conf.max_json_body_size,
        max_template_size=conf.max_template_size,
        max_stacks_per_tenant=conf.max_stacks_per_tenant,
        max_nested_stack_depth=conf.max_nested_stack_depth,
        enable_stack_abandon=conf.enable_stack_abandon,
        enable_stack_adopt=conf.enable_stack_adopt,
        hidden_stack_tags=tuple(conf.hidden_stack_tags),
        debug=conf.debug,
        revision=conf.revision.heat_revision,
    )


def auth_settings(conf: cfg.ConfigOpts) -> AuthSettings | None:
    """None in the no-auth flavour; otherwise keystonemiddleware reads ``[keystone_authtoken]``."""
    if (conf.paste_deploy.flavor or "").lower() == "noauth":
        return None
    return AuthSettings.from_config(conf)


def make_application(conf: cfg.ConfigOpts, engine: Transport) -> WSGIApp:
    """The whole native API over ``engine`` as configured by ``conf``."""
    settings = api_settings(conf)
    deps = ApiDeps(engine=engine, policy=OsloPolicy(conf=conf), settings=settings)
    return build_native_pipeline(
        create_app(deps),
        settings=settings,
        auth=auth_settings(conf),
        proxy_headers=conf.oslo_middleware.enable_proxy_headers_parsing,
        healthcheck_disable_path=conf.healthcheck.disable_by_file_path,
    )


def engine_transport(conf: cfg.ConfigOpts) -> Transport:
    """The engines over oslo.messaging at ``[DEFAULT] transport_url``."""
    from kiln.rpc.oslo_transport import EngineClient

    if not conf.transport_url:
        raise RuntimeError("[DEFAULT] transport_url is not set: the API cannot reach an engine")
    return EngineClient(
        conf.transport_url, topic=conf.engine.topic, timeout=conf.rpc_response_timeout
    )


class LazyApplication:
    """Builds the application on its first request, once, so importing this module
    (as every WSGI server does) reads no configuration and opens no connection."""

    def __init__(self) -> None:
        self._app: WSGIApp | None = None
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        app = self._app
        if app is None:
            with self._lock:
                if self._app is None:
                    conf = load_config()
                    self._app = make_application(conf, engine_transport(conf))
                app = self._app
        return app(environ, start_response)


application = LazyApplication()
