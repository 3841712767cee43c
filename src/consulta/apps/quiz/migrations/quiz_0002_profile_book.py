"""People's profiles move from a table of columns (`quiz_profiles`) to a state book (`quiz_people`: the profile id,
the profile as JSON, when it was written). Each stored profile is carried over whole; `quiz_profiles` is dropped.
A `quiz_people` already there (made by an earlier version without this migration) is kept, with the states it holds.

Revision ID: quiz_0002
Revises: quiz_0001
Create Date: 2026-11-27
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "quiz_0002"
down_revision = "quiz_0001"
branch_labels = None
depends_on = None

_FIELDS = ("self_level", "years_experience", "job_role", "duty", "interests", "previous_score", "lang")
"""A profile's fields, in the order the state is written (those of `_profiles.ProfileState` when this was written)."""

_profiles = sa.table(
    "quiz_profiles",
    sa.column("user_id", sa.String),
    *(sa.column(name) for name in _FIELDS),
    sa.column("updated_at", sa.String),
)
_people = sa.table(
    "quiz_people", sa.column("principal", sa.String), sa.column("state", sa.Text), sa.column("updated_at", sa.String)
)


def _interests(stored: Any) -> list[Any]:
    """The interests a row kept as a JSON list (anything else: none, as the profile would read it)."""
    try:
        values = json.loads(stored or "[]")
    except ValueError:
        return []
    return values if isinstance(values, list) else []


def upgrade() -> None:
    conn = op.get_bind()
    present = set(sa.inspect(conn).get_table_names())
    if "quiz_people" not in present:
        op.create_table(
            "quiz_people",
            sa.Column("principal", sa.String(length=36), nullable=False),
            sa.Column("state", sa.Text(), nullable=False),
            sa.Column("updated_at", sa.String(length=32), nullable=False),
            sa.PrimaryKeyConstraint("principal"),
        )
    if "quiz_profiles" not in present:
        return
    kept = set(conn.execute(sa.select(_people.c.principal)).scalars())
    rows = [row for row in conn.execute(sa.select(_profiles)).mappings() if row["user_id"] not in kept]
    states = [
        {
            "principal": row["user_id"],
            "state": json.dumps(
                {
                    **{name: row[name] for name in _FIELDS},
                    "interests": _interests(row["interests"]),
                    "previous_score": row["previous_score"] or 0.0,
                    "lang": row["lang"] or "en",
                },
                ensure_ascii=False,
                separators=(",", ":"),
            ),
            "updated_at": row["updated_at"],
        }
        for row in rows
    ]
    if states:
        conn.execute(_people.insert(), states)
    op.drop_table("quiz_profiles")


def downgrade() -> None:
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
    conn = op.get_bind()
    rows = []
    for person in conn.execute(sa.select(_people)).mappings():
        state = json.loads(person["state"])
        rows.append(
            {
                "user_id": person["principal"],
                **{name: state.get(name) for name in _FIELDS},
                "interests": json.dumps(state.get("interests", []), ensure_ascii=False),
                "updated_at": person["updated_at"],
            }
        )
    if rows:
        conn.execute(_profiles.insert(), rows)
    op.drop_table("quiz_people")
