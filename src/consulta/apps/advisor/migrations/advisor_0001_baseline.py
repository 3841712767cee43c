"""advisor's tables as they were when they came under migrations (made without migrations before): created where
missing; a data dir that has them (an earlier version's) keeps them as they are.

Revision ID: advisor_0001
Revises:
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "advisor_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    if "advisor_catalog_meta" not in present:
        op.create_table(
            "advisor_catalog_meta",
            sa.Column("key", sa.String(length=40), nullable=False),
            sa.Column("value", sa.Text(), nullable=False),
            sa.PrimaryKeyConstraint("key"),
        )
    if "advisor_majors" not in present:
        op.create_table(
            "advisor_majors",
            sa.Column("name", sa.String(length=40), nullable=False),
            sa.Column("code", sa.String(length=8), nullable=False),
            sa.Column("en", sa.String(length=100), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )
    if "advisor_page_contexts" not in present:
        op.create_table(
            "advisor_page_contexts",
            sa.Column("principal", sa.String(length=128), nullable=False),
            sa.Column("context", sa.Text(), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("principal"),
        )
    if "advisor_schools" not in present:
        op.create_table(
            "advisor_schools",
            sa.Column("name", sa.String(length=40), nullable=False),
            sa.Column("en", sa.String(length=100), nullable=False),
            sa.Column("city", sa.String(length=20), nullable=False),
            sa.Column("position", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )
    if "advisor_sessions" not in present:
        op.create_table(
            "advisor_sessions",
            sa.Column("principal", sa.String(length=200), nullable=False),
            sa.Column("session_id", sa.String(length=64), nullable=False),
            sa.Column("state", sa.Text(), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("principal"),
        )
    if "advisor_advisors" not in present:
        op.create_table(
            "advisor_advisors",
            sa.Column("id", sa.String(length=12), nullable=False),
            sa.Column("name", sa.String(length=12), nullable=False),
            sa.Column("name_en", sa.String(length=40), nullable=False),
            sa.Column("gender", sa.String(length=1), nullable=False),
            sa.Column("school", sa.String(length=40), nullable=False),
            sa.Column("major", sa.String(length=40), nullable=False),
            sa.Column("title", sa.String(length=10), nullable=False),
            sa.Column("research_directions", sa.Text(), nullable=False),
            sa.Column("personality", sa.String(length=8), nullable=False),
            sa.Column("research_style", sa.String(length=8), nullable=False),
            sa.Column("funding", sa.String(length=8), nullable=False),
            sa.Column("papers", sa.Integer(), nullable=False),
            sa.Column("students", sa.Integer(), nullable=False),
            sa.Column("since", sa.Integer(), nullable=False),
            sa.Column("bio", sa.Text(), nullable=False),
            sa.Column("bio_en", sa.Text(), nullable=False),
            sa.Column("tags", sa.Text(), nullable=False),
            sa.Column("overall", sa.Float(), nullable=False),
            sa.Column("academic", sa.Float(), nullable=False),
            sa.Column("funding_score", sa.Float(), nullable=False),
            sa.Column("relationship", sa.Float(), nullable=False),
            sa.Column("future", sa.Float(), nullable=False),
            sa.Column("review_count", sa.Integer(), nullable=False),
            sa.ForeignKeyConstraint(
                ["major"],
                ["advisor_majors.name"],
            ),
            sa.ForeignKeyConstraint(
                ["school"],
                ["advisor_schools.name"],
            ),
            sa.PrimaryKeyConstraint("id"),
        )
    if "advisor_advisor_majors" not in present:
        op.create_table(
            "advisor_advisor_majors",
            sa.Column("advisor_id", sa.String(length=12), nullable=False),
            sa.Column("school", sa.String(length=40), nullable=False),
            sa.Column("major", sa.String(length=40), nullable=False),
            sa.Column("overall", sa.Float(), nullable=False),
            sa.ForeignKeyConstraint(
                ["advisor_id"],
                ["advisor_advisors.id"],
            ),
            sa.PrimaryKeyConstraint("advisor_id", "school", "major"),
        )
        op.create_index(
            "ix_advisor_majors_ranking", "advisor_advisor_majors", ["school", "major", "overall"], unique=False
        )
    if "advisor_reviews" not in present:
        op.create_table(
            "advisor_reviews",
            sa.Column("id", sa.String(length=16), nullable=False),
            sa.Column("advisor_id", sa.String(length=12), nullable=False),
            sa.Column("date", sa.String(length=10), nullable=False),
            sa.Column("academic", sa.Integer(), nullable=False),
            sa.Column("funding", sa.Integer(), nullable=False),
            sa.Column("relationship", sa.Integer(), nullable=False),
            sa.Column("future", sa.Integer(), nullable=False),
            sa.Column("overall", sa.Float(), nullable=False),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("text_en", sa.Text(), nullable=False),
            sa.Column("author", sa.String(length=20), nullable=False),
            sa.Column("author_en", sa.String(length=40), nullable=False),
            sa.ForeignKeyConstraint(
                ["advisor_id"],
                ["advisor_advisors.id"],
            ),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index("ix_advisor_reviews_advisor", "advisor_reviews", ["advisor_id", "date"], unique=False)


def downgrade() -> None:
    op.drop_table("advisor_reviews")
    op.drop_table("advisor_advisor_majors")
    op.drop_table("advisor_advisors")
    op.drop_table("advisor_sessions")
    op.drop_table("advisor_schools")
    op.drop_table("advisor_page_contexts")
    op.drop_table("advisor_majors")
    op.drop_table("advisor_catalog_meta")
