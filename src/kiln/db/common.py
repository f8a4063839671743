"""Helpers shared by the repositories: the KEEP sentinel, row conversion, portable upserts.

``KEEP`` marks an optional field of a change that must stay as it is (``None``
is a value for nullable columns). ``insert_ignore`` and ``upsert`` hide the
three dialects' spellings of "insert unless the key exists". ``execute_fenced`` runs a
task owner's UPDATE and raises ``FencedOut`` when it matched no row. Hot statements
are built once with ``param``/``set_params`` placeholders and executed with a
parameter dict (SQLAlchemy then reuses its cache key and compiled form instead
of rebuilding the statement on every call). Imports: stdlib, SQLAlchemy and
``kiln.db``.
"""

from __future__ import annotations

import enum
import functools
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


def param(col: sa.Column[Any], prefix: str = "w_") -> sa.BindParameter[Any]:
    """A placeholder typed like ``col``, named ``<prefix><column>`` (never a bare column name)."""
    return sa.bindparam(f"{prefix}{col.name}", type_=col.type)


def set_params(table: sa.Table, names: Sequence[str]) -> dict[str, sa.BindParameter[Any]]:
    """SET placeholders for those columns, filled by ``set_values``."""
    return {name: param(table.c[name], "v_") for name in names}


def set_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of ``set_params`` placeholders for these column values."""
    return {f"v_{name}": value for name, value in values.items()}


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


@functools.cache
def _upsert_stmt(
    dialect: str, table: sa.Table, names: tuple[str, ...], update: tuple[str, ...]
) -> Any:
    row = set_params(table, names)
    if dialect in ("postgresql", "sqlite"):
        ins = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table).values(row)
        keys = [c.name for c in table.primary_key.columns]
        return ins.on_conflict_do_update(
            index_elements=keys, set_={col: ins.excluded[col] for col in update}
        )
    stmt = mysql.insert(table).values(row)
    return stmt.on_duplicate_key_update({col: stmt.inserted[col] for col in update})


def upsert(
    conn: Connection, table: sa.Table, row: Mapping[str, Any], update: Sequence[str]
) -> None:
    """Insert ``row``, or update the ``update`` columns of the row with its primary key."""
    dialect = "mysql" if is_mysql(conn) else conn.dialect.name
    stmt = _upsert_stmt(dialect, table, tuple(row), tuple(update))
    conn.execute(stmt, set_values(row))


def execute_fenced(
    conn: Connection, stmt: sa.Update, what: str, params: Mapping[str, Any] | None = None
) -> None:
    """Run a fenced UPDATE; it must match exactly one row, or the writer is fenced out."""
    if conn.execute(stmt, params).rowcount != 1:
        raise FencedOut(what)
