"""The heat.conf-style configuration of ``kiln api``, ``kiln engine``, ``kiln sandbox``
and ``kiln manage``, read by oslo.config.

One file serves every process (Heat's habit): each process registers every option
and reads what it needs. Options keep Heat's names and defaults where Heat has the
option; Kiln's own live in ``[engine]`` and ``[sandbox]``. ``list_opts`` is the
``oslo.config.opts`` entry point behind ``etc/kiln/kiln.conf.sample``
(``oslo-config-generator --namespace kiln``; ``make lint`` checks it is current).

The API's options are declared beside the WSGI application that reads them
(``kiln.api.native.wsgi``) and only listed here.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from oslo_config import cfg

from kiln.api.native import wsgi
from kiln.cli.global_environment import PACKAGED_ENVIRONMENT_DIR

CONFIG_ENV = wsgi.CONFIG_ENV

ENGINE_DEFAULT_OPTS = [
    cfg.StrOpt(
        "host",
        default=socket.gethostname(),
        sample_default="<hostname>",
        help="Name of this node; engine ids start with it.",
    ),
    cfg.IntOpt(
        "max_resources_per_stack",
        default=1000,
        help="Maximum resources a stack may have (-1: unlimited).",
    ),
    cfg.IntOpt(
        "max_events_per_stack",
        default=1000,
        help="Events kept per stack; older ones are purged when an action ends (0: all).",
    ),
    cfg.IntOpt(
        "stack_action_timeout",
        default=3600,
        help="Seconds a stack action may take when the stack sets no timeout.",
    ),
    cfg.StrOpt(
        "region_name_for_services",
        help="The region whose endpoints the engine uses (default: the catalog's first).",
    ),
    cfg.StrOpt(
        "heat_metadata_server_url",
        help="URL of the CloudFormation-compatible API (http://host:8000) that servers' "
        "agents poll with software_config_transport POLL_SERVER_CFN; unset, such servers "
        "fail (POLL_SERVER_HEAT needs only Keystone and the native API).",
    ),
    cfg.StrOpt(
        "environment_dir",
        default=str(PACKAGED_ENVIRONMENT_DIR),
        sample_default="<the environment.d directory of the kiln.resources package>",
        help="Directory of the global environment: every file in it is an environment "
        "whose resource_registry all stacks' registries are layered over (Heat's default "
        "is /etc/heat/environment.d; Kiln's own maps old type names such as "
        "OS::Ceilometer::Alarm).",
    ),
]

#: Heat's stack-user domain: each stack's in-server agents get a project and users there,
#: made by an admin of that domain alone (kiln.cloud.api.identity)
STACK_DOMAIN_OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "stack_user_domain_id",
        help="Id of the Keystone domain that holds stack users and their projects; "
        "wins over stack_user_domain_name.",
    ),
    cfg.StrOpt(
        "stack_user_domain_name",
        default="heat",
        help="Name of the Keystone domain that holds stack users and their projects, "
        "used when stack_user_domain_id is not set ('heat' is the sandbox's).",
    ),
    cfg.StrOpt(
        "stack_domain_admin",
        help="User of the stack-user domain with the admin role on that domain; Kiln "
        "makes stack users as this user. Unset: types that need stack users fail.",
    ),
    cfg.StrOpt(
        "stack_domain_admin_password",
        secret=True,
        help="Password of stack_domain_admin.",
    ),
]

ENGINE_OPTS: list[cfg.Opt] = [
    cfg.IntOpt(
        "workers",
        default=128,
        min=1,
        help="Worker threads of one engine process; each runs one step at a time and "
        "waits out one cloud call (kiln engine --workers overrides).",
    ),
    cfg.FloatOpt(
        "lease_seconds",
        default=15.0,
        min=1.0,
        help="How long a claimed task belongs to its engine without a heartbeat; a "
        "dead engine's tasks are taken over after this and one sweep interval.",
    ),
    cfg.FloatOpt(
        "heartbeat_interval",
        default=5.0,
        min=0.1,
        help="Seconds between an engine's heartbeats (which renew its leases) and "
        "sweeps (which hand expired leases to any engine).",
    ),
    cfg.FloatOpt(
        "idle_poll",
        default=1.0,
        min=0.05,
        help="Seconds an idle engine waits before it looks at the queue again when no "
        "wake-up arrives (wake-ups are only hints).",
    ),
    cfg.IntOpt(
        "max_tasks_per_stack",
        default=64,
        min=0,
        help="Tasks of one stack tree running at once across all engines (0: no limit).",
    ),
    cfg.StrOpt(
        "cloud",
        default="openstack",
        choices=[
            ("openstack", "the cloud of [trustee] through openstacksdk"),
            ("none", "no cloud: only Heat's own resource types work"),
        ],
        help="Where resources are made.",
    ),
    wsgi.ENGINE_TOPIC_OPT,
]

DATABASE_OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "connection",
        secret=True,
        help="SQLAlchemy URL of the database: postgresql://, mysql:// (MariaDB) or sqlite:///.",
    ),
    cfg.IntOpt("max_pool_size", default=16, help="Connections kept open per process."),
    cfg.IntOpt("max_overflow", default=48, help="Extra connections opened under load."),
    cfg.IntOpt("pool_timeout", default=30, help="Seconds to wait for a free connection."),
    cfg.IntOpt(
        "connection_recycle_time",
        default=3600,
        help="Connections older than this many seconds are replaced.",
    ),
]

HEAT_API_OPTS: list[cfg.Opt] = [
    cfg.HostAddressOpt("bind_host", default="0.0.0.0", help="Address the API listens on."),
    cfg.PortOpt("bind_port", default=8004, help="Port the API listens on."),
    cfg.IntOpt(
        "threads",
        default=16,
        min=1,
        help="Request threads of one kiln api process (Heat's 'workers' forks processes; "
        "run more kiln api processes or a WSGI server for that).",
    ),
]

TRUSTEE_OPTS: list[cfg.Opt] = [
    cfg.StrOpt("auth_type", default="password", help="keystoneauth plugin of the trustee."),
    cfg.StrOpt("auth_url", help="Keystone of the cloud, e.g. http://keystone:5000/v3."),
    cfg.StrOpt("username", help="Kiln's service user: receives every stack owner's trust."),
    cfg.StrOpt("password", secret=True, help="Password of the service user."),
    cfg.StrOpt("user_domain_id", default="default", help="Domain id of the service user."),
    cfg.StrOpt("user_domain_name", help="Domain name of the service user."),
    cfg.StrOpt("project_name", help="Project the service user acts in when it acts itself."),
    cfg.StrOpt("project_domain_id", default="default", help="Domain id of project_name."),
]

CLIENTS_OPTS: list[cfg.Opt] = [
    cfg.StrOpt(
        "endpoint_type",
        default="publicURL",
        help="Which catalog endpoints to use: publicURL, internalURL or adminURL.",
    ),
    cfg.StrOpt("ca_file", help="CA bundle to verify the cloud's TLS certificates."),
    cfg.BoolOpt("insecure", default=False, help="Do not verify TLS certificates."),
    cfg.IntOpt(
        "max_concurrency",
        default=32,
        min=1,
        help="Calls one engine process makes at once to one endpoint (Kiln's own).",
    ),
]

SANDBOX_OPTS: list[cfg.Opt] = [
    cfg.HostAddressOpt("host", default="127.0.0.1", help="Address kiln sandbox listens on."),
    cfg.PortOpt("port", default=5000, help="Port kiln sandbox listens on."),
    cfg.StrOpt("public_host", help="Host name written into the catalog's URLs."),
    cfg.StrOpt(
        "data_dir",
        default="~/.local/share/kiln/sandbox",
        help="Where the simulated cloud's state and credentials live.",
    ),
    cfg.StrOpt(
        "simulation_file",
        help="YAML of the simulated cloud's latency, delays, faults and quotas.",
    ),
    cfg.StrOpt(
        "orchestration_url",
        help="URL of the orchestration API to list in the catalog, e.g. "
        "http://api-host:8004/v1/%(project_id)s.",
    ),
]

GROUPS: dict[str, list[cfg.Opt]] = {
    "engine": ENGINE_OPTS,
    "database": DATABASE_OPTS,
    "heat_api": HEAT_API_OPTS,
    "trustee": TRUSTEE_OPTS,
    "clients": CLIENTS_OPTS,
    "sandbox": SANDBOX_OPTS,
}


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """Every option of every Kiln process, by group (the sample generator's entry point).

    ``[DEFAULT] transport_url`` and ``rpc_response_timeout`` are listed here although
    oslo.messaging declares options of the same names: its namespace is not in the
    sample (etc/kiln/kiln-config-generator.conf says why), so these are Kiln's.
    """
    groups: dict[str, list[cfg.Opt]] = {
        "DEFAULT": [*wsgi.DEFAULT_OPTS, *ENGINE_DEFAULT_OPTS, *STACK_DOMAIN_OPTS]
    }
    for name, opts in wsgi.GROUP_OPTS.items():
        groups[name] = list(opts)
    for name, opts in GROUPS.items():
        groups[name] = list(opts)
    return sorted(groups.items())


def load(files: Sequence[str] | None = None) -> cfg.ConfigOpts:
    """A private ConfigOpts with every option, over ``files``.

    None: ``$KILN_CONFIG_FILE`` (paths separated by ``os.pathsep``) or oslo.config's
    search for ``kiln.conf`` (``~/.kiln``, ``~``, ``/etc/kiln``, ``/etc``).
    """
    if files is None and os.environ.get(CONFIG_ENV):
        files = [f for f in os.environ[CONFIG_ENV].split(os.pathsep) if f]
    conf = cfg.ConfigOpts()
    for group, opts in list_opts():
        conf.register_opts(opts, group=None if group == "DEFAULT" else group)
    conf(args=[], project="kiln", default_config_files=list(files) if files is not None else None)
    return conf


def database_url(conf: cfg.ConfigOpts) -> str:
    url: str | None = conf.database.connection
    if not url:
        raise ConfigError("[database] connection is not set")
    return url


def pool_options(conf: cfg.ConfigOpts, url: str) -> dict[str, Any]:
    """SQLAlchemy pool settings of ``[database]`` (none for SQLite, which has its own)."""
    if url.startswith("sqlite"):
        return {}
    db = conf.database
    return {
        "pool_size": db.max_pool_size,
        "max_overflow": db.max_overflow,
        "pool_timeout": db.pool_timeout,
        "pool_recycle": db.connection_recycle_time,
    }


def trustee_auth(conf: cfg.ConfigOpts) -> dict[str, Any]:
    """The keystoneauth settings of Kiln's service user (``[trustee]``)."""
    trustee = conf.trustee
    if not trustee.auth_url or not trustee.username:
        raise ConfigError("[trustee] auth_url and username are needed to reach the cloud")
    auth = {
        "auth_url": trustee.auth_url,
        "username": trustee.username,
        "password": trustee.password,
        "user_domain_id": trustee.user_domain_id,
        "project_name": trustee.project_name,
        "project_domain_id": trustee.project_domain_id,
    }
    if trustee.user_domain_name:
        auth["user_domain_name"] = trustee.user_domain_name
    return {k: v for k, v in auth.items() if v is not None}


def stack_domain_auth(conf: cfg.ConfigOpts) -> dict[str, Any] | None:
    """keystoneauth settings of the stack domain admin, scoped to the stack-user domain
    (the Keystone of ``[trustee] auth_url``); None when ``stack_domain_admin`` is unset."""
    if not conf.stack_domain_admin:
        return None
    if not conf.trustee.auth_url:
        raise ConfigError("[trustee] auth_url is needed to reach the stack-user domain")
    if not (conf.stack_user_domain_id or conf.stack_user_domain_name):
        raise ConfigError("stack_user_domain_id or stack_user_domain_name is needed")
    from kiln.cloud.openstack.identity import stack_domain_auth as domain_auth

    return domain_auth(
        auth_url=conf.trustee.auth_url,
        username=conf.stack_domain_admin,
        password=conf.stack_domain_admin_password or "",
        domain_id=conf.stack_user_domain_id,
        domain_name=conf.stack_user_domain_name,
    )


def interface(conf: cfg.ConfigOpts) -> str:
    """Heat's ``endpoint_type`` (publicURL) as keystoneauth's interface (public)."""
    value: str = conf.clients.endpoint_type
    return value[: -len("URL")] if value.endswith("URL") else value


class ConfigError(Exception):
    """The configuration lacks something a process needs; the message says what."""
