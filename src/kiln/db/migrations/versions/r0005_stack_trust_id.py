"""stack.trust_id: the Keystone trust a stack's cloud calls use on a real cloud.

Revision ID: 0005_stack_trust_id
Revises: 0004_stack_user_roles
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_stack_trust_id"
down_revision: str | None = "0004_stack_user_roles"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("stack", sa.Column("trust_id", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("stack", "trust_id")
