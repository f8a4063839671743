"""Portable column types: UTC timestamps with microseconds, JSON that stores SQL NULL.

Times are stored as naive UTC ``DATETIME`` (``DATETIME(6)`` on MariaDB, which
otherwise drops the microseconds that order leases and events). Callers hand in
aware datetimes (any zone, converted) or naive ones (taken as UTC) and always get
aware UTC datetimes back, so that comparisons with the engine's clock never mix
the two kinds. Imports: stdlib and SQLAlchemy only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect


def datetime_type() -> sa.types.TypeEngine[datetime]:
    """The storage type of every timestamp (also used by the migrations)."""
    return sa.DateTime(timezone=False).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def to_utc_naive(value: datetime) -> datetime:
    """``value`` as a naive UTC datetime (naive input is taken as UTC already)."""
    if value.tzinfo is None:
        return value
    return value.astimezone(UTC).replace(tzinfo=None)


def as_utc(value: datetime) -> datetime:
    """``value`` as an aware UTC datetime (naive input is taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A naive-UTC column that accepts and returns aware datetimes."""

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(sa.DateTime(timezone=False))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else to_utc_naive(value)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


def json_type(*, nullable: bool = False) -> sa.JSON:
    """JSON; in a nullable column Python ``None`` is SQL NULL rather than JSON ``null``."""
    return sa.JSON(none_as_null=nullable)
