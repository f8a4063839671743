"""The identity tables' database: short transactions, lock retries, keys, times.

The embedded default is a SQLite file shared with the rest of Kiln, so a transaction that
meets another writer ("database is locked") is retried with a small backoff instead of
failing the request. Unique-key violations become 409 Conflict, values the database
refuses become 400.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

import sqlalchemy as sa
from cryptography.fernet import Fernet
from sqlalchemy.engine import Connection, Engine

from kiln.cloud.sandbox.identity import tables as t
from kiln.cloud.sandbox.identity.errors import Conflict, ValidationError

T = TypeVar("T")

_LOCKED_MESSAGES = ("database is locked", "database table is locked", "database is busy")


def new_id() -> str:
    """Keystone's id format: 32 lowercase hex digits."""
    return uuid.uuid4().hex


def to_db_time(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(tzinfo=None)


def from_db_time(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def system_now() -> datetime:
    return datetime.now(UTC)


class Database:
    """Transactions over the ``keystone_*`` tables (created here), and the service's keys."""

    def __init__(
        self,
        engine: Engine,
        *,
        now: Callable[[], datetime] = system_now,
        lock_retries: int = 30,
    ) -> None:
        self.engine = engine
        self.now = now
        self._lock_retries = lock_retries
        self._fernets: dict[str, Fernet] = {}
        self._change_listeners: list[Callable[[], None]] = []
        self._retry(lambda: t.metadata.create_all(engine))

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every committed write: a revocation, a role taken away,
        a user or trust deleted. ``kiln all`` flushes its token-validation cache with it,
        so such a change reaches the API at once instead of after the cache time."""
        self._change_listeners.append(listener)

    # -- transactions ---------------------------------------------------------------------

    def _retry(self, fn: Callable[[], T]) -> T:
        for attempt in range(self._lock_retries):
            try:
                return fn()
            except sa.exc.OperationalError as exc:
                if not any(m in str(exc.orig) for m in _LOCKED_MESSAGES):
                    raise
                if attempt == self._lock_retries - 1:
                    raise
                time.sleep(min(0.02 * (attempt + 1), 0.5))
        raise AssertionError("unreachable")

    def read(self, fn: Callable[[Connection], T]) -> T:
        def run() -> T:
            with self.engine.connect() as conn:
                return fn(conn)

        try:
            return self._retry(run)
        except sa.exc.DataError as exc:
            raise ValidationError("A value in the request is invalid.") from exc

    def write(self, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in one transaction; a unique-key violation becomes 409 Conflict."""

        def run() -> T:
            with self.engine.begin() as conn:
                return fn(conn)

        try:
            result = self._retry(run)
            for listener in self._change_listeners:
                listener()
            return result
        except sa.exc.IntegrityError as exc:
            raise Conflict("Conflict occurred attempting to store the object: duplicate.") from exc
        except sa.exc.DataError as exc:
            # A value the database refuses (too long, a NUL byte): the input's fault.
            raise ValidationError("A value in the request is invalid or too long.") from exc

    # -- keys -------------------------------------------------------------------------------

    def fernet(self, purpose: str) -> Fernet:
        """The Fernet key for ``purpose`` ("token", "credential"), made on first use."""
        if purpose not in self._fernets:
            name = f"{purpose}_key"
            query = sa.select(t.settings.c.value).where(t.settings.c.name == name)
            key = self.read(lambda c: c.execute(query).scalar())
            if key is None:
                try:
                    candidate = Fernet.generate_key().decode()
                    self.write(
                        lambda c: c.execute(t.settings.insert().values(name=name, value=candidate))
                    )
                except Conflict:
                    pass  # another process made it first: use theirs
                key = self.read(lambda c: c.execute(query).scalar_one())
            self._fernets[purpose] = Fernet(key.encode())
        return self._fernets[purpose]
