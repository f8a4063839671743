"""kiln.db.events: pages sorted by resource type first, and markers looked up per stack."""

from __future__ import annotations

from datetime import datetime

import pytest
from dbhelpers import make_stack, new_id
from sqlalchemy.engine import Engine

from kiln.core.errors import NotSupported
from kiln.db.engine import read, write
from kiln.db.events import NewEvent, add_events, find_event, list_events

TYPES = ["T::B", "T::A", "T::C", "T::A", "T::B", "T::A"]


def _fill(db: Engine, now: datetime) -> tuple[str, str, list[str]]:
    with write(db) as conn:
        stack = make_stack(conn, now)
        other = make_stack(conn, now)
        new = [
            NewEvent(new_id(), stack.id, f"r{i}", t, "CREATE", "COMPLETE")
            for i, t in enumerate(TYPES)
        ]
        add_events(conn, new, now=now)
        add_events(conn, [NewEvent(new_id(), other.id, "x", "T::A", "CREATE", "COMPLETE")], now=now)
    return stack.id, other.id, [n.uuid for n in new]


@pytest.mark.parametrize("sort_dir", ["asc", "desc"])
def test_resource_type_order_pages_by_marker(db: Engine, now: datetime, sort_dir: str) -> None:
    stack_id, _, uuids = _fill(db, now)
    order = sorted(range(len(TYPES)), key=lambda i: (TYPES[i], i), reverse=sort_dir == "desc")
    expected = [uuids[i] for i in order]
    seen: list[str] = []
    marker = None
    with read(db) as conn:
        while True:
            page = list_events(
                conn,
                stack_id,
                limit=4,
                marker=marker,
                sort_dir=sort_dir,
                sort_keys=["resource_type"],
            )
            if not page:
                break
            seen += [e.uuid for e in page]
            marker = page[-1].uuid
        with pytest.raises(NotSupported, match="Sort key 'status'"):
            list_events(conn, stack_id, sort_keys=["status"])
    assert seen == expected


def test_find_event_only_in_the_given_stacks(db: Engine, now: datetime) -> None:
    stack_id, other_id, uuids = _fill(db, now)
    with read(db) as conn:
        found = find_event(conn, uuids[2], [stack_id])
        assert found is not None and found.resource_type == "T::C"
        assert find_event(conn, uuids[2], [other_id]) is None
        assert find_event(conn, uuids[2], [other_id, stack_id]) is not None
        assert find_event(conn, "missing", [stack_id]) is None
        assert find_event(conn, uuids[2], []) is None
