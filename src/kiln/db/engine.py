"""Engines with the right settings per dialect, and the read/write transaction helpers.

SQLite runs in WAL mode with ``busy_timeout`` and foreign keys on. Its writers
serialise behind one process-wide lock per database file and open their
transaction with ``BEGIN IMMEDIATE``, so that they queue instead of failing with
"database is locked" (a deferred transaction that upgrades to a writer after
another writer committed cannot be saved by the busy timeout); readers use
plain ``BEGIN`` and run in parallel. PostgreSQL uses psycopg 3, MariaDB PyMySQL
in READ COMMITTED (no gap locks, so ``SKIP LOCKED`` claims do not block each
other). All pools ping before use. Repository functions take a ``Connection``:
open it with :func:`write` for anything that writes and :func:`read` otherwise.
Imports: stdlib, SQLAlchemy and ``kiln.core`` only.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.pool import StaticPool

from kiln.core.errors import InternalError

# SQLite's busy timeout, and how long a writer waits for the process-wide lock.
BUSY_TIMEOUT_S = 30.0

_WRITE_OPTION = "kiln_write"
_DRIVERS = {
    "sqlite": "sqlite",
    "postgresql": "postgresql+psycopg",
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
}

_locks_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}
_held = threading.local()


def default_url(data_dir: str | os.PathLike[str]) -> str:
    """The SQLite database of an embedded installation: ``<data_dir>/kiln.sqlite``."""
    path = Path(data_dir).resolve() / "kiln.sqlite"
    return URL.create("sqlite", database=str(path)).render_as_string(hide_password=False)


def normalise_url(url: str | URL) -> URL:
    """``url`` with Kiln's driver for its backend; other backends are refused."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend not in _DRIVERS:
        raise ValueError(f"unsupported database backend {backend!r} in {parsed!r}")
    parsed = parsed.set(drivername=_DRIVERS[backend])
    if backend in ("mysql", "mariadb") and "charset" not in parsed.query:
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed


def create_engine(url: str | URL, **kwargs: Any) -> Engine:
    """An engine for ``url`` (SQLite, PostgreSQL or MariaDB) with Kiln's settings.

    Extra keyword arguments go to :func:`sqlalchemy.create_engine` (pool sizes).
    """
    parsed = normalise_url(url)
    backend = parsed.get_backend_name()
    options: dict[str, Any] = {"pool_pre_ping": True}
    if backend == "sqlite":
        options["connect_args"] = {"timeout": BUSY_TIMEOUT_S, "check_same_thread": False}
        # A local file needs no liveness check; WAL readers run in parallel, so let the
        # engine's many worker threads each have a connection rather than queue for one.
        options["pool_pre_ping"] = False
        if _is_memory(parsed):
            # One shared connection; only fit for single-threaded use (tests, tools).
            options["poolclass"] = StaticPool
        else:
            options.update(pool_size=16, max_overflow=48)
    elif backend in ("mysql", "mariadb"):
        options["isolation_level"] = "READ COMMITTED"
    options.update(kwargs)
    engine = sa.create_engine(parsed, **options)
    if backend == "sqlite":
        _configure_sqlite(engine)
    return engine


def _is_memory(url: URL) -> bool:
    return url.database in (None, "", ":memory:") or "mode=memory" in str(url)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module (it would
        # start transactions lazily); the "begin" hook below issues BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = "BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN"
        # Straight to the driver: not a statement of the caller's (not counted).
        conn.connection.driver_connection.execute(mode)  # type: ignore[union-attr]


def _sqlite_lock(engine: Engine) -> threading.Lock:
    database = engine.url.database or ":memory:"
    key = database if _is_memory(engine.url) else os.path.realpath(database)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


@contextmanager
def write(engine: Engine) -> Iterator[Connection]:
    """A write transaction: committed when the block ends, rolled back on error.

    On SQLite it holds the database's process-wide write lock throughout.
    """
    if engine.dialect.name != "sqlite":
        with engine.begin() as conn:
            yield conn
        return
    lock = _sqlite_lock(engine)
    held: set[int] = _held.__dict__.setdefault("locks", set())
    if id(lock) in held:
        raise InternalError("nested write transaction on the same SQLite database")
    if not lock.acquire(timeout=BUSY_TIMEOUT_S):
        raise InternalError(f"timed out after {BUSY_TIMEOUT_S:g} s waiting for the write lock")
    held.add(id(lock))
    try:
        with engine.execution_options(**{_WRITE_OPTION: True}).begin() as conn:
            yield conn
    finally:
        held.discard(id(lock))
        lock.release()


@contextmanager
def read(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction (rolled back at the end); runs in parallel with writers."""
    with engine.connect() as conn:
        yield conn
