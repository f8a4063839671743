"""Counting the SQL statements an engine executes (the benchmark's "statements per resource").

``count_statements(engine)`` listens to ``before_cursor_execute`` while the
block runs: every statement sent through SQLAlchemy counts once (an
executemany is one statement), from any thread using that engine. Transaction
control that Kiln's SQLite set-up sends to the driver itself (``BEGIN``) is not
counted, so the three dialects count alike. Imports: stdlib and SQLAlchemy only.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


@dataclass
class StatementCounter:
    """The statements seen so far: how many, and their SQL text in order."""

    statements: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def count(self) -> int:
        return len(self.statements)

    def by_verb(self) -> Counter[str]:
        """How many statements start with each SQL verb (SELECT, INSERT, UPDATE, ...)."""
        return Counter(s.lstrip().split(None, 1)[0].upper() for s in self.statements if s.strip())

    @property
    def writes(self) -> int:
        """Statements that change rows (INSERT, UPDATE, DELETE)."""
        verbs = self.by_verb()
        return verbs["INSERT"] + verbs["UPDATE"] + verbs["DELETE"]

    def reset(self) -> None:
        with self._lock:
            self.statements.clear()

    def _record(self, statement: str) -> None:
        with self._lock:
            self.statements.append(statement)


@contextmanager
def count_statements(engine: Engine) -> Iterator[StatementCounter]:
    """Count the statements ``engine`` executes while the block runs."""
    counter = StatementCounter()

    def _listener(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        counter._record(statement)

    event.listen(engine, "before_cursor_execute", _listener)
    try:
        yield counter
    finally:
        event.remove(engine, "before_cursor_execute", _listener)
