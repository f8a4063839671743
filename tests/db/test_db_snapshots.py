"""kiln.db.snapshots: create, read, update, list and delete."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dbhelpers import make_stack, new_id
from sqlalchemy.engine import Engine

from kiln.db.engine import read, write
from kiln.db.errors import NotFound
from kiln.db.snapshots import (
    create_snapshot,
    delete_snapshot,
    get_snapshot,
    list_snapshots,
    update_snapshot,
)


def test_snapshot_lifecycle(db: Engine, now: datetime) -> None:
    later = now + timedelta(seconds=30)
    with write(db) as conn:
        stack = make_stack(conn, now)
        first = create_snapshot(conn, snapshot_id=new_id(), stack_id=stack.id, name="s1", now=now)
        second = create_snapshot(
            conn, snapshot_id=new_id(), stack_id=stack.id, name=None, now=later
        )
        update_snapshot(
            conn,
            first.id,
            now=later,
            status="COMPLETE",
            status_reason="done",
            data={"resources": {"a": 1}},
        )
    with read(db) as conn:
        got = get_snapshot(conn, first.id)
        listed = list_snapshots(conn, stack.id)
    assert (got.status, got.status_reason, got.data, got.updated_at) == (
        "COMPLETE",
        "done",
        {"resources": {"a": 1}},
        later,
    )
    assert (got.action, got.name, got.created_at) == ("CREATE", "s1", now)
    assert [s.id for s in listed] == [first.id, second.id]
    assert listed[1].data is None and listed[1].name is None
    with write(db) as conn:
        delete_snapshot(conn, first.id)
        with pytest.raises(NotFound):
            delete_snapshot(conn, first.id)
        with pytest.raises(NotFound):
            update_snapshot(conn, first.id, now=now, status="X")
        with pytest.raises(NotFound, match=r"The Snapshot"):
            get_snapshot(conn, first.id)
