"""The test app's second revision: a column added (as an app's schema moves on).

Revision ID: notes_0002
Revises: notes_0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "notes_0002"
down_revision = "notes_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notes_notes") as batch:
        batch.add_column(sa.Column("pinned", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("notes_notes") as batch:
        batch.drop_column("pinned")
