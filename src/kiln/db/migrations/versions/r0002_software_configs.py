"""Software configs and deployments (heat-api.md 2.8).

A frozen copy, like 0001: types are spelled out, not imported from
``kiln.db.tables``.

Revision ID: 0002_software_configs
Revises: 0001_initial
Create Date: 2025-02-01
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0002_software_configs"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MYSQL: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}


def _dt() -> Any:
    return sa.DateTime(timezone=False).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "software_config",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("group", sa.String(255), nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_software_config"),
        **MYSQL,
    )
    op.create_index(
        "ix_software_config_project_id_created_at",
        "software_config",
        ["project_id", "created_at"],
    )

    op.create_table(
        "software_deployment",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(64), nullable=False),
        sa.Column("config_id", sa.String(36), nullable=False),
        sa.Column("server_id", sa.String(255), nullable=False),
        sa.Column("input_values", sa.JSON(), nullable=True),
        sa.Column("output_values", sa.JSON(), nullable=True),
        sa.Column("action", sa.String(255), nullable=True),
        sa.Column("status", sa.String(255), nullable=True),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("stack_user_project_id", sa.String(64), nullable=True),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_software_deployment"),
        sa.ForeignKeyConstraint(
            ["config_id"],
            ["software_config.id"],
            name="fk_software_deployment_config_id_software_config",
        ),
        **MYSQL,
    )
    for columns in (["config_id"], ["server_id"], ["project_id"], ["stack_user_project_id"]):
        op.create_index(f"ix_software_deployment_{columns[0]}", "software_deployment", columns)


def downgrade() -> None:
    op.drop_table("software_deployment")
    op.drop_table("software_config")
