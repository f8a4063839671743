"""kiln.db.resources: versioned rows, CAS updates, fenced ownership, resource_data."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from dbhelpers import make_stack, new_id
from sqlalchemy.engine import Engine

from kiln.db.engine import read, write
from kiln.db.errors import ConcurrentUpdate, FencedOut, NotFound
from kiln.db.resources import (
    NewResource,
    ResourceChange,
    ResourceDatum,
    claim_resource,
    create_resource,
    create_resources,
    delete_resource,
    delete_resource_data,
    get_resource,
    get_resource_data,
    get_resources,
    list_resources,
    set_resource_data,
    update_resource,
    write_owned_resource,
)
from kiln.db.stacks import Stack


def _new(stack: Stack, name: str = "server", **kw: object) -> NewResource:
    return NewResource(
        new_id(),
        stack.id,
        stack.root_id,
        name,
        "OS::Nova::Server",
        stack.raw_template_id,
        **kw,  # type: ignore[arg-type]
    )


def test_create_get_and_list(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        stack = make_stack(conn, now)
        made = create_resource(
            conn, _new(stack, requires=["x"], properties={"flavor": "m1"}), now=now
        )
        replacement = create_resource(
            conn, _new(stack, replaces=made.id), now=now + timedelta(seconds=1)
        )
        create_resources(conn, [_new(stack, "net"), _new(stack, "port")], now=now)
    with read(db) as conn:
        got = get_resource(conn, made.id)
        rows = list_resources(conn, stack.id)
        servers = list_resources(conn, stack.id, name="server")
        several = get_resources(conn, [made.id, replacement.id, "missing"])
        assert get_resources(conn, []) == {}
        with pytest.raises(NotFound, match=r"The Resource \(missing\)"):
            get_resource(conn, "missing")
    assert got == made
    assert (got.version, got.owner_traversal_id, got.owner_epoch, got.reference_id) == (
        1,
        None,
        0,
        None,
    )
    assert (got.requires, got.properties, got.attributes) == (["x"], {"flavor": "m1"}, {})
    assert [r.name for r in rows] == ["net", "port", "server", "server"]
    assert [r.id for r in servers] == [made.id, replacement.id]
    assert servers[1].replaces == made.id
    assert set(several) == {made.id, replacement.id}


def test_update_is_a_cas_on_version(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        res = create_resource(conn, _new(make_stack(conn, now)), now=now)
        version = update_resource(
            conn,
            res.id,
            ResourceChange(
                status="COMPLETE", reference_id=None, requires=("a", "b"), metadata={"m": 1}
            ),
            now=now,
            expected_version=res.version,
        )
        got = get_resource(conn, res.id)
    assert version == got.version == 2
    assert (got.status, got.requires, got.metadata, got.reference_id) == (
        "COMPLETE",
        ["a", "b"],
        {"m": 1},
        None,
    )
    with pytest.raises(ConcurrentUpdate), write(db) as conn:
        update_resource(conn, res.id, ResourceChange(status="FAILED"), now=now, expected_version=1)
    with pytest.raises(NotFound), write(db) as conn:
        update_resource(conn, "missing", ResourceChange(), now=now, expected_version=1)


def test_reference_id_holds_any_json_and_null(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        res = create_resource(conn, _new(make_stack(conn, now)), now=now)
        update_resource(
            conn, res.id, ResourceChange(reference_id={"a": [1]}), now=now, expected_version=1
        )
        assert get_resource(conn, res.id).reference_id == {"a": [1]}
        update_resource(
            conn, res.id, ResourceChange(reference_id="srv-1"), now=now, expected_version=2
        )
        assert get_resource(conn, res.id).reference_id == "srv-1"


def test_ownership_claim_and_fenced_writes(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        res = create_resource(conn, _new(make_stack(conn, now)), now=now)
        assert claim_resource(conn, res.id, traversal_id="t1", epoch=3, expected_version=1, now=now)
        assert not claim_resource(
            conn, res.id, traversal_id="t2", epoch=1, expected_version=1, now=now
        )
        write_owned_resource(
            conn, res.id, ResourceChange(physical_id="p1"), traversal_id="t1", epoch=3, now=now
        )
        got = get_resource(conn, res.id)
    assert (got.owner_traversal_id, got.owner_epoch, got.physical_id, got.version) == (
        "t1",
        3,
        "p1",
        3,
    )
    for traversal_id, epoch in (("t1", 2), ("t2", 3)):
        with pytest.raises(FencedOut), write(db) as conn:
            write_owned_resource(
                conn,
                res.id,
                ResourceChange(status="X"),
                traversal_id=traversal_id,
                epoch=epoch,
                now=now,
            )
    with write(db) as conn:
        write_owned_resource(
            conn,
            res.id,
            ResourceChange(status="COMPLETE"),
            traversal_id="t1",
            epoch=3,
            now=now,
            release=True,
        )
        got = get_resource(conn, res.id)
    assert (got.owner_traversal_id, got.status) == (None, "COMPLETE")


def test_resource_data_set_get_delete_and_cascade(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        res = create_resource(conn, _new(make_stack(conn, now)), now=now)
        set_resource_data(conn, res.id, "password", "s3cret", redact=True)
        set_resource_data(conn, res.id, "token", "t1")
        set_resource_data(conn, res.id, "token", "t2")  # replaces
        data = get_resource_data(conn, res.id)
    assert data == {
        "password": ResourceDatum("password", "s3cret", True),
        "token": ResourceDatum("token", "t2", False),
    }
    with write(db) as conn:
        assert delete_resource_data(conn, res.id, "token")
        assert not delete_resource_data(conn, res.id, "token")
        assert set(get_resource_data(conn, res.id)) == {"password"}
        assert delete_resource(conn, res.id)
        assert not delete_resource(conn, res.id)
        assert get_resource_data(conn, res.id) == {}  # cascaded


def test_release_resource_lets_go_whatever_the_epoch(db: Engine, now: datetime) -> None:
    from kiln.db.resources import release_resource

    with write(db) as conn:
        stack = make_stack(conn, now)
        row = create_resource(conn, _new(stack), now=now)
        assert claim_resource(conn, row.id, traversal_id="t1", epoch=3, expected_version=1, now=now)
        assert not release_resource(conn, row.id, traversal_id="t2", now=now)
        assert release_resource(conn, row.id, traversal_id="t1", now=now)
        got = get_resource(conn, row.id)
    assert (got.owner_traversal_id, got.version) == (None, 3)
