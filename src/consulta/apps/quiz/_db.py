"""quiz's tables, in the same database as the rest of the store (`Store.engine`), migrated with it (`QUIZ_TABLES`).

The contract other quiz modules write against: the question bank (`questions`), each item's IRT parameters
(`item_params`), people's profiles (`people`, a state book's table: `_profiles.profile_book`), templates and difficulty keywords (seed tools 2 and 3), and every scored
response (`responses`, the data items are calibrated from), and a person's adaptive test sessions (`test_sessions`,
`test_items`, see `_cat_sessions`).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, UniqueConstraint
from sqlalchemy.engine import Engine

from ...runtime import AppTables, migrate_app_tables, state_table

__all__ = [
    "QUIZ_TABLES",
    "create_tables",
    "item_params",
    "keywords",
    "metadata",
    "people",
    "questions",
    "responses",
    "templates",
    "test_items",
    "test_sessions",
]

metadata = MetaData()

people = state_table("quiz_people", metadata, principal_length=36)
"""Each person's profile (seed tool 1's fields, `_profiles.ProfileState`) in a `StateBook`, keyed by their profile id
(a UUID: `principal` holds it)."""

questions = Table(
    "quiz_questions",
    metadata,
    Column("id", String(36), primary_key=True),  # a UUID
    Column("item_type", String(20), nullable=False),  # multiple_choice | true_false | short_answer
    Column("stem", Text, nullable=False),
    Column("choices", Text, nullable=True),  # JSON list of str (multiple_choice), else null
    Column("correct_key", Text, nullable=True),  # multiple_choice / true_false
    Column("correct_keywords", Text, nullable=True),  # JSON list of str (short_answer)
    Column("difficulty", Integer, nullable=False),  # 1-10
    Column("categories", Text, nullable=False),  # JSON list: technical | business | general
    Column("topic", String(100), nullable=False, default=""),  # e.g. "SQL joins": what references are chosen by
    Column("lang", String(10), nullable=False),  # en | zh-CN
    Column("explanation", Text, nullable=True),
    Column("source", String(20), nullable=False),  # bank (shipped) | generated (Mode 1)
    Column("round_id", String(200), nullable=True),
    Column("session_id", String(200), nullable=True),  # parsed from round_id
    Column("round_number", Integer, nullable=True),
    Column("validation_score", Float, nullable=True),
    Column("content_hash", String(64), nullable=False, unique=True),  # saves are idempotent: the same item once
    Column("created_at", String(32), nullable=False),
)

item_params = Table(
    "quiz_item_params",
    metadata,
    Column("question_id", String(36), primary_key=True),
    Column("a", Float, nullable=False),  # 2PL discrimination
    Column("b", Float, nullable=False),  # 2PL difficulty (logit scale)
    Column("provisional", Integer, nullable=False, default=1),  # 1: from the 1-10 level only; 0: calibrated
    Column("n_responses", Integer, nullable=False, default=0),
    Column("updated_at", String(32), nullable=False),
)

templates = Table(
    "quiz_templates",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("stem", Text, nullable=False),
    Column("item_type", String(20), nullable=False),
    Column("choices", Text, nullable=True),
    Column("correct_answer", Text, nullable=True),
    Column("difficulty", Integer, nullable=False),
    Column("category", String(20), nullable=False),
    Column("domain", String(100), nullable=False),  # the interest it serves, matched against tool 2's interests
    Column("lang", String(10), nullable=False),
    Column("usage_count", Integer, nullable=False, default=0),
    Column("avg_difficulty_score", Float, nullable=False, default=0),
)

keywords = Table(
    "quiz_keywords",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("difficulty", Integer, nullable=False),
    Column("category", String(20), nullable=False),
    Column("lang", String(10), nullable=False),
    Column("keywords", Text, nullable=False),  # JSON list of str
    Column("concepts", Text, nullable=False),  # JSON list of {name, acronym, definition, key_points}
    UniqueConstraint("difficulty", "category", "lang"),
)

responses = Table(
    "quiz_responses",
    metadata,
    Column("id", String(64), primary_key=True),  # idempotency key: `<test session>:<question>` or a Mode 2 attempt id
    Column("user_id", String(64), nullable=False, index=True),
    Column("session_id", String(200), nullable=False, index=True),
    Column("question_id", String(36), nullable=False, index=True),
    Column("user_answer", Text, nullable=False),
    Column("score", Float, nullable=False),  # 0-100
    Column("is_correct", Integer, nullable=False),
    Column("created_at", String(32), nullable=False),
)


# A person's adaptive test sessions (`_cat_sessions`).

test_sessions = Table(
    "quiz_test_sessions",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("principal", String(100), nullable=False, index=True),
    Column("user_id", String(36), nullable=False),
    Column("lang", String(10), nullable=False),
    Column("profile", Text, nullable=False),  # JSON: the profile as given for this test
    Column("status", String(20), nullable=False),  # in_progress | finished | abandoned
    Column("position", Integer, nullable=False),  # in progress: the item shown (1-based); else the last one
    Column("theta", Float, nullable=False),
    Column("se", Float, nullable=False),
    Column("prior_mean", Float, nullable=False),
    Column("rules", Text, nullable=False),  # JSON: the CatRules the test runs by, kept for a restart
    Column("seed", Integer, nullable=False),  # the exposure control's random choices, reproducible per item
    Column("stop_reason", String(20), nullable=True),  # se_target | max_items | bank_exhausted
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("finished_at", String(32), nullable=True),
)

test_items = Table(
    "quiz_test_items",
    metadata,
    Column("session_id", String(36), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("question_id", String(36), nullable=False),
    Column("a", Float, nullable=False),  # the item's parameters when it was chosen (θ is estimated with them)
    Column("b", Float, nullable=False),
    Column("shown_at", String(32), nullable=False),
    Column("answer", Text, nullable=True),  # null: shown, not answered yet
    Column("score", Float, nullable=True),  # 0-100
    Column("is_correct", Integer, nullable=True),
    Column("graded_by", String(10), nullable=True),  # code | model | fallback
    Column("grader", Text, nullable=True),  # JSON: the short-answer grader's explanation and feedback
    Column("theta", Float, nullable=True),  # the estimate after this answer
    Column("se", Float, nullable=True),
    Column("answered_at", String(32), nullable=True),
    UniqueConstraint("session_id", "question_id"),
)


QUIZ_TABLES = AppTables(app="quiz", metadata=metadata, migrations=Path(__file__).with_name("migrations"))
"""quiz's tables, declared on its `AppDef`: created and migrated with the store."""


def create_tables(engine: Engine) -> None:
    """Bring quiz's tables up to date in `engine`'s database (checked once per engine and process)."""
    migrate_app_tables(engine, QUIZ_TABLES)
