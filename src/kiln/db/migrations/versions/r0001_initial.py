"""Initial engine schema: the tables of docs/engine-schema.md.

A frozen copy: later changes go in new revisions, never here. Types are spelled
out (not imported from ``kiln.db.tables``) so that this revision keeps creating
the same schema whatever the current code says.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MYSQL: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}


def _dt() -> Any:
    return sa.DateTime(timezone=False).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def _id() -> sa.String:
    return sa.String(36)


def _tid() -> sa.String:
    return sa.String(64)


def _name() -> sa.String:
    return sa.String(255)


def _state() -> sa.String:
    return sa.String(32)


def upgrade() -> None:
    op.create_table(
        "raw_template",
        sa.Column("id", _tid(), nullable=False),
        sa.Column("template", sa.JSON(), nullable=False),
        sa.Column("environment", sa.JSON(), nullable=False),
        sa.Column("files", sa.JSON(), nullable=False),
        sa.Column("created_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_raw_template"),
        **MYSQL,
    )
    op.create_table(
        "stack",
        sa.Column("id", _id(), nullable=False),
        sa.Column("name", _name(), nullable=False),
        sa.Column("project_id", sa.String(64), nullable=False),
        sa.Column("owner_id", _id(), nullable=True),
        sa.Column("root_id", _id(), nullable=False),
        sa.Column("parent_resource", _name(), nullable=True),
        sa.Column("nested_depth", sa.Integer(), nullable=False),
        sa.Column("action", _state(), nullable=False),
        sa.Column("status", _state(), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("raw_template_id", _tid(), nullable=False),
        sa.Column("prev_raw_template_id", _tid(), nullable=True),
        sa.Column("current_traversal_id", _id(), nullable=True),
        sa.Column("timeout_mins", sa.Integer(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=False),
        sa.Column("deleted_at", _dt(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_stack"),
        sa.ForeignKeyConstraint(["owner_id"], ["stack.id"], name="fk_stack_owner_id_stack"),
        sa.ForeignKeyConstraint(
            ["raw_template_id"], ["raw_template.id"], name="fk_stack_raw_template_id_raw_template"
        ),
        sa.ForeignKeyConstraint(
            ["prev_raw_template_id"],
            ["raw_template.id"],
            name="fk_stack_prev_raw_template_id_raw_template",
        ),
        **MYSQL,
    )
    op.create_index("ix_stack_project_id_name", "stack", ["project_id", "name"])
    op.create_index("ix_stack_owner_id", "stack", ["owner_id"])
    op.create_index("ix_stack_root_id", "stack", ["root_id"])
    op.create_index("ix_stack_raw_template_id", "stack", ["raw_template_id"])
    op.create_index("ix_stack_prev_raw_template_id", "stack", ["prev_raw_template_id"])

    op.create_table(
        "traversal",
        sa.Column("id", _id(), nullable=False),
        sa.Column("stack_id", _id(), nullable=False),
        sa.Column("action", _state(), nullable=False),
        sa.Column("raw_template_id", _tid(), nullable=False),
        sa.Column("state", _state(), nullable=False),
        sa.Column("remaining_nodes", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("rollback_on_failure", sa.Boolean(), nullable=False),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("started_at", _dt(), nullable=False),
        sa.Column("deadline_at", _dt(), nullable=True),
        sa.Column("finished_at", _dt(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_traversal"),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"], name="fk_traversal_stack_id_stack"),
        **MYSQL,
    )
    op.create_index("ix_traversal_stack_id", "traversal", ["stack_id"])

    op.create_table(
        "node_task",
        sa.Column("traversal_id", _id(), nullable=False),
        sa.Column("node_key", sa.String(300), nullable=False),
        sa.Column("stack_id", _id(), nullable=False),
        sa.Column("resource_name", _name(), nullable=False),
        sa.Column("resource_id", _id(), nullable=True),
        sa.Column("kind", _state(), nullable=False),
        sa.Column("pending_deps", sa.Integer(), nullable=False),
        sa.Column("state", _state(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("lease_owner", _id(), nullable=True),
        sa.Column("lease_epoch", sa.Integer(), nullable=False),
        sa.Column("lease_expires_at", _dt(), nullable=True),
        sa.Column("not_before", _dt(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("phase", _state(), nullable=True),
        sa.Column("cookie", sa.JSON(), nullable=True),
        sa.Column("result_resource_id", _id(), nullable=True),
        sa.Column("updated_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("traversal_id", "node_key", name="pk_node_task"),
        sa.ForeignKeyConstraint(
            ["traversal_id"], ["traversal.id"], name="fk_node_task_traversal_id_traversal"
        ),
        **MYSQL,
    )
    op.create_index("ix_node_task_state_not_before", "node_task", ["state", "not_before"])
    op.create_index("ix_node_task_lease_expires_at", "node_task", ["lease_expires_at"])
    op.create_index("ix_node_task_stack_id", "node_task", ["stack_id"])

    op.create_table(
        "traversal_edge",
        sa.Column("traversal_id", _id(), nullable=False),
        sa.Column("from_node", sa.String(300), nullable=False),
        sa.Column("to_node", sa.String(300), nullable=False),
        sa.PrimaryKeyConstraint("traversal_id", "from_node", "to_node", name="pk_traversal_edge"),
        **MYSQL,
    )
    op.create_index("ix_traversal_edge_to", "traversal_edge", ["traversal_id", "to_node"])

    op.create_table(
        "resource",
        sa.Column("id", _id(), nullable=False),
        sa.Column("stack_id", _id(), nullable=False),
        sa.Column("root_stack_id", _id(), nullable=False),
        sa.Column("name", _name(), nullable=False),
        sa.Column("type", _name(), nullable=False),
        sa.Column("physical_id", _name(), nullable=True),
        sa.Column("action", _state(), nullable=False),
        sa.Column("status", _state(), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("raw_template_id", _tid(), nullable=False),
        sa.Column("requires", sa.JSON(), nullable=False),
        sa.Column("replaces", _id(), nullable=True),
        sa.Column("replaced_by", _id(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("owner_traversal_id", _id(), nullable=True),
        sa.Column("owner_epoch", sa.Integer(), nullable=False),
        sa.Column("properties", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("reference_id", sa.JSON(), nullable=True),
        sa.Column("attributes", sa.JSON(), nullable=False),
        sa.Column("nested_stack_id", _id(), nullable=True),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_resource"),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"], name="fk_resource_stack_id_stack"),
        **MYSQL,
    )
    op.create_index("ix_resource_stack_id_name", "resource", ["stack_id", "name"])
    op.create_index("ix_resource_root_stack_id", "resource", ["root_stack_id"])

    op.create_table(
        "resource_data",
        sa.Column("resource_id", _id(), nullable=False),
        sa.Column("key", _name(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("redact", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("resource_id", "key", name="pk_resource_data"),
        sa.ForeignKeyConstraint(
            ["resource_id"],
            ["resource.id"],
            name="fk_resource_data_resource_id_resource",
            ondelete="CASCADE",
        ),
        **MYSQL,
    )

    op.create_table(
        "event",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("uuid", _id(), nullable=False),
        sa.Column("stack_id", _id(), nullable=False),
        sa.Column("resource_name", _name(), nullable=False),
        sa.Column("physical_resource_id", _name(), nullable=True),
        sa.Column("resource_type", _name(), nullable=False),
        sa.Column("action", _state(), nullable=False),
        sa.Column("status", _state(), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("resource_properties", sa.JSON(), nullable=False),
        sa.Column("created_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_event"),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"], name="fk_event_stack_id_stack"),
        **MYSQL,
    )
    op.create_index("ix_event_stack_id_id", "event", ["stack_id", "id"])
    op.create_index("ix_event_uuid", "event", ["uuid"])

    op.create_table(
        "engine",
        sa.Column("id", _id(), nullable=False),
        sa.Column("host", _name(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", _dt(), nullable=False),
        sa.Column("heartbeat_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_engine"),
        **MYSQL,
    )

    op.create_table(
        "snapshot",
        sa.Column("id", _id(), nullable=False),
        sa.Column("stack_id", _id(), nullable=False),
        sa.Column("name", _name(), nullable=True),
        sa.Column("action", _state(), nullable=False),
        sa.Column("status", _state(), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_snapshot"),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"], name="fk_snapshot_stack_id_stack"),
        **MYSQL,
    )
    op.create_index("ix_snapshot_stack_id", "snapshot", ["stack_id"])


def downgrade() -> None:
    for table in (
        "snapshot",
        "engine",
        "event",
        "resource_data",
        "resource",
        "traversal_edge",
        "node_task",
        "traversal",
        "stack",
        "raw_template",
    ):
        op.drop_table(table)
