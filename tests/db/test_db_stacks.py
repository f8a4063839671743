"""kiln.db.stacks: unique live names, lookups, listing and paging, CAS updates."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from dbhelpers import make_stack, make_traversal, new_id
from sqlalchemy.engine import Engine

from kiln.core.errors import NotSupported
from kiln.db.engine import read, write
from kiln.db.errors import ConcurrentUpdate, NotFound, StackExists
from kiln.db.stacks import (
    StackStatus,
    create_stack,
    get_stack,
    get_stack_by_name,
    list_children,
    list_stacks,
    set_template,
    soft_delete_stack,
    update_stack_status,
)
from kiln.db.templates import store_raw_template


def test_create_and_get(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        made = make_stack(conn, now, name="web")
    with read(db) as conn:
        got = get_stack(conn, made.id)
        by_name = get_stack_by_name(conn, "proj", "web")
    assert got == made == by_name
    assert got.root_id == got.id
    assert (got.action, got.status, got.version, got.deleted_at) == ("INIT", "COMPLETE", 1, None)
    assert got.created_at == got.updated_at == now


def test_name_is_unique_per_project_among_live_stacks(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        first = make_stack(conn, now, name="web")
        make_stack(conn, now, name="web", project_id="other")
    with (
        pytest.raises(StackExists, match=r"The Stack \(web\) already exists") as err,
        write(db) as conn,
    ):
        make_stack(conn, now, name="web")
    assert err.value.http_status == 409
    with write(db) as conn:
        soft_delete_stack(conn, first.id, now=now)
    with write(db) as conn:
        again = make_stack(conn, now, name="web")
    with read(db) as conn:
        assert get_stack_by_name(conn, "proj", "web").id == again.id
        assert get_stack(conn, first.id).deleted_at == now
        with pytest.raises(NotFound):
            get_stack(conn, first.id, show_deleted=False)


def test_names_compare_case_sensitively(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        make_stack(conn, now, name="web")
        make_stack(conn, now, name="WEB")
    with read(db) as conn:
        assert get_stack_by_name(conn, "proj", "WEB").name == "WEB"


def test_concurrent_creates_of_one_name_let_exactly_one_win(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        tid = store_raw_template(conn, {"heat_template_version": "2018-08-31"}, now=now)
    for round_ in range(4):
        name = f"race-{round_}"
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def create(
            name: str = name, barrier: threading.Barrier = barrier, outcomes: list[str] = outcomes
        ) -> None:
            barrier.wait()
            try:
                with write(db) as conn:
                    create_stack(
                        conn,
                        stack_id=new_id(),
                        name=name,
                        project_id="proj",
                        user_id="u",
                        raw_template_id=tid,
                        now=now,
                    )
                outcomes.append("created")
            except StackExists:
                outcomes.append("exists")

        threads = [threading.Thread(target=create) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["created", "exists"]
        with read(db) as conn:
            assert list_stacks(conn, "proj", filters={"name": name}) != []


def test_get_missing(db: Engine) -> None:
    with read(db) as conn:
        with pytest.raises(NotFound, match=r"The Stack \(nope\) could not be found") as err:
            get_stack(conn, "nope")
        assert err.value.kind == "EntityNotFound" and err.value.http_status == 404
        with pytest.raises(NotFound):
            get_stack_by_name(conn, "proj", "nope")


def _make_many(db: Engine, now: datetime) -> list[str]:
    ids = []
    with write(db) as conn:
        for i, name in enumerate(["c", "a", "e", "b", "d"]):
            ids.append(make_stack(conn, now + timedelta(seconds=i), name=name).id)
        make_stack(conn, now, name="nested", owner_id=ids[0])
        make_stack(conn, now, name="elsewhere", project_id="other")
        gone = make_stack(conn, now, name="gone")
        soft_delete_stack(conn, gone.id, now=now)
    return ids


def test_list_defaults_newest_first_live_top_level(db: Engine, now: datetime) -> None:
    _make_many(db, now)
    with read(db) as conn:
        names = [s.name for s in list_stacks(conn, "proj")]
        with_nested = {s.name for s in list_stacks(conn, "proj", show_nested=True)}
        with_deleted = {s.name for s in list_stacks(conn, "proj", show_deleted=True)}
        everywhere = {s.name for s in list_stacks(conn, None)}
    assert names == ["d", "b", "e", "a", "c"]
    assert with_nested == {"a", "b", "c", "d", "e", "nested"}
    assert with_deleted == {"a", "b", "c", "d", "e", "gone"}
    assert everywhere == {"a", "b", "c", "d", "e", "elsewhere"}


@pytest.mark.parametrize(
    ("sort_keys", "sort_dir", "expected"),
    [
        (("name",), "asc", ["a", "b", "c", "d", "e"]),
        (("name",), "desc", ["e", "d", "c", "b", "a"]),
        (("created_at",), "asc", ["c", "a", "e", "b", "d"]),
        (("status", "name"), "asc", ["a", "b", "c", "d", "e"]),
    ],
)
def test_list_pages_with_markers(
    db: Engine, now: datetime, sort_keys: tuple[str, ...], sort_dir: str, expected: list[str]
) -> None:
    _make_many(db, now)
    seen: list[str] = []
    marker = None
    with read(db) as conn:
        while True:
            page = list_stacks(
                conn, "proj", sort_keys=sort_keys, sort_dir=sort_dir, limit=2, marker=marker
            )
            if not page:
                break
            assert len(page) <= 2
            seen += [s.name for s in page]
            marker = page[-1].id
    assert seen == expected


def test_list_filters(db: Engine, now: datetime) -> None:
    ids = _make_many(db, now)
    with read(db) as conn:
        assert [s.name for s in list_stacks(conn, "proj", filters={"name": "a"})] == ["a"]
        both = list_stacks(
            conn, "proj", filters={"name": ["a", "b"]}, sort_keys=("name",), sort_dir="asc"
        )
        assert [s.name for s in both] == ["a", "b"]
        assert [s.name for s in list_stacks(conn, "proj", filters={"id": ids[2]})] == ["e"]
        assert list_stacks(conn, "proj", filters={"status": "FAILED"}) == []
        with pytest.raises(NotSupported, match="Filter key 'colour'"):
            list_stacks(conn, "proj", filters={"colour": "red"})
        with pytest.raises(NotSupported, match="Sort key 'owner_id'"):
            list_stacks(conn, "proj", sort_keys=("owner_id",))
        with pytest.raises(NotSupported, match="Sort direction 'up'"):
            list_stacks(conn, "proj", sort_dir="up")
        with pytest.raises(NotFound):
            list_stacks(conn, "proj", marker="missing")


def test_children(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        parent = make_stack(conn, now)
        kid1 = make_stack(conn, now, owner_id=parent.id)
        kid2 = make_stack(conn, now + timedelta(seconds=1), owner_id=parent.id)
        make_stack(conn, now)
        soft_delete_stack(conn, kid2.id, now=now)
    with read(db) as conn:
        assert [s.id for s in list_children(conn, parent.id)] == [kid1.id]
        assert [s.id for s in list_children(conn, parent.id, show_deleted=True)] == [
            kid1.id,
            kid2.id,
        ]


def test_status_is_written_only_by_the_current_traversal(db: Engine, now: datetime) -> None:
    stack, traversal_id = make_traversal(db, now, ["a"])
    later = now + timedelta(minutes=1)
    with write(db) as conn:
        assert not update_stack_status(
            conn, stack.id, traversal_id="stale", outcome=StackStatus("CREATE", "FAILED"), now=later
        )
        assert update_stack_status(
            conn,
            stack.id,
            traversal_id=traversal_id,
            outcome=StackStatus("CREATE", "COMPLETE", "done"),
            now=later,
        )
    with read(db) as conn:
        got = get_stack(conn, stack.id)
    assert (got.action, got.status, got.status_reason, got.updated_at) == (
        "CREATE",
        "COMPLETE",
        "done",
        later,
    )


def test_set_template_is_a_cas_on_version(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
        new_tid = store_raw_template(conn, {"heat_template_version": "2016-10-14"}, now=now)
        version = set_template(
            conn,
            stack.id,
            raw_template_id=new_tid,
            prev_raw_template_id=stack.raw_template_id,
            now=now,
            expected_version=stack.version,
            parameters={"p": 1},
            timeout_mins=None,
        )
    assert version == stack.version + 1
    with read(db) as conn:
        got = get_stack(conn, stack.id)
    assert (got.raw_template_id, got.prev_raw_template_id) == (new_tid, stack.raw_template_id)
    assert (got.parameters, got.tags, got.version) == ({"p": 1}, [], version)
    with pytest.raises(ConcurrentUpdate), write(db) as conn:
        set_template(
            conn,
            stack.id,
            raw_template_id=new_tid,
            prev_raw_template_id=None,
            now=now,
            expected_version=stack.version,
        )
    with pytest.raises(NotFound), write(db) as conn:
        set_template(
            conn,
            "missing",
            raw_template_id=new_tid,
            prev_raw_template_id=None,
            now=now,
            expected_version=1,
        )


def test_soft_delete_twice_is_not_found(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
        soft_delete_stack(conn, stack.id, now=now)
    with pytest.raises(NotFound), write(db) as conn:
        soft_delete_stack(conn, stack.id, now=now)
