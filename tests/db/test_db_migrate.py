"""kiln.db.migrate and kiln.db.tables: the migrated schema is exactly the metadata."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.engine import create_engine, read, write
from kiln.db.migrate import alembic_config, current_revision, head_revision, upgrade

SPEC_TABLES = {
    "raw_template",
    "stack",
    "traversal",
    "node_task",
    "traversal_edge",
    "resource",
    "resource_data",
    "event",
    "engine",
    "snapshot",
    "software_config",
    "software_deployment",
}


def _diff(engine: Engine, metadata: sa.MetaData) -> list[Any]:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(ctx, metadata))


def test_metadata_has_exactly_the_spec_tables() -> None:
    assert set(tables.metadata.tables) == SPEC_TABLES


def test_migrated_schema_matches_metadata(db: Engine) -> None:
    assert _diff(db, tables.metadata) == []
    with read(db) as conn:
        names = set(sa.inspect(conn).get_table_names())
    assert names == SPEC_TABLES | {"alembic_version"}


def test_comparison_notices_a_difference(db: Engine) -> None:
    # The check above would be worthless if compare_metadata saw nothing.
    other = sa.MetaData()
    for table in tables.metadata.sorted_tables:
        table.to_metadata(other)
    other.tables["stack"].c.name.type = sa.String(200)
    sa.Index("ix_extra", other.tables["event"].c.uuid, other.tables["event"].c.stack_id)
    kinds = {d[0] if isinstance(d, tuple) else d[0][0] for d in _diff(db, other)}
    assert kinds == {"modify_type", "add_index"}


def test_upgrade_is_idempotent_and_at_head(db: Engine) -> None:
    upgrade(db)
    assert current_revision(db) == head_revision() == "0006_stack_user_project"


def test_upgrade_from_url_on_a_new_sqlite_file(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/fresh.sqlite"
    assert current_revision(url) is None
    upgrade(url)
    assert current_revision(url) == "0006_stack_user_project"


def test_downgrade_to_base_removes_every_table(tmp_path: object) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/down.sqlite")
    upgrade(engine)
    with write(engine) as conn:
        config = alembic_config()
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
    with read(engine) as conn:
        assert set(sa.inspect(conn).get_table_names()) == {"alembic_version"}
    assert current_revision(engine) is None
    engine.dispose()


def test_indexes_of_the_spec(db: Engine) -> None:
    with read(db) as conn:
        inspector = sa.inspect(conn)
        node_task = {tuple(ix["column_names"]) for ix in inspector.get_indexes("node_task")}
        stack = {tuple(ix["column_names"]) for ix in inspector.get_indexes("stack")}
        event = {tuple(ix["column_names"]) for ix in inspector.get_indexes("event")}
        fks = inspector.get_foreign_keys("resource_data")
    assert {("state", "not_before"), ("lease_expires_at",), ("stack_id",)} <= node_task
    assert {("project_id", "name"), ("owner_id",), ("root_id",)} <= stack
    assert ("stack_id", "id") in event
    assert fks[0]["options"].get("ondelete") == "CASCADE"


def test_times_keep_microseconds_and_come_back_aware_utc(db: Engine) -> None:
    moment = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=timezone(timedelta(hours=2)))
    with write(db) as conn:
        conn.execute(
            tables.engine.insert().values(
                id="e", host="h", pid=1, started_at=moment, heartbeat_at=moment.replace(tzinfo=None)
            )
        )
    with read(db) as conn:
        row = conn.execute(sa.select(tables.engine)).one()
    assert row.started_at == moment
    assert row.started_at.tzinfo is UTC
    assert row.started_at.microsecond == 891011
    # A naive value is taken as UTC already.
    assert row.heartbeat_at == moment.replace(tzinfo=UTC)


def test_0003_fills_root_stack_id_of_existing_tasks(tmp_path: object) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/old.sqlite")
    config = alembic_config()
    with write(engine) as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0002_software_configs")
    moment = datetime(2025, 1, 1, tzinfo=UTC)
    stack = {
        "name": "s",
        "project_id": "p",
        "owner_id": None,
        "parent_resource": None,
        "nested_depth": 0,
        "action": "CREATE",
        "status": "COMPLETE",
        "status_reason": "",
        "raw_template_id": "t",
        "prev_raw_template_id": None,
        "current_traversal_id": None,
        "timeout_mins": None,
        "disable_rollback": True,
        "tags": [],
        "parameters": {},
        "user_id": "u",
        "created_at": moment,
        "updated_at": moment,
        "deleted_at": None,
        "version": 0,
    }
    task = {
        "resource_name": "r",
        "resource_id": None,
        "kind": "CREATE_OR_UPDATE",
        "pending_deps": 0,
        "state": "READY",
        "priority": 0,
        "lease_owner": None,
        "lease_epoch": 0,
        "lease_expires_at": None,
        "not_before": moment,
        "attempt": 0,
        "phase": None,
        "cookie": None,
        "result_resource_id": None,
        "updated_at": moment,
    }
    traversal = {
        "stack_id": "root",
        "action": "CREATE",
        "raw_template_id": "t",
        "state": "RUNNING",
        "remaining_nodes": 3,
        "cancel_requested": False,
        "rollback_on_failure": False,
        "failure_reason": None,
        "started_at": moment,
        "deadline_at": None,
        "finished_at": None,
    }
    old = sa.MetaData()
    node_task = sa.Table("node_task", old, autoload_with=engine)
    with write(engine) as conn:
        conn.execute(
            tables.raw_template.insert().values(
                id="t", template={}, environment={}, files={}, created_at=moment
            )
        )
        conn.execute(tables.stack.insert().values(id="root", root_id="root", **stack))
        conn.execute(tables.stack.insert().values(id="child", root_id="root", **stack))
        conn.execute(tables.traversal.insert().values(id="tr", **traversal))
        for key, stack_id in (("a", "root"), ("b", "child"), ("c", "gone")):
            conn.execute(
                node_task.insert().values(
                    traversal_id="tr", node_key=key, stack_id=stack_id, **task
                )
            )
    upgrade(engine)
    with read(engine) as conn:
        rows = conn.execute(
            sa.select(tables.node_task.c.node_key, tables.node_task.c.root_stack_id)
        )
        roots = {key: root for key, root in rows}
    assert roots == {"a": "root", "b": "root", "c": "gone"}
    engine.dispose()
