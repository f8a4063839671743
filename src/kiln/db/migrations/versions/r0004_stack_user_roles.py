"""stack.user_roles: the owner's role names, so the cloud acts for the stack with them.

Existing stacks get no roles (what they had is not known). The column type is spelled
out, as in the other revisions, so the revision keeps meaning what it meant.

Revision ID: 0004_stack_user_roles
Revises: 0003_node_task_root_stack
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_stack_user_roles"
down_revision: str | None = "0003_node_task_root_stack"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable: making it NOT NULL would make SQLite copy the stack table, which the
    # foreign keys of other tables forbid; the code reads NULL as no roles.
    op.add_column("stack", sa.Column("user_roles", sa.JSON(), nullable=True))
    op.execute("UPDATE stack SET user_roles = '[]'")


def downgrade() -> None:
    op.drop_column("stack", "user_roles")
