"""The ``db`` fixture: every repository test runs on SQLite, PostgreSQL and MariaDB.

Each backend gets one fresh database per test session (a temporary SQLite
file; ``kiln_test_<random>`` on the servers, dropped at the end), migrated once
with ``kiln.db.migrate.upgrade``; every test starts from empty tables. A server
that cannot be reached skips its tests, except under ``CI`` where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.engine import create_engine, write
from kiln.db.migrate import upgrade
from kiln.db.tables import DELETE_ORDER

BACKENDS = ("sqlite", "postgresql", "mariadb")

# label, URL template ({db} is the database), the database the admin connection uses.
# KILN_TEST_POSTGRESQL_URL / KILN_TEST_MARIADB_URL override the templates.
SERVERS = {
    "postgresql": (
        "PostgreSQL",
        os.environ.get(
            "KILN_TEST_POSTGRESQL_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
        ),
        "test",
    ),
    "mariadb": (
        "MariaDB",
        os.environ.get("KILN_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306/{db}"),
        "",
    ),
}


class Databases:
    """Creates each backend's session database on first use; drops them at the end."""

    def __init__(self, tmp_dir: str) -> None:
        self.tmp_dir = tmp_dir
        self.name = f"kiln_test_{uuid.uuid4().hex[:12]}"
        self.engines: dict[str, Engine] = {}
        self.failures: dict[str, str] = {}
        self.created: list[str] = []

    def get(self, backend: str) -> Engine:
        if backend in self.failures:
            _unavailable(self.failures[backend])
        if backend not in self.engines:
            try:
                self.engines[backend] = self._create(backend)
            except sa.exc.OperationalError as exc:
                label, template, _ = SERVERS[backend]
                where = sa.engine.make_url(template.format(db="")).render_as_string()
                self.failures[backend] = (
                    f"{label} is not reachable at {where} ({exc.orig}); "
                    "start it with .ci/services.sh"
                )
                _unavailable(self.failures[backend])
        return self.engines[backend]

    def _create(self, backend: str) -> Engine:
        if backend == "sqlite":
            engine = create_engine(f"sqlite:///{self.tmp_dir}/kiln.sqlite")
        else:
            _label, template, admin_db = SERVERS[backend]
            admin = sa.create_engine(
                template.format(db=admin_db),
                isolation_level="AUTOCOMMIT",
                connect_args={"connect_timeout": 5},
                poolclass=sa.pool.NullPool,
            )
            with admin.connect() as conn:
                extra = " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" if backend == "mariadb" else ""
                conn.exec_driver_sql(f"CREATE DATABASE {self.name}{extra}")
            admin.dispose()
            self.created.append(backend)
            engine = create_engine(template.format(db=self.name))
        upgrade(engine)
        return engine

    def close(self) -> None:
        for engine in self.engines.values():
            engine.dispose()
        for backend in self.created:
            _label, template, admin_db = SERVERS[backend]
            admin = sa.create_engine(
                template.format(db=admin_db),
                isolation_level="AUTOCOMMIT",
                poolclass=sa.pool.NullPool,
            )
            force = " WITH (FORCE)" if backend == "postgresql" else ""
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {self.name}{force}")
            admin.dispose()


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Databases]:
    dbs = Databases(str(tmp_path_factory.mktemp("kiln_db")))
    yield dbs
    dbs.close()


def clear(engine: Engine) -> None:
    with write(engine) as conn:
        # MariaDB checks the stack self-reference row by row: unlink first.
        conn.execute(tables.stack.update().values(owner_id=None))
        for table in DELETE_ORDER:
            conn.execute(table.delete())


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, databases: Databases) -> Engine:
    """A migrated, empty database of each backend."""
    engine = databases.get(request.param)
    clear(engine)
    return engine


@pytest.fixture
def now() -> datetime:
    return datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def ids() -> Callable[[], str]:
    return lambda: str(uuid.uuid4())
