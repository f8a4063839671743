"""Helpers shared by the repositories: the KEEP sentinel, row conversion, portable upserts.

``KEEP`` marks an optional field of a change that must stay as it is (``None``
is a value for nullable columns). ``insert_ignore`` and ``upsert`` hide the
three dialects' spellings of "insert unless the key exists". ``execute_fenced`` runs a
task owner's UPDATE and raises ``FencedOut`` when it matched no row. Imports:
stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Connection

from kiln.db.errors import FencedOut

T = TypeVar("T")


class Keep(enum.Enum):
    """The type of KEEP."""

    KEEP = "KEEP"


KEEP = Keep.KEEP


def from_row(factory: Callable[..., T], row: sa.Row[Any]) -> T:
    """A record built from a row whose column names are the record's field names."""
    return factory(**row._mapping)


def changes(**fields: Any) -> dict[str, Any]:
    """The fields that are not KEEP."""
    return {name: value for name, value in fields.items() if value is not KEEP}


def is_mysql(conn: Connection) -> bool:
    return conn.dialect.name in ("mysql", "mariadb")


def insert_ignore(conn: Connection, table: sa.Table, row: Mapping[str, Any]) -> None:
    """Insert ``row`` unless its primary key exists (then nothing happens)."""
    name = conn.dialect.name
    if name == "postgresql":
        conn.execute(postgresql.insert(table).values(**row).on_conflict_do_nothing())
    elif name == "sqlite":
        conn.execute(sqlite.insert(table).values(**row).on_conflict_do_nothing())
    else:
        pk = table.primary_key.columns.values()[0]
        stmt = mysql.insert(table).values(**row)
        conn.execute(stmt.on_duplicate_key_update({pk.name: stmt.inserted[pk.name]}))


def upsert(
    conn: Connection, table: sa.Table, row: Mapping[str, Any], update: Sequence[str]
) -> None:
    """Insert ``row``, or update the ``update`` columns of the row with its primary key."""
    name = conn.dialect.name
    if name in ("postgresql", "sqlite"):
        ins = (postgresql.insert if name == "postgresql" else sqlite.insert)(table).values(**row)
        keys = [c.name for c in table.primary_key.columns]
        conn.execute(
            ins.on_conflict_do_update(
                index_elements=keys, set_={col: ins.excluded[col] for col in update}
            )
        )
    else:
        stmt = mysql.insert(table).values(**row)
        conn.execute(stmt.on_duplicate_key_update({col: stmt.inserted[col] for col in update}))


def execute_fenced(conn: Connection, stmt: sa.Update, what: str) -> None:
    """Run a fenced UPDATE; it must match exactly one row, or the writer is fenced out."""
    if conn.execute(stmt).rowcount != 1:
        raise FencedOut(what)
