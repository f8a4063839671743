"""The sandbox's objects: kept in memory, written through to a table, with timed transitions.

Every service keeps its objects here as the JSON documents its REST API shows, by kind
(``server``, ``port``, ...) and id. A *transition* is a change an object will undergo
after a delay (``BUILD`` -> ``ACTIVE``); transitions are applied lazily, when the object
(or its kind) is next read, so a delay of 0 means the very next read sees the final
state and no timer thread exists. A transition may name a *hook*, a function the owning
service registered, which runs when the transition is applied (a server that finished
deleting releases its ports). With an engine, every change is also written to the
``sandbox_objects`` table and loaded again at start, so the cloud outlives a restart.

All access happens under :attr:`DocumentStore.lock` (re-entrant): a service takes it
for the whole of one operation, so operations are atomic with respect to each other.
"""

from __future__ import annotations

import builtins
import json
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

Document = dict[str, Any]
Hook = Callable[[str, Document], None]

_metadata = sa.MetaData()
objects_table = sa.Table(
    "sandbox_objects",
    _metadata,
    sa.Column("kind", sa.String(64), primary_key=True),
    sa.Column("id", sa.String(255), primary_key=True),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("pending", sa.Text, nullable=False),
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Every change is one small commit: in WAL mode with NORMAL sync a commit does not
    # wait for the disk (a crash of the machine may lose the last changes, not corrupt).
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


@dataclass
class Transition:
    """``changes`` are applied to the object at ``at`` (seconds since the epoch)."""

    at: float
    changes: dict[str, Any]
    hook: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"at": self.at, "changes": self.changes, "hook": self.hook}


class DocumentStore:
    """Documents by kind and id, with lazily applied transitions."""

    def __init__(self, engine: Engine | None = None, *, now: Callable[[], float] = time.time):
        self.lock = threading.RLock()
        self.now = now
        self._objects: dict[str, dict[str, Document]] = defaultdict(dict)
        self._pending: dict[str, dict[str, list[Transition]]] = defaultdict(dict)
        self._hooks: dict[str, Hook] = {}
        self._engine = engine
        if engine is not None:
            if engine.dialect.name == "sqlite":
                sa.event.listen(engine, "connect", _sqlite_pragmas)
            _metadata.create_all(engine)
            self._load()

    # -- hooks ----------------------------------------------------------------------------
    def on(self, hook: str, function: Hook) -> None:
        """Run ``function(kind, document)`` when a transition naming ``hook`` is applied."""
        self._hooks[hook] = function

    # -- reads ----------------------------------------------------------------------------
    def get(self, kind: str, object_id: str) -> Document | None:
        """The live document (mutate it, then :meth:`put` it), or None."""
        with self.lock:
            self._settle(kind, object_id)
            return self._objects[kind].get(object_id)

    def list(self, kind: str) -> list[Document]:
        """Every document of ``kind``, in creation order."""
        with self.lock:
            for object_id in list(self._pending[kind]):
                self._settle(kind, object_id)
            return list(self._objects[kind].values())

    def find(self, kind: str, **equal: Any) -> builtins.list[Document]:
        """Documents whose top-level fields equal the given values."""
        return [d for d in self.list(kind) if all(d.get(k) == v for k, v in equal.items())]

    def exists(self, kind: str, object_id: str) -> bool:
        return self.get(kind, object_id) is not None

    # -- writes ---------------------------------------------------------------------------
    def put(self, kind: str, document: Document) -> Document:
        """Insert or replace ``document`` (it must have an ``id``) and persist it."""
        with self.lock:
            self._objects[kind][document["id"]] = document
            self._persist(kind, document["id"])
            return document

    def delete(self, kind: str, object_id: str) -> Document | None:
        """Remove the document and its pending transitions; returns it, or None."""
        with self.lock:
            document = self._objects[kind].pop(object_id, None)
            self._pending[kind].pop(object_id, None)
            if document is not None:
                self._persist(kind, object_id)
            return document

    def schedule(
        self,
        kind: str,
        object_id: str,
        delay: float | None,
        changes: dict[str, Any],
        hook: str | None = None,
    ) -> None:
        """Apply ``changes`` (then ``hook``) ``delay`` seconds after the previous transition.

        ``delay`` None or infinite: never (the object stays as it is: a frozen transition).
        """
        if delay is None or math.isinf(delay):
            return
        with self.lock:
            queue = self._pending[kind].setdefault(object_id, [])
            start = max([self.now(), *(t.at for t in queue)])
            queue.append(Transition(start + max(0.0, delay), dict(changes), hook))
            self._persist(kind, object_id)

    def cancel(self, kind: str, object_id: str) -> None:
        """Drop the object's pending transitions (a new action supersedes them)."""
        with self.lock:
            if self._pending[kind].pop(object_id, None) is not None:
                self._persist(kind, object_id)

    def pending(self, kind: str, object_id: str) -> bool:
        with self.lock:
            self._settle(kind, object_id)
            return bool(self._pending[kind].get(object_id))

    def clear(self) -> None:
        """Forget everything (the control endpoint's reset)."""
        with self.lock:
            self._objects.clear()
            self._pending.clear()
            if self._engine is not None:
                with self._engine.begin() as c:
                    c.execute(objects_table.delete())

    def kinds(self) -> Iterable[str]:
        return list(self._objects)

    # -- internals ------------------------------------------------------------------------
    def _settle(self, kind: str, object_id: str) -> None:
        queue = self._pending[kind].get(object_id)
        if not queue:
            return
        now = self.now()
        changed = False
        while queue and queue[0].at <= now:
            transition = queue.pop(0)
            document = self._objects[kind].get(object_id)
            if document is None:
                break
            document.update(transition.changes)
            changed = True
            if transition.hook is not None:
                self._hooks[transition.hook](kind, document)
        if not self._pending[kind].get(object_id):
            self._pending[kind].pop(object_id, None)
        if changed:
            self._persist(kind, object_id)

    def _persist(self, kind: str, object_id: str) -> None:
        if self._engine is None:
            return
        document = self._objects[kind].get(object_id)
        with self._engine.begin() as c:
            c.execute(
                objects_table.delete().where(
                    objects_table.c.kind == kind, objects_table.c.id == object_id
                )
            )
            if document is not None:
                queue = self._pending[kind].get(object_id, [])
                c.execute(
                    objects_table.insert().values(
                        kind=kind,
                        id=object_id,
                        body=json.dumps(document),
                        pending=json.dumps([t.as_json() for t in queue]),
                    )
                )

    def _load(self) -> None:
        assert self._engine is not None
        with self._engine.connect() as c:
            for row in c.execute(sa.select(objects_table)):
                self._objects[row.kind][row.id] = json.loads(row.body)
                queue = [Transition(**t) for t in json.loads(row.pending)]
                if queue:
                    self._pending[row.kind][row.id] = queue
