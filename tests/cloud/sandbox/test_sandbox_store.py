"""DocumentStore: documents by kind, lazily applied transitions, hooks, persistence."""

from __future__ import annotations

import sqlalchemy as sa

from kiln.cloud.sandbox.store import DocumentStore


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_zero_delay_transition_shows_on_the_next_read() -> None:
    store = DocumentStore()
    store.put("server", {"id": "s1", "status": "BUILD"})
    store.schedule("server", "s1", 0, {"status": "ACTIVE"})
    assert store.get("server", "s1") == {"id": "s1", "status": "ACTIVE"}


def test_transitions_wait_their_delay_and_chain_in_order() -> None:
    clock = Clock()
    store = DocumentStore(now=clock)
    store.put("server", {"id": "s1", "status": "BUILD"})
    store.schedule("server", "s1", 2, {"status": "RESIZE"})
    store.schedule("server", "s1", 3, {"status": "VERIFY_RESIZE"})
    assert store.get("server", "s1")["status"] == "BUILD"
    clock.t += 2
    assert store.get("server", "s1")["status"] == "RESIZE"
    assert store.pending("server", "s1")
    clock.t += 3
    assert [d["status"] for d in store.list("server")] == ["VERIFY_RESIZE"]
    assert not store.pending("server", "s1")


def test_a_frozen_transition_never_happens() -> None:
    store = DocumentStore()
    store.put("volume", {"id": "v1", "status": "creating"})
    store.schedule("volume", "v1", float("inf"), {"status": "available"})
    assert store.get("volume", "v1")["status"] == "creating"
    assert not store.pending("volume", "v1")


def test_a_hook_runs_when_its_transition_is_applied() -> None:
    store = DocumentStore()
    seen: list[str] = []

    def gone(kind: str, document: dict[str, object]) -> None:
        seen.append(str(document["id"]))
        store.delete(kind, str(document["id"]))

    store.on("server.deleted", gone)
    store.put("server", {"id": "s1", "status": "ACTIVE"})
    store.schedule("server", "s1", 0, {"task_state": None}, hook="server.deleted")
    assert store.get("server", "s1") is None
    assert seen == ["s1"]


def test_find_filters_on_top_level_fields() -> None:
    store = DocumentStore()
    store.put("port", {"id": "p1", "device_id": "s1"})
    store.put("port", {"id": "p2", "device_id": "s2"})
    assert [p["id"] for p in store.find("port", device_id="s2")] == ["p2"]


def test_documents_and_pending_transitions_survive_a_restart(tmp_path: object) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path}/cloud.db")
    clock = Clock()
    store = DocumentStore(engine, now=clock)
    store.put("server", {"id": "s1", "status": "BUILD"})
    store.schedule("server", "s1", 5, {"status": "ACTIVE"})
    store.put("server", {"id": "s2", "status": "ACTIVE"})
    store.delete("server", "s2")

    again = DocumentStore(engine, now=clock)
    assert again.get("server", "s1") == {"id": "s1", "status": "BUILD"}
    assert again.get("server", "s2") is None
    clock.t += 5
    assert again.get("server", "s1")["status"] == "ACTIVE"
    again.clear()
    assert DocumentStore(engine, now=clock).list("server") == []
