"""Events numbered per run (`events.seq`: 1, 2, 3 … within a run, unique with run_id); stored events are numbered
in the order they were written.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A store opened by the interim version (between the hand-written upgrades and these) has the column, with 0 for
    # the events stored before it: every event is numbered again below, by its place in its run.
    if "seq" not in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("events")}:
        op.add_column("events", sa.Column("seq", sa.Integer, nullable=True))
    events = sa.table(
        "events", sa.column("id", sa.Integer), sa.column("run_id", sa.String), sa.column("seq", sa.Integer)
    )
    earlier = events.alias("earlier")
    position = (
        sa.select(sa.func.count())
        .select_from(earlier)
        .where(earlier.c.run_id == events.c.run_id, earlier.c.id <= events.c.id)
        .scalar_subquery()
    )
    op.execute(events.update().values(seq=position))
    with op.batch_alter_table("events") as batch:
        batch.alter_column("seq", existing_type=sa.Integer, nullable=False)
        batch.create_unique_constraint("uq_events_run_id_seq", ["run_id", "seq"])


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_constraint("uq_events_run_id_seq", type_="unique")
        batch.drop_column("seq")
