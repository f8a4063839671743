"""A scaled-out Kiln as subprocesses: ``kiln sandbox``, N ``kiln api``, M ``kiln engine``.

For the scale-out tests and benchmarks (ARCHITECTURE.md 1, scaled-out mode): one
fresh database on PostgreSQL or MariaDB (or a SQLite file), the real RabbitMQ, one
heat.conf-style file shared by every process (each API adds an overlay with its
port), Keystone from the sandbox. Every process logs to its own file in the work
directory, so a failing test can show what each one said.
Imports: anything (test support).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
import yaml

from kiln.testing.kiln_process import VENV_BIN, free_port

READY_TIMEOUT = 90.0
DEFAULT_TRANSPORT_URL = os.environ.get(
    "KILN_TEST_TRANSPORT_URL", "rabbit://guest:guest@127.0.0.1:5672/"
)
# The database servers CI runs (.ci/services.sh); {db} is the database name.
SERVER_URLS = {
    "postgresql": os.environ.get(
        "KILN_TEST_POSTGRESQL_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
    ),
    "mariadb": os.environ.get("KILN_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/{db}"),
}
_ADMIN_DB = {"postgresql": "postgres", "mariadb": ""}


@contextmanager
def fresh_database(backend: str, work_dir: pathlib.Path) -> Iterator[str]:
    """A new empty database on ``backend`` (``sqlite``, ``postgresql``, ``mariadb``),
    dropped afterwards; yields its URL."""
    if backend == "sqlite":
        yield f"sqlite:///{work_dir / 'kiln.sqlite'}"
        return
    name = f"kiln_cluster_{uuid.uuid4().hex[:10]}"
    template = SERVER_URLS[backend]
    admin = sa.create_engine(
        template.format(db=_ADMIN_DB[backend]),
        isolation_level="AUTOCOMMIT",
        poolclass=sa.pool.NullPool,
    )
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    try:
        yield template.format(db=name)
    finally:
        with admin.connect() as conn:
            if backend == "postgresql":
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            else:
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()


@dataclass
class Process:
    """One kiln subprocess with its log file."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: pathlib.Path

    def wait_ready(self, marker: bytes, timeout: float = READY_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.log_path.read_bytes():
            if self.popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start:\n{self.log_tail()}")
            time.sleep(0.05)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive:
            self.popen.send_signal(sig)
            self.popen.wait(30)

    def stop(self) -> None:
        if not self.alive:
            return
        self.popen.terminate()
        try:
            self.popen.wait(20)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class Cluster:
    """``kiln sandbox`` + ``apis`` x ``kiln api`` + ``engines`` x ``kiln engine``."""

    work_dir: pathlib.Path
    database_url: str
    transport_url: str = DEFAULT_TRANSPORT_URL
    apis: int = 2
    engines: int = 3
    engine_workers: int = 16
    lease_seconds: float = 15.0
    heartbeat_interval: float = 5.0
    #: extra ``kiln.conf`` settings: {section: {option: value}}
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: the simulated cloud's latency, delays, faults and quotas (``--sandbox-config``)
    sandbox_config: Mapping[str, Any] | None = None
    sandbox: Process | None = None
    api_processes: list[Process] = field(default_factory=list)
    engine_processes: list[Process] = field(default_factory=list)
    sandbox_port: int = 0
    api_ports: list[int] = field(default_factory=list)
    passwords: dict[str, str] = field(default_factory=dict)

    # -- start and stop ---------------------------------------------------------------------
    def start(self) -> Cluster:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.sandbox_port = free_port()
        self.api_ports = [free_port() for _ in range(self.apis)]
        try:
            self._start_sandbox()
            self._write_config()
            self.manage("db-sync")
            for _ in range(self.engines):
                self.start_engine(wait=False)
            for i in range(self.apis):
                self.start_api(i, wait=False)
            for process in [*self.engine_processes, *self.api_processes]:
                process.wait_ready(f"kiln {process.name.split('-')[0]}: ready".encode())
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        processes = [*self.api_processes, *self.engine_processes]
        for process in processes:  # all at once: each takes a few seconds to stop
            if process.alive:
                process.popen.terminate()
        for process in processes:
            process.stop()
        if self.sandbox is not None:
            self.sandbox.stop()

    def _spawn(self, name: str, *args: str) -> Process:
        log_path = self.work_dir / f"{name}.log"
        with log_path.open("ab") as log:
            popen = subprocess.Popen(
                [str(VENV_BIN / "kiln"), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._env(),
            )
        return Process(name, popen, log_path)

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "KILN_CONFIG"))}
        env["PATH"] = f"{VENV_BIN}:{env.get('PATH', '')}"
        return env

    def _start_sandbox(self) -> None:
        args = [
            "sandbox",
            "--data-dir",
            str(self.work_dir / "sandbox"),
            "--port",
            str(self.sandbox_port),
            "--clouds-yaml",
            str(self.clouds_yaml),
            "--orchestration-url",
            f"http://127.0.0.1:{self.api_ports[0]}/v1/%(project_id)s",
        ]
        if self.sandbox_config is not None:
            path = self.work_dir / "sandbox.yaml"
            path.write_text(yaml.safe_dump(dict(self.sandbox_config)))
            args += ["--sandbox-config", str(path)]
        self.sandbox = self._spawn("sandbox", *args)
        self.sandbox.wait_ready(b"kiln sandbox: ready")
        self.passwords = json.loads((self.work_dir / "sandbox" / "credentials.json").read_text())

    def _write_config(self) -> None:
        identity = f"{self.identity_url}/v3"
        service = {
            "auth_url": identity,
            "username": "kiln",
            "password": self.passwords["service"],
            "project_name": "admin",
        }
        sections: dict[str, dict[str, Any]] = {
            "DEFAULT": {
                "transport_url": self.transport_url,
                "rpc_response_timeout": 15,
                # the sandbox's stack-user domain admin has its admin password
                "stack_domain_admin": "heat_domain_admin",
                "stack_domain_admin_password": self.passwords["admin"],
            },
            "database": {"connection": self.database_url},
            "keystone_authtoken": {
                "www_authenticate_uri": identity,
                "auth_type": "password",
                "user_domain_id": "default",
                "project_domain_id": "default",
                **service,
            },
            "trustee": dict(service),
            "engine": {
                "workers": self.engine_workers,
                "lease_seconds": self.lease_seconds,
                "heartbeat_interval": self.heartbeat_interval,
                "idle_poll": 0.5,
                # a topic of its own: other Kilns may share the broker
                "topic": f"kiln-engine-{uuid.uuid4().hex[:8]}",
            },
            "heat_api": {"bind_host": "127.0.0.1", "bind_port": self.api_ports[0]},
        }
        for section, values in self.settings.items():
            sections.setdefault(section, {}).update(values)
        self.config_path.write_text(_ini(sections))
        for i, port in enumerate(self.api_ports):
            self._api_overlay(i).write_text(_ini({"heat_api": {"bind_port": port}}))

    def _api_overlay(self, index: int) -> pathlib.Path:
        return self.work_dir / f"api-{index}.conf"

    def start_engine(self, *, wait: bool = True) -> Process:
        process = self._spawn(
            f"engine-{len(self.engine_processes)}", "engine", "--config-file", str(self.config_path)
        )
        self.engine_processes.append(process)
        if wait:
            process.wait_ready(b"kiln engine: ready")
        return process

    def start_api(self, index: int, *, wait: bool = True) -> Process:
        process = self._spawn(
            f"api-{index}",
            "api",
            "--config-file",
            str(self.config_path),
            "--config-file",
            str(self._api_overlay(index)),
        )
        self.api_processes.append(process)
        if wait:
            process.wait_ready(b"kiln api: ready")
        return process

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(VENV_BIN / "kiln"), "manage", "--config-file", str(self.config_path), *args],
            capture_output=True,
            text=True,
            env=self._env(),
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"kiln manage {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
        return done

    # -- where things are -------------------------------------------------------------------
    @property
    def config_path(self) -> pathlib.Path:
        return self.work_dir / "kiln.conf"

    @property
    def clouds_yaml(self) -> pathlib.Path:
        return self.work_dir / "clouds.yaml"

    @property
    def identity_url(self) -> str:
        return f"http://127.0.0.1:{self.sandbox_port}"

    def api_url(self, index: int = 0) -> str:
        return f"http://127.0.0.1:{self.api_ports[index]}"

    def logs(self) -> str:
        """The last lines of every process's log (for a failing test's message)."""
        processes = [self.sandbox, *self.api_processes, *self.engine_processes]
        return "\n".join(f"--- {p.name} ---\n{p.log_tail()}" for p in processes if p is not None)

    # -- clients ----------------------------------------------------------------------------
    def auth(self, user: str = "demo", project: str = "demo", password: str | None = None) -> Any:
        return {
            "auth_url": f"{self.identity_url}/v3",
            "username": user,
            "password": password or self.passwords[user],
            "project_name": project,
            "user_domain_id": "default",
            "project_domain_id": "default",
        }

    def connect(self, *, api: int = 0, **auth: Any) -> Any:
        """An openstacksdk connection whose orchestration calls go to API ``api``."""
        import openstack

        return openstack.connect(
            auth=self.auth(**auth),
            region_name="RegionOne",
            orchestration_endpoint_override=f"{self.api_url(api)}/v1/%(project_id)s",
            # a pooled keep-alive connection the server closed while idle is tried again
            # on a new one, as any long-lived client should
            connect_retries=3,
        )

    def add_project(self, name: str) -> dict[str, str]:
        """A project with a member user of the same name; returns its auth settings."""
        admin = self.connect(user="admin", project="admin")
        project = admin.identity.create_project(name=name, domain_id="default")
        user = admin.identity.create_user(
            name=name, password=f"{name}-secret", default_project_id=project.id
        )
        member = admin.identity.find_role("member", ignore_missing=False)
        admin.identity.assign_project_role_to_user(project, user, member)
        return {"user": name, "project": name, "password": f"{name}-secret"}

    def cloud_calls(self, service: str | None = None, operation: str | None = None) -> Any:
        """The sandbox's call log (``GET /_sim/requests``)."""
        admin = self.connect(user="admin", project="admin")
        query = "&".join(
            f"{k}={v}" for k, v in (("service", service), ("operation", operation)) if v
        )
        request = urllib.request.Request(
            f"{self.identity_url}/_sim/requests?{query}",
            headers={"X-Auth-Token": admin.auth_token},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())["requests"]

    def database(self) -> sa.Engine:
        from kiln.db.engine import create_engine

        return create_engine(self.database_url, poolclass=sa.pool.NullPool)


def _ini(sections: Mapping[str, Mapping[str, Any]]) -> str:
    out = []
    for section, values in sections.items():
        out.append(f"[{section}]")
        out += [f"{key} = {value}" for key, value in values.items()]
        out.append("")
    return "\n".join(out)
