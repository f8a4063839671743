"""kiln.db.engine: per-dialect settings, default_url, and serialised SQLite writers."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from kiln.core.errors import InternalError
from kiln.db.engine import create_engine, default_url, normalise_url, read, write
from kiln.db.migrate import upgrade
from kiln.db.tables import engine as engine_table
from kiln.db.tables import resource_data

_T = datetime(2025, 1, 1, tzinfo=UTC)


def test_default_url_is_a_sqlite_file_in_the_data_dir(tmp_path: Path) -> None:
    url = default_url(tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve()}/kiln.sqlite"
    engine = create_engine(url)
    with write(engine) as conn:
        conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
    engine.dispose()
    assert (tmp_path / "kiln.sqlite").is_file()


@pytest.mark.parametrize(
    ("given", "driver"),
    [
        ("sqlite:///x.db", "sqlite"),
        ("postgresql://u@h/d", "postgresql+psycopg"),
        ("postgresql+psycopg2://u@h/d", "postgresql+psycopg"),
        ("mysql://u@h/d", "mysql+pymysql"),
        ("mariadb://u@h/d", "mysql+pymysql"),
    ],
)
def test_urls_get_kilns_driver(given: str, driver: str) -> None:
    assert normalise_url(given).drivername == driver


def test_mysql_urls_get_utf8mb4() -> None:
    assert normalise_url("mysql://u@h/d").query["charset"] == "utf8mb4"
    assert normalise_url("mysql://u@h/d?charset=latin1").query["charset"] == "latin1"


def test_other_backends_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported database backend 'oracle'"):
        normalise_url("oracle://u@h/d")


def test_dialect_settings(db: Engine) -> None:
    # a server connection may drop and needs the check; a local file does not
    assert db.pool._pre_ping == (db.dialect.name != "sqlite")
    with read(db) as conn:
        if db.dialect.name == "sqlite":
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
        elif db.dialect.name == "postgresql":
            assert db.dialect.driver == "psycopg"
        else:
            assert db.dialect.driver == "pymysql"
            level = conn.exec_driver_sql("SELECT @@tx_isolation").scalar()
            assert level == "READ-COMMITTED"


def test_foreign_keys_are_enforced(db: Engine) -> None:
    with pytest.raises(sa.exc.IntegrityError), write(db) as conn:
        conn.execute(
            resource_data.insert().values(resource_id="nope", key="k", value="v", redact=False)
        )


def test_write_rolls_back_on_error(db: Engine) -> None:
    with pytest.raises(RuntimeError), write(db) as conn:
        conn.execute(
            engine_table.insert().values(id="e1", host="h", pid=1, started_at=_T, heartbeat_at=_T)
        )
        raise RuntimeError("boom")
    with read(db) as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(engine_table)).scalar() == 0


def test_sqlite_nested_write_is_refused(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/n.sqlite")
    with write(engine), pytest.raises(InternalError, match="nested write"), write(engine):
        pass
    engine.dispose()


def test_sqlite_writers_from_many_threads_and_engines_serialise(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/w.sqlite"
    upgrade(url)
    engines = [create_engine(url), create_engine(url)]
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        engine = engines[n % 2]
        try:
            for i in range(25):
                with write(engine) as conn:
                    # A read first, then a write: the pattern that fails with
                    # "database is locked" when writers are not serialised.
                    conn.execute(sa.select(sa.func.count()).select_from(engine_table)).scalar()
                    conn.execute(
                        engine_table.insert().values(
                            id=f"{n}-{i}", host="h", pid=n, started_at=_T, heartbeat_at=_T
                        )
                    )
                with read(engine) as conn:
                    conn.execute(sa.select(engine_table.c.id)).all()
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with read(engines[0]) as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(engine_table)).scalar() == 150
    for engine in engines:
        engine.dispose()


def test_sqlite_reads_run_while_a_write_is_open(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/r.sqlite"
    upgrade(url)
    engine = create_engine(url)
    with write(engine) as conn:
        conn.execute(
            engine_table.insert().values(id="a", host="h", pid=1, started_at=_T, heartbeat_at=_T)
        )
        # Another thread reads (the committed state) while this write is open.
        seen: list[int] = []

        def reader() -> None:
            with read(engine) as rconn:
                seen.append(
                    rconn.execute(sa.select(sa.func.count()).select_from(engine_table)).scalar_one()
                )

        t = threading.Thread(target=reader)
        t.start()
        t.join(timeout=5)
        assert seen == [0]
    engine.dispose()
