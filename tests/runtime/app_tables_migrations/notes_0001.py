"""A test app's first revision: its `notes` table, created where missing.

Revision ID: notes_0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "notes_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    if "notes_notes" not in sa.inspect(op.get_bind()).get_table_names():
        op.create_table(
            "notes_notes",
            sa.Column("principal", sa.String(40), primary_key=True),
            sa.Column("text", sa.Text(), nullable=False),
        )


def downgrade() -> None:
    op.drop_table("notes_notes")
