"""kiln.db.purge: old soft-deleted stacks go with all their rows; nothing live is touched."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from dbhelpers import new_id
from sqlalchemy.engine import Connection, Engine

from kiln.db import tables
from kiln.db.engine import read, write
from kiln.db.events import NewEvent, add_event
from kiln.db.purge import NOT_OWNED, OWNED, purge_batch
from kiln.db.resources import NewResource, create_resource, set_resource_data
from kiln.db.snapshots import create_snapshot
from kiln.db.stacks import Stack, create_stack, get_stack, soft_delete_stack
from kiln.db.templates import store_raw_template
from kiln.db.traversals import NodeSpec, start_traversal

DAY = timedelta(days=1)
S = tables.stack
N = tables.node_task
ED = tables.traversal_edge


def _template(tag: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "description": tag, "resources": {}}


def make_full_stack(
    conn: Connection,
    now: datetime,
    *,
    project_id: str = "proj",
    owner: Stack | None = None,
    template: dict[str, Any] | None = None,
) -> Stack:
    """A stack with a resource (and its data), an event, a snapshot and a traversal."""
    tid = store_raw_template(conn, template or _template(uuid.uuid4().hex), now=now)
    stack = create_stack(
        conn,
        stack_id=new_id(),
        name=f"s-{uuid.uuid4().hex[:8]}",
        project_id=project_id,
        user_id="user",
        raw_template_id=tid,
        now=now,
        owner_id=owner.id if owner else None,
        root_id=owner.root_id if owner else None,
        parent_resource="child" if owner else None,
        nested_depth=owner.nested_depth + 1 if owner else 0,
    )
    resource_id = new_id()
    create_resource(
        conn,
        NewResource(resource_id, stack.id, stack.root_id, "r", "OS::Heat::None", tid),
        now=now,
    )
    set_resource_data(conn, resource_id, "k", "v")
    add_event(
        conn, NewEvent(new_id(), stack.id, "r", "OS::Heat::None", "CREATE", "COMPLETE"), now=now
    )
    create_snapshot(conn, snapshot_id=new_id(), stack_id=stack.id, name="snap", now=now)
    assert start_traversal(
        conn,
        traversal_id=new_id(),
        stack_id=stack.id,
        expected_current=None,
        action="CREATE",
        raw_template_id=tid,
        nodes=[NodeSpec("a", "a"), NodeSpec("b", "b")],
        edges=[("a", "b")],
        now=now,
    )
    return get_stack(conn, stack.id)


def rows_of(conn: Connection, stack: Stack) -> dict[str, int]:
    """How many rows of each table belong to the stack (and its template)."""
    traversals = sa.select(tables.traversal.c.id).where(tables.traversal.c.stack_id == stack.id)
    resources = sa.select(tables.resource.c.id).where(tables.resource.c.stack_id == stack.id)
    wheres = {
        "stack": S.c.id == stack.id,
        "resource": tables.resource.c.stack_id == stack.id,
        "resource_data": tables.resource_data.c.resource_id.in_(resources),
        "event": tables.event.c.stack_id == stack.id,
        "snapshot": tables.snapshot.c.stack_id == stack.id,
        "traversal": tables.traversal.c.stack_id == stack.id,
        "node_task": N.c.traversal_id.in_(traversals),
        "traversal_edge": ED.c.traversal_id.in_(traversals),
        "raw_template": tables.raw_template.c.id == stack.raw_template_id,
    }
    return {
        name: conn.execute(
            sa.select(sa.func.count()).select_from(tables.metadata.tables[name]).where(where)
        ).scalar_one()
        for name, where in wheres.items()
    }


FULL = {
    "stack": 1,
    "resource": 1,
    "resource_data": 1,
    "event": 1,
    "snapshot": 1,
    "traversal": 1,
    "node_task": 2,
    "traversal_edge": 1,
    "raw_template": 1,
}
GONE = dict.fromkeys(FULL, 0)


def _deleted(conn: Connection, stack: Stack, when: datetime) -> Stack:
    soft_delete_stack(conn, stack.id, now=when)
    return get_stack(conn, stack.id)


def _purge_all(db: Engine, before: datetime, *, limit: int = 20, **kw: Any) -> list[list[str]]:
    """Run batches until one purges nothing; returns each batch's purged ids."""
    batches: list[list[str]] = []
    kept: set[str] = set()
    while True:
        with write(db) as conn:
            batch = purge_batch(conn, deleted_before=before, limit=limit, skip=kept, **kw)
        if batch.empty:
            return batches
        kept.update(batch.kept_ids)
        if batch.stack_ids:
            batches.append(batch.stack_ids)


def test_old_deleted_stacks_go_with_all_their_rows(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        old = _deleted(conn, make_full_stack(conn, now - 200 * DAY), now - 100 * DAY)
        recent = _deleted(conn, make_full_stack(conn, now - 200 * DAY), now - 10 * DAY)
        live = make_full_stack(conn, now - 200 * DAY)
        batch = purge_batch(conn, deleted_before=now - 90 * DAY, limit=20)
    assert (batch.stack_ids, batch.raw_templates, batch.kept_ids) == ([old.id], 1, [])
    with read(db) as conn:
        assert rows_of(conn, old) == GONE
        assert rows_of(conn, recent) == FULL
        assert rows_of(conn, live) == FULL
    assert _purge_all(db, now - 90 * DAY) == []
    # AGE 0: every deleted stack, still never a live one
    assert _purge_all(db, now) == [[recent.id]]
    with read(db) as conn:
        assert rows_of(conn, live) == FULL


def test_project_filter(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        mine = _deleted(conn, make_full_stack(conn, now, project_id="p1"), now)
        theirs = _deleted(conn, make_full_stack(conn, now, project_id="p2"), now)
    assert _purge_all(db, now + DAY, project_id="p1") == [[mine.id]]
    with read(db) as conn:
        assert rows_of(conn, theirs) == FULL


def test_batches_take_the_oldest_first(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stacks = [
            _deleted(conn, make_full_stack(conn, now), now + i * timedelta(hours=1))
            for i in range(5)
        ]
    ids = [s.id for s in stacks]
    assert _purge_all(db, now + DAY, limit=2) == [sorted(ids[:2]), sorted(ids[2:4]), ids[4:]]


def test_nested_stacks_go_with_their_parent(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        parent = make_full_stack(conn, now)
        child = make_full_stack(conn, now, owner=parent)
        grandchild = make_full_stack(conn, now, owner=child)
        # the nested stacks were deleted recently, the parent long ago: all go together
        for s in (grandchild, child):
            _deleted(conn, s, now + 50 * DAY)
        _deleted(conn, parent, now)
    assert _purge_all(db, now + DAY) == [sorted([parent.id, child.id, grandchild.id])]
    with read(db) as conn:
        for s in (parent, child, grandchild):
            assert rows_of(conn, s) == GONE


def test_a_deleted_nested_stack_of_a_live_parent_goes_alone(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        parent = make_full_stack(conn, now)
        child = _deleted(conn, make_full_stack(conn, now, owner=parent), now)
    assert _purge_all(db, now + DAY) == [[child.id]]
    with read(db) as conn:
        assert rows_of(conn, parent) == FULL
        assert rows_of(conn, child) == GONE


def test_a_live_nested_stack_keeps_its_deleted_ancestors(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        parent = make_full_stack(conn, now)
        middle = make_full_stack(conn, now, owner=parent)
        live = make_full_stack(conn, now, owner=middle)
        gone = make_full_stack(conn, now, owner=parent)
        for s in (gone, middle, parent):
            _deleted(conn, s, now)
        batch = purge_batch(conn, deleted_before=now + DAY, limit=20)
    assert batch.stack_ids == [gone.id]
    assert sorted(batch.kept_ids) == sorted([parent.id, middle.id])
    assert _purge_all(db, now + DAY) == []
    with read(db) as conn:
        for s in (parent, middle, live):
            assert rows_of(conn, s) == FULL


def test_raw_templates_stay_while_anything_uses_them(db: Engine, now: datetime) -> None:
    shared = _template("shared")
    with write(db) as conn:
        old = _deleted(conn, make_full_stack(conn, now, template=shared), now)
        keeper = make_full_stack(conn, now, template=shared)
        # a template only a live stack's resource row (or previous template) refers to
        by_row = _deleted(conn, make_full_stack(conn, now, template=_template("row")), now)
        conn.execute(
            sa.update(tables.resource)
            .where(tables.resource.c.stack_id == keeper.id)
            .values(raw_template_id=by_row.raw_template_id)
        )
        by_prev = _deleted(conn, make_full_stack(conn, now, template=_template("prev")), now)
        conn.execute(
            sa.update(S)
            .where(S.c.id == keeper.id)
            .values(prev_raw_template_id=by_prev.raw_template_id)
        )
    with write(db) as conn:
        batch = purge_batch(conn, deleted_before=now + DAY, limit=20)
    assert batch.stack_ids == sorted([old.id, by_row.id, by_prev.id])
    assert batch.raw_templates == 0
    T = tables.raw_template
    with read(db) as conn:
        left = set(conn.execute(sa.select(T.c.id)).scalars())
    assert {old.raw_template_id, by_row.raw_template_id, by_prev.raw_template_id} <= left
    # once the last user goes, so does the template
    with write(db) as conn:
        _deleted(conn, keeper, now)
        assert purge_batch(conn, deleted_before=now + DAY, limit=20).raw_templates == 3
        assert conn.execute(sa.select(sa.func.count()).select_from(T)).scalar_one() == 0


def test_every_table_is_either_purged_with_its_stack_or_not_a_stacks() -> None:
    everything = set(tables.metadata.tables)
    assert everything == OWNED | NOT_OWNED
    assert not OWNED & NOT_OWNED
    links = {"stack_id", "traversal_id", "resource_id"}
    for name in NOT_OWNED - {"stack"}:
        assert not links & set(tables.metadata.tables[name].c.keys()), name


def test_a_batch_counts_a_stack_with_its_nested_stacks(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        parent = make_full_stack(conn, now)
        child = _deleted(conn, make_full_stack(conn, now, owner=parent), now + DAY)
        _deleted(conn, parent, now)
        other = _deleted(conn, make_full_stack(conn, now), now + DAY)
    assert _purge_all(db, now + 2 * DAY, limit=1) == [sorted([parent.id, child.id]), [other.id]]
