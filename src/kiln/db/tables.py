"""The engine's tables as SQLAlchemy Core metadata (docs/engine-schema.md).

Types are portable across SQLite, PostgreSQL and MariaDB: bounded ``String`` for
every indexed column (MariaDB index keys are limited to 3072 bytes in utf8mb4),
``Text`` for free text, ``JSON`` (LONGTEXT on MariaDB) for documents, and
naive-UTC timestamps with microseconds. Every index and constraint is named, so
that later migrations can refer to them on all three databases. MariaDB tables
use ``utf8mb4_bin`` so that names compare case-sensitively, as on the others.
This module is the reference the migrations are checked against. Imports:
SQLAlchemy and ``kiln.db.types`` only.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from kiln.db.types import UTCDateTime, json_type

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Applied to every table on MariaDB/MySQL only; the other dialects ignore them.
MYSQL_TABLE_ARGS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}

ID_LEN = 36  # a UUID string
TEMPLATE_ID_LEN = 64  # a sha256 hex digest
NAME_LEN = 255
PROJECT_LEN = 64
STATE_LEN = 32
NODE_KEY_LEN = 300

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


def _id(name: str = "id", *args: Any, **kw: Any) -> sa.Column[str]:
    return sa.Column(name, sa.String(ID_LEN), *args, **kw)


def _time(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, UTCDateTime(), nullable=nullable)


def _state(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, sa.String(STATE_LEN), nullable=nullable)


raw_template = sa.Table(
    "raw_template",
    metadata,
    sa.Column("id", sa.String(TEMPLATE_ID_LEN), primary_key=True),
    sa.Column("template", json_type(), nullable=False),
    sa.Column("environment", json_type(), nullable=False),
    sa.Column("files", json_type(), nullable=False),
    _time("created_at"),
    **MYSQL_TABLE_ARGS,
)

stack = sa.Table(
    "stack",
    metadata,
    _id(primary_key=True),
    sa.Column("name", sa.String(NAME_LEN), nullable=False),
    sa.Column("project_id", sa.String(PROJECT_LEN), nullable=False),
    _id("owner_id", sa.ForeignKey("stack.id"), nullable=True),
    _id("root_id", nullable=False),
    sa.Column("parent_resource", sa.String(NAME_LEN), nullable=True),
    sa.Column("nested_depth", sa.Integer, nullable=False),
    _state("action"),
    _state("status"),
    sa.Column("status_reason", sa.Text, nullable=False),
    sa.Column(
        "raw_template_id",
        sa.String(TEMPLATE_ID_LEN),
        sa.ForeignKey("raw_template.id"),
        nullable=False,
    ),
    sa.Column(
        "prev_raw_template_id",
        sa.String(TEMPLATE_ID_LEN),
        sa.ForeignKey("raw_template.id"),
        nullable=True,
    ),
    _id("current_traversal_id", nullable=True),
    sa.Column("timeout_mins", sa.Integer, nullable=True),
    sa.Column("disable_rollback", sa.Boolean, nullable=False),
    sa.Column("tags", json_type(), nullable=False),
    sa.Column("parameters", json_type(), nullable=False),
    sa.Column("user_id", sa.String(PROJECT_LEN), nullable=False),
    # the owner's role names: the cloud acts for the stack with them (admin-only types)
    sa.Column("user_roles", json_type(nullable=True), nullable=True),
    # the Keystone trust the stack's cloud calls use (a real cloud's scope)
    sa.Column("trust_id", sa.String(64), nullable=True),
    # the stack-domain project of the stack's in-instance users (root stacks only)
    sa.Column("stack_user_project_id", sa.String(64), nullable=True),
    _time("created_at"),
    _time("updated_at"),
    _time("deleted_at", nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Index("ix_stack_project_id_name", "project_id", "name"),
    sa.Index("ix_stack_owner_id", "owner_id"),
    sa.Index("ix_stack_root_id", "root_id"),
    sa.Index("ix_stack_raw_template_id", "raw_template_id"),
    sa.Index("ix_stack_prev_raw_template_id", "prev_raw_template_id"),
    sa.Index("ix_stack_stack_user_project_id", "stack_user_project_id"),
    **MYSQL_TABLE_ARGS,
)

traversal = sa.Table(
    "traversal",
    metadata,
    _id(primary_key=True),
    _id("stack_id", sa.ForeignKey("stack.id"), nullable=False),
    _state("action"),
    sa.Column("raw_template_id", sa.String(TEMPLATE_ID_LEN), nullable=False),
    _state("state"),
    sa.Column("remaining_nodes", sa.Integer, nullable=False),
    sa.Column("cancel_requested", sa.Boolean, nullable=False),
    sa.Column("rollback_on_failure", sa.Boolean, nullable=False),
    sa.Column("failure_reason", sa.Text, nullable=True),
    _time("started_at"),
    _time("deadline_at", nullable=True),
    _time("finished_at", nullable=True),
    sa.Index("ix_traversal_stack_id", "stack_id"),
    **MYSQL_TABLE_ARGS,
)

# The primary key (traversal_id, node_key) also serves as the index of the
# traversal_id foreign key. ``root_stack_id`` (the stack's ``root_id``) is copied
# in so that claims can count a stack tree's running tasks without a join (a join
# would make FOR UPDATE lock stack rows on MariaDB); no index: claims only count
# it over CLAIMED rows, which are few.
node_task = sa.Table(
    "node_task",
    metadata,
    _id("traversal_id", sa.ForeignKey("traversal.id"), primary_key=True),
    sa.Column("node_key", sa.String(NODE_KEY_LEN), primary_key=True),
    _id("stack_id", nullable=False),
    _id("root_stack_id", nullable=False),
    sa.Column("resource_name", sa.String(NAME_LEN), nullable=False),
    _id("resource_id", nullable=True),
    _state("kind"),
    sa.Column("pending_deps", sa.Integer, nullable=False),
    _state("state"),
    sa.Column("priority", sa.Integer, nullable=False),
    _id("lease_owner", nullable=True),
    sa.Column("lease_epoch", sa.Integer, nullable=False),
    _time("lease_expires_at", nullable=True),
    _time("not_before"),
    sa.Column("attempt", sa.Integer, nullable=False),
    _state("phase", nullable=True),
    sa.Column("cookie", json_type(nullable=True), nullable=True),
    _id("result_resource_id", nullable=True),
    _time("updated_at"),
    sa.Index("ix_node_task_state_not_before", "state", "not_before"),
    sa.Index("ix_node_task_lease_expires_at", "lease_expires_at"),
    sa.Index("ix_node_task_stack_id", "stack_id"),
    **MYSQL_TABLE_ARGS,
)

# The primary key finds successors; ix_traversal_edge_to finds predecessors
# (the sweeper recomputes readiness from them).
traversal_edge = sa.Table(
    "traversal_edge",
    metadata,
    _id("traversal_id", primary_key=True),
    sa.Column("from_node", sa.String(NODE_KEY_LEN), primary_key=True),
    sa.Column("to_node", sa.String(NODE_KEY_LEN), primary_key=True),
    sa.Index("ix_traversal_edge_to", "traversal_id", "to_node"),
    **MYSQL_TABLE_ARGS,
)

resource = sa.Table(
    "resource",
    metadata,
    _id(primary_key=True),
    _id("stack_id", sa.ForeignKey("stack.id"), nullable=False),
    _id("root_stack_id", nullable=False),
    sa.Column("name", sa.String(NAME_LEN), nullable=False),
    sa.Column("type", sa.String(NAME_LEN), nullable=False),
    sa.Column("physical_id", sa.String(NAME_LEN), nullable=True),
    _state("action"),
    _state("status"),
    sa.Column("status_reason", sa.Text, nullable=False),
    sa.Column("raw_template_id", sa.String(TEMPLATE_ID_LEN), nullable=False),
    sa.Column("requires", json_type(), nullable=False),
    _id("replaces", nullable=True),
    _id("replaced_by", nullable=True),
    sa.Column("version", sa.Integer, nullable=False),
    _id("owner_traversal_id", nullable=True),
    sa.Column("owner_epoch", sa.Integer, nullable=False),
    sa.Column("properties", json_type(), nullable=False),
    sa.Column("metadata", json_type(), nullable=False),
    sa.Column("reference_id", json_type(nullable=True), nullable=True),
    sa.Column("attributes", json_type(), nullable=False),
    _id("nested_stack_id", nullable=True),
    _time("created_at"),
    _time("updated_at"),
    sa.Index("ix_resource_stack_id_name", "stack_id", "name"),
    sa.Index("ix_resource_root_stack_id", "root_stack_id"),
    **MYSQL_TABLE_ARGS,
)

# The primary key (resource_id, key) also indexes the foreign key.
resource_data = sa.Table(
    "resource_data",
    metadata,
    _id("resource_id", sa.ForeignKey("resource.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("key", sa.String(NAME_LEN), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("redact", sa.Boolean, nullable=False),
    **MYSQL_TABLE_ARGS,
)

event = sa.Table(
    "event",
    metadata,
    sa.Column(
        "id",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    _id("uuid", nullable=False),
    _id("stack_id", sa.ForeignKey("stack.id"), nullable=False),
    sa.Column("resource_name", sa.String(NAME_LEN), nullable=False),
    sa.Column("physical_resource_id", sa.String(NAME_LEN), nullable=True),
    sa.Column("resource_type", sa.String(NAME_LEN), nullable=False),
    _state("action"),
    _state("status"),
    sa.Column("status_reason", sa.Text, nullable=False),
    sa.Column("resource_properties", json_type(), nullable=False),
    _time("created_at"),
    sa.Index("ix_event_stack_id_id", "stack_id", "id"),
    sa.Index("ix_event_uuid", "uuid"),
    **MYSQL_TABLE_ARGS,
)

engine = sa.Table(
    "engine",
    metadata,
    _id(primary_key=True),
    sa.Column("host", sa.String(NAME_LEN), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    _time("started_at"),
    _time("heartbeat_at"),
    **MYSQL_TABLE_ARGS,
)

snapshot = sa.Table(
    "snapshot",
    metadata,
    _id(primary_key=True),
    _id("stack_id", sa.ForeignKey("stack.id"), nullable=False),
    sa.Column("name", sa.String(NAME_LEN), nullable=True),
    _state("action"),
    _state("status"),
    sa.Column("status_reason", sa.Text, nullable=False),
    sa.Column("data", json_type(nullable=True), nullable=True),
    _time("created_at"),
    _time("updated_at"),
    sa.Index("ix_snapshot_stack_id", "stack_id"),
    **MYSQL_TABLE_ARGS,
)

# Software configs and deployments (heat-api.md 2.8). A config never changes once
# stored: its body (config text or structure, inputs, outputs, options) is one
# JSON document. A deployment's project is the caller's; stack users reach it
# through stack_user_project_id.
software_config = sa.Table(
    "software_config",
    metadata,
    _id(primary_key=True),
    sa.Column("project_id", sa.String(PROJECT_LEN), nullable=False),
    sa.Column("name", sa.String(NAME_LEN), nullable=True),
    sa.Column("group", sa.String(NAME_LEN), nullable=True),
    sa.Column("body", json_type(), nullable=False),
    _time("created_at"),
    _time("updated_at", nullable=True),
    sa.Index("ix_software_config_project_id_created_at", "project_id", "created_at"),
    **MYSQL_TABLE_ARGS,
)

software_deployment = sa.Table(
    "software_deployment",
    metadata,
    _id(primary_key=True),
    sa.Column("project_id", sa.String(PROJECT_LEN), nullable=False),
    _id("config_id", sa.ForeignKey("software_config.id"), nullable=False),
    sa.Column("server_id", sa.String(NAME_LEN), nullable=False),
    sa.Column("input_values", json_type(nullable=True), nullable=True),
    sa.Column("output_values", json_type(nullable=True), nullable=True),
    sa.Column("action", sa.String(NAME_LEN), nullable=True),
    sa.Column("status", sa.String(NAME_LEN), nullable=True),
    sa.Column("status_reason", sa.Text, nullable=True),
    sa.Column("stack_user_project_id", sa.String(PROJECT_LEN), nullable=True),
    _time("created_at"),
    _time("updated_at", nullable=True),
    sa.Index("ix_software_deployment_config_id", "config_id"),
    sa.Index("ix_software_deployment_server_id", "server_id"),
    sa.Index("ix_software_deployment_project_id", "project_id"),
    sa.Index("ix_software_deployment_stack_user_project_id", "stack_user_project_id"),
    **MYSQL_TABLE_ARGS,
)

# Children before parents: the order in which rows can be deleted.
DELETE_ORDER: tuple[sa.Table, ...] = tuple(reversed(metadata.sorted_tables))
