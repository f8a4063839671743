"""node_task.root_stack_id: the root of the task's stack tree (per-stack claim limits).

Existing rows take their stack's ``root_id`` (their own stack id if the stack
row is gone). The column is added nullable, filled, then made NOT NULL; batch
mode lets SQLite do the last step by copying the table.

Revision ID: 0003_node_task_root_stack
Revises: 0002_software_configs
Create Date: 2025-02-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_node_task_root_stack"
down_revision: str | None = "0002_software_configs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FILL = """
UPDATE node_task SET root_stack_id = COALESCE(
    (SELECT stack.root_id FROM stack WHERE stack.id = node_task.stack_id),
    node_task.stack_id
)
"""


def upgrade() -> None:
    op.add_column("node_task", sa.Column("root_stack_id", sa.String(36), nullable=True))
    op.execute(_FILL)
    with op.batch_alter_table("node_task") as batch:
        batch.alter_column("root_stack_id", existing_type=sa.String(36), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("node_task") as batch:
        batch.drop_column("root_stack_id")
