"""Runs record which agent of their app they ran (`runs.agent`; "" for the app's main agent, as every run before).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A store opened by the interim version (between the hand-written upgrades and these) may have it already.
    if "agent" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}:
        op.add_column("runs", sa.Column("agent", sa.String(80), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("agent")
