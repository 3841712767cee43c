"""Events keep one index by run: the unique (run_id, seq) index serves every look-up by run, so the index of run_id
alone is dropped (each step writes one index fewer).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_events_run_id", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_run_id", "events", ["run_id"])
