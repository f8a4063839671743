"""stack.stack_user_project_id: the stack-domain project of a stack's in-instance users.

Revision ID: 0006_stack_user_project
Revises: 0005_stack_trust_id
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_stack_user_project"
down_revision: str | None = "0005_stack_trust_id"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("stack", sa.Column("stack_user_project_id", sa.String(64), nullable=True))
    op.create_index("ix_stack_stack_user_project_id", "stack", ["stack_user_project_id"])


def downgrade() -> None:
    op.drop_index("ix_stack_stack_user_project_id", table_name="stack")
    op.drop_column("stack", "stack_user_project_id")
