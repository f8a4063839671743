"""Alembic environment: runs on the connection ``kiln.db.migrate`` hands over.

No ``alembic.ini`` is needed. ``config.attributes["connection"]`` carries an open
connection; without one, the ``sqlalchemy.url`` option names the database. The
target metadata is ``kiln.db.tables.metadata`` (for autogenerate). SQLite gets
batch mode so that later ALTERs work there too. Imports: Alembic, SQLAlchemy,
``kiln.db``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from kiln.db.engine import create_engine
from kiln.db.tables import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("kiln.db migrations need a connection or sqlalchemy.url")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("kiln.db migrations run online only")
run_migrations_online()
