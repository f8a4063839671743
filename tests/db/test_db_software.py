"""kiln.db.software: configs and deployments, their visibility and paging."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from dbhelpers import new_id
from sqlalchemy.engine import Engine

from kiln.db import software as swdb
from kiln.db.engine import read, write
from kiln.db.errors import NotFound


def _config(conn: Any, now: datetime, *, project: str = "p1", name: str = "c", **kw: Any) -> Any:
    fields: dict[str, Any] = {
        "group": "script",
        "config": "#!/bin/sh\necho hi\n",
        "inputs": [{"name": "port", "type": "Number", "default": 80}],
        "outputs": [{"name": "result", "type": "String", "error_output": False}],
        "options": {},
    }
    fields.update(kw)
    return swdb.create_config(
        conn, config_id=new_id(), project_id=project, name=name, now=now, **fields
    )


def _deployment(
    conn: Any, now: datetime, config_id: str, *, project: str = "p1", server: str = "srv", **kw: Any
) -> Any:
    fields: dict[str, Any] = {
        "input_values": {"port": 8080},
        "action": "CREATE",
        "status": "IN_PROGRESS",
        "status_reason": "",
        "stack_user_project_id": None,
    }
    fields.update(kw)
    return swdb.create_deployment(
        conn,
        deployment_id=new_id(),
        project_id=project,
        config_id=config_id,
        server_id=server,
        now=now,
        **fields,
    )


def test_config_round_trip_keeps_structures_and_text(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        text = _config(conn, now, name="text")
        structured = _config(conn, now, name="map", config={"a": [1, {"b": None}]}, group=None)
    with read(db) as conn:
        got = swdb.get_config(conn, text.id)
        got_map = swdb.get_config(conn, structured.id)
    assert got == text
    assert got.config == "#!/bin/sh\necho hi\n" and got.inputs[0]["default"] == 80
    assert got_map.config == {"a": [1, {"b": None}]} and got_map.group is None
    assert got.created_at == now


def test_configs_list_newest_first_with_marker_and_projects(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        made = [_config(conn, now + timedelta(seconds=i), name=f"c{i}") for i in range(4)]
        other = _config(conn, now, project="p2")
    with read(db) as conn:
        page = swdb.list_configs(conn, "p1", limit=2)
        rest = swdb.list_configs(conn, "p1", marker=page[-1].id)
        unknown_marker = swdb.list_configs(conn, "p1", marker=new_id())
        everyone = swdb.list_configs(conn, None)
        counted = swdb.count_configs(conn, "p1")
    assert [c.name for c in page] == ["c3", "c2"]
    assert [c.name for c in rest] == ["c1", "c0"]
    assert len(unknown_marker) == 4
    assert {c.id for c in everyone} == {c.id for c in made} | {other.id}
    assert counted == 4


def test_config_in_use_cannot_be_deleted_until_its_deployments_go(
    db: Engine, now: datetime
) -> None:
    with write(db) as conn:
        config = _config(conn, now)
        deployment = _deployment(conn, now, config.id)
    with read(db) as conn:
        assert swdb.config_in_use(conn, config.id)
    with pytest.raises(sa.exc.IntegrityError), write(db) as conn:
        swdb.delete_config(conn, config.id)
    with write(db) as conn:
        swdb.delete_deployment(conn, deployment.id)
        assert not swdb.config_in_use(conn, config.id)
        swdb.delete_config(conn, config.id)
        with pytest.raises(NotFound, match="Software config"):
            swdb.delete_config(conn, config.id)
        with pytest.raises(NotFound):
            swdb.delete_deployment(conn, deployment.id)


def test_deployment_update_sets_updated_at_and_keeps_the_rest(db: Engine, now: datetime) -> None:
    later = now + timedelta(minutes=1)
    with write(db) as conn:
        config = _config(conn, now)
        second = _config(conn, now, name="second")
        made = _deployment(conn, now, config.id)
        assert made.updated_at is None and made.output_values is None
        changed = swdb.update_deployment(
            conn,
            made.id,
            now=later,
            config_id=second.id,
            output_values={"deploy_status_code": 0},
            status="COMPLETE",
        )
        with pytest.raises(NotFound):
            swdb.update_deployment(conn, new_id(), now=later, status="X")
    assert (changed.config_id, changed.status, changed.action) == (second.id, "COMPLETE", "CREATE")
    assert changed.output_values == {"deploy_status_code": 0}
    assert changed.input_values == {"port": 8080}
    assert (changed.created_at, changed.updated_at) == (now, later)


def test_deployments_visible_to_owner_and_stack_user_project(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        config = _config(conn, now)
        own = _deployment(conn, now, config.id, server="s1")
        for_agent = _deployment(
            conn, now + timedelta(seconds=1), config.id, server="s2", stack_user_project_id="su"
        )
        _deployment(conn, now, config.id, project="p2")
    with read(db) as conn:
        mine = swdb.list_deployments(conn, "p1")
        on_s2 = swdb.list_deployments(conn, "p1", server_id="s2")
        agent = swdb.list_deployments(conn, "su")
        counted = swdb.count_deployments(conn, "p1")
    assert [d.id for d in mine] == [own.id, for_agent.id]
    assert [d.id for d in on_s2] == [for_agent.id]
    assert [d.id for d in agent] == [for_agent.id]
    assert counted == 2


def test_server_configs_sorted_by_config_name(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        b = _config(conn, now, name="b-second")
        a = _config(conn, now, name="a-first")
        _deployment(conn, now, b.id, server="srv")
        _deployment(conn, now + timedelta(seconds=1), a.id, server="srv")
        _deployment(conn, now, a.id, server="elsewhere")
    with read(db) as conn:
        found = swdb.server_configs(conn, "p1", "srv")
        hidden = swdb.server_configs(conn, "p2", "srv")
    assert [c.name for c in found] == ["a-first", "b-second"]
    assert hidden == []


def test_stored_configs_lookup_for_plugins(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        config = _config(conn, now, name="part")
    store = swdb.StoredConfigs(db)
    found = store.get(config.id)
    assert found is not None and found["config"] == "#!/bin/sh\necho hi\n"
    assert set(found) == {"id", "name", "group", "config", "options", "inputs", "outputs"}
    assert store.get(new_id()) is None
    assert store.for_project("p1").get(config.id) is not None
    assert store.for_project("p2").get(config.id) is None
