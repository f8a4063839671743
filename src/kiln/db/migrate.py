"""Schema migrations, run programmatically: ``upgrade(engine_or_url)`` is ``alembic upgrade head``.

The Alembic environment lives in ``kiln/db/migrations``; its configuration is
built here, so no ``alembic.ini`` is needed at run time. Imports: stdlib,
SQLAlchemy, Alembic and ``kiln.db``.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, Engine

from kiln.db.engine import create_engine, write

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def alembic_config() -> Config:
    """An Alembic configuration pointing at Kiln's migrations (no ini file)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    """The newest revision of the migrations."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError("kiln.db has no migrations")
    return head


def _with_engine(engine_or_url: Engine | str | URL) -> tuple[Engine, bool]:
    if isinstance(engine_or_url, Engine):
        return engine_or_url, False
    return create_engine(engine_or_url), True


def upgrade(engine_or_url: Engine | str | URL, revision: str = "head") -> None:
    """Bring the database to ``revision`` (default: the newest); a no-op when it is there."""
    engine, owned = _with_engine(engine_or_url)
    try:
        # write(): on SQLite this takes the process-wide write lock like any writer.
        with write(engine) as conn:
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        if owned:
            engine.dispose()


def current_revision(engine_or_url: Engine | str | URL) -> str | None:
    """The revision the database is at, ``None`` when it was never migrated."""
    engine, owned = _with_engine(engine_or_url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        if owned:
            engine.dispose()
