"""kiln.db.events: insertion order, marker paging both ways, filters, counting and pruning."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dbhelpers import make_stack, new_id
from sqlalchemy.engine import Engine

from kiln.core.errors import NotSupported
from kiln.db.engine import read, write
from kiln.db.errors import NotFound
from kiln.db.events import (
    NewEvent,
    add_event,
    add_events,
    count_events,
    get_event,
    list_events,
    prune_events,
)


def _fill(db: Engine, now: datetime) -> tuple[str, str, list[str]]:
    """Ten events on one stack (r0..r4, CREATE then COMPLETE each), two on another."""
    uuids: list[str] = []
    with write(db) as conn:
        stack = make_stack(conn, now)
        other = make_stack(conn, now)
        for i in range(5):
            for status in ("IN_PROGRESS", "COMPLETE"):
                new = NewEvent(new_id(), stack.id, f"r{i}", "OS::Test", "CREATE", status, "why")
                add_event(conn, new, now=now + timedelta(seconds=len(uuids)))
                uuids.append(new.uuid)
        add_events(
            conn,
            [
                NewEvent(new_id(), other.id, "x", "T", "DELETE", s)
                for s in ("IN_PROGRESS", "COMPLETE")
            ],
            now=now,
        )
    return stack.id, other.id, uuids


def test_add_and_get(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
        new = NewEvent(
            new_id(),
            stack.id,
            "web",
            "OS::Nova::Server",
            "CREATE",
            "COMPLETE",
            "ok",
            "p-1",
            {"a": 1},
        )
        first = add_event(conn, new, now=now)
        second = add_event(conn, new.__class__(new_id(), stack.id, "web", "T", "A", "S"), now=now)
        got = get_event(conn, new.uuid)
    assert second > first
    assert (got.id, got.resource_name, got.physical_resource_id, got.resource_properties) == (
        first,
        "web",
        "p-1",
        {"a": 1},
    )
    assert got.created_at == now and got.status_reason == "ok"
    with read(db) as conn, pytest.raises(NotFound, match=r"The Event \(nope\)"):
        get_event(conn, "nope")


@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
def test_marker_paging_both_directions(db: Engine, now: datetime, sort_dir: str) -> None:
    stack_id, _, uuids = _fill(db, now)
    expected = uuids if sort_dir == "asc" else uuids[::-1]
    seen: list[str] = []
    marker = None
    with read(db) as conn:
        while True:
            page = list_events(conn, stack_id, limit=3, marker=marker, sort_dir=sort_dir)
            if not page:
                break
            seen += [e.uuid for e in page]
            marker = page[-1].uuid
        # A marker in the middle, either way.
        after = list_events(conn, stack_id, marker=uuids[4], sort_dir=sort_dir, limit=2)
    assert seen == expected
    if sort_dir == "asc":
        assert [e.uuid for e in after] == uuids[5:7]
    else:
        assert [e.uuid for e in after] == [uuids[3], uuids[2]]


def test_filters_and_several_stacks(db: Engine, now: datetime) -> None:
    stack_id, other_id, uuids = _fill(db, now)
    with read(db) as conn:
        r1 = list_events(conn, stack_id, filters={"resource_name": "r1"})
        done = list_events(
            conn, stack_id, filters={"status": "COMPLETE", "resource_name": ["r0", "r4"]}
        )
        both = list_events(conn, [stack_id, other_id])
        with pytest.raises(NotSupported, match="Filter key 'colour'"):
            list_events(conn, stack_id, filters={"colour": 1})
        with pytest.raises(NotSupported, match="Sort direction"):
            list_events(conn, stack_id, sort_dir="sideways")
        with pytest.raises(NotFound):
            list_events(conn, stack_id, marker="missing")
    assert [e.uuid for e in r1] == uuids[2:4]
    assert [e.uuid for e in done] == [uuids[1], uuids[9]]
    assert len(both) == 12


def test_count_and_prune_keep_the_newest(db: Engine, now: datetime) -> None:
    stack_id, other_id, uuids = _fill(db, now)
    with write(db) as conn:
        assert count_events(conn, stack_id) == 10
        assert prune_events(conn, stack_id, keep=4) == 6
        assert [e.uuid for e in list_events(conn, stack_id)] == uuids[6:]
        assert prune_events(conn, stack_id, keep=4) == 0
        assert prune_events(conn, stack_id, keep=0) == 4
        assert count_events(conn, stack_id) == 0
        assert prune_events(conn, stack_id, keep=3) == 0
        assert count_events(conn, other_id) == 2
