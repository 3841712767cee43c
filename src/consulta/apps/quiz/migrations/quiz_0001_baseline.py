"""quiz's tables as they were when they came under migrations (made without migrations before): created where
missing; a data dir that has them (an earlier version's) keeps them as they are.

Revision ID: quiz_0001
Revises:
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "quiz_0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    if "quiz_item_params" not in present:
        op.create_table(
            "quiz_item_params",
            sa.Column("question_id", sa.String(length=36), nullable=False),
            sa.Column("a", sa.Float(), nullable=False),
            sa.Column("b", sa.Float(), nullable=False),
            sa.Column("provisional", sa.Integer(), nullable=False),
            sa.Column("n_responses", sa.Integer(), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("question_id"),
        )
    if "quiz_keywords" not in present:
        op.create_table(
            "quiz_keywords",
            sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
            sa.Column("difficulty", sa.Integer(), nullable=False),
            sa.Column("category", sa.String(length=20), nullable=False),
            sa.Column("lang", sa.String(length=10), nullable=False),
            sa.Column("keywords", sa.Text(), nullable=False),
            sa.Column("concepts", sa.Text(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("difficulty", "category", "lang"),
        )
    if "quiz_profiles" not in present:
        op.create_table(
            "quiz_profiles",
            sa.Column("user_id", sa.String(length=36), nullable=False),
            sa.Column("self_level", sa.String(length=20), nullable=False),
            sa.Column("years_experience", sa.Integer(), nullable=False),
            sa.Column("job_role", sa.String(length=100), nullable=False),
            sa.Column("duty", sa.String(length=500), nullable=False),
            sa.Column("interests", sa.Text(), nullable=False),
            sa.Column("previous_score", sa.Float(), nullable=False),
            sa.Column("lang", sa.String(length=10), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("user_id"),
        )
    if "quiz_questions" not in present:
        op.create_table(
            "quiz_questions",
            sa.Column("id", sa.String(length=36), nullable=False),
            sa.Column("item_type", sa.String(length=20), nullable=False),
            sa.Column("stem", sa.Text(), nullable=False),
            sa.Column("choices", sa.Text(), nullable=True),
            sa.Column("correct_key", sa.Text(), nullable=True),
            sa.Column("correct_keywords", sa.Text(), nullable=True),
            sa.Column("difficulty", sa.Integer(), nullable=False),
            sa.Column("categories", sa.Text(), nullable=False),
            sa.Column("topic", sa.String(length=100), nullable=False),
            sa.Column("lang", sa.String(length=10), nullable=False),
            sa.Column("explanation", sa.Text(), nullable=True),
            sa.Column("source", sa.String(length=20), nullable=False),
            sa.Column("round_id", sa.String(length=200), nullable=True),
            sa.Column("session_id", sa.String(length=200), nullable=True),
            sa.Column("round_number", sa.Integer(), nullable=True),
            sa.Column("validation_score", sa.Float(), nullable=True),
            sa.Column("content_hash", sa.String(length=64), nullable=False),
            sa.Column("created_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("content_hash"),
        )
    if "quiz_responses" not in present:
        op.create_table(
            "quiz_responses",
            sa.Column("id", sa.String(length=64), nullable=False),
            sa.Column("user_id", sa.String(length=64), nullable=False),
            sa.Column("session_id", sa.String(length=200), nullable=False),
            sa.Column("question_id", sa.String(length=36), nullable=False),
            sa.Column("user_answer", sa.Text(), nullable=False),
            sa.Column("score", sa.Float(), nullable=False),
            sa.Column("is_correct", sa.Integer(), nullable=False),
            sa.Column("created_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index(op.f("ix_quiz_responses_question_id"), "quiz_responses", ["question_id"], unique=False)
        op.create_index(op.f("ix_quiz_responses_session_id"), "quiz_responses", ["session_id"], unique=False)
        op.create_index(op.f("ix_quiz_responses_user_id"), "quiz_responses", ["user_id"], unique=False)
    if "quiz_templates" not in present:
        op.create_table(
            "quiz_templates",
            sa.Column("id", sa.String(length=36), nullable=False),
            sa.Column("stem", sa.Text(), nullable=False),
            sa.Column("item_type", sa.String(length=20), nullable=False),
            sa.Column("choices", sa.Text(), nullable=True),
            sa.Column("correct_answer", sa.Text(), nullable=True),
            sa.Column("difficulty", sa.Integer(), nullable=False),
            sa.Column("category", sa.String(length=20), nullable=False),
            sa.Column("domain", sa.String(length=100), nullable=False),
            sa.Column("lang", sa.String(length=10), nullable=False),
            sa.Column("usage_count", sa.Integer(), nullable=False),
            sa.Column("avg_difficulty_score", sa.Float(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
    if "quiz_test_items" not in present:
        op.create_table(
            "quiz_test_items",
            sa.Column("session_id", sa.String(length=36), nullable=False),
            sa.Column("position", sa.Integer(), nullable=False),
            sa.Column("question_id", sa.String(length=36), nullable=False),
            sa.Column("a", sa.Float(), nullable=False),
            sa.Column("b", sa.Float(), nullable=False),
            sa.Column("shown_at", sa.String(length=32), nullable=False),
            sa.Column("answer", sa.Text(), nullable=True),
            sa.Column("score", sa.Float(), nullable=True),
            sa.Column("is_correct", sa.Integer(), nullable=True),
            sa.Column("graded_by", sa.String(length=10), nullable=True),
            sa.Column("grader", sa.Text(), nullable=True),
            sa.Column("theta", sa.Float(), nullable=True),
            sa.Column("se", sa.Float(), nullable=True),
            sa.Column("answered_at", sa.String(length=32), nullable=True),
            sa.PrimaryKeyConstraint("session_id", "position"),
            sa.UniqueConstraint("session_id", "question_id"),
        )
    if "quiz_test_sessions" not in present:
        op.create_table(
            "quiz_test_sessions",
            sa.Column("id", sa.String(length=36), nullable=False),
            sa.Column("principal", sa.String(length=100), nullable=False),
            sa.Column("user_id", sa.String(length=36), nullable=False),
            sa.Column("lang", sa.String(length=10), nullable=False),
            sa.Column("profile", sa.Text(), nullable=False),
            sa.Column("status", sa.String(length=20), nullable=False),
            sa.Column("position", sa.Integer(), nullable=False),
            sa.Column("theta", sa.Float(), nullable=False),
            sa.Column("se", sa.Float(), nullable=False),
            sa.Column("prior_mean", sa.Float(), nullable=False),
            sa.Column("rules", sa.Text(), nullable=False),
            sa.Column("seed", sa.Integer(), nullable=False),
            sa.Column("stop_reason", sa.String(length=20), nullable=True),
            sa.Column("created_at", sa.String(length=32), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.Column("finished_at", sa.String(length=32), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index(op.f("ix_quiz_test_sessions_principal"), "quiz_test_sessions", ["principal"], unique=False)


def downgrade() -> None:
    op.drop_table("quiz_test_sessions")
    op.drop_table("quiz_test_items")
    op.drop_table("quiz_templates")
    op.drop_table("quiz_responses")
    op.drop_table("quiz_questions")
    op.drop_table("quiz_profiles")
    op.drop_table("quiz_keywords")
    op.drop_table("quiz_item_params")
