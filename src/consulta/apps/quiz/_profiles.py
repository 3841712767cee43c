"""People's self-assessment profiles (seed tool 1's data): the seed's fields, kept in `quiz_profiles`."""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import select
from sqlalchemy.engine import Engine

from ...runtime import upsert, utcnow
from ._db import profiles

__all__ = [
    "DEFAULT_PROFILE",
    "SELF_LEVELS",
    "Profile",
    "check_user_id",
    "level_difficulty",
    "load_profile",
    "save_profile",
]

SELF_LEVELS = ("beginner", "intermediate", "advanced", "expert")

DEFAULT_PROFILE: dict[str, Any] = {
    "self_level": "beginner",
    "years_experience": 0,
    "job_role": "Unknown",
    "duty": "Not specified",
    "interests": [],
    "previous_score": 0,
}
"""The seed's fallback profile, verbatim (tool 1's answer when the database cannot give one)."""

_LEVEL_DIFFICULTY = {"beginner": 3, "intermediate": 5, "advanced": 7, "expert": 9}


def level_difficulty(self_level: str) -> int:
    """The 1-10 difficulty a self-assessed level starts at (beginner 3 … expert 9)."""
    return _LEVEL_DIFFICULTY.get(self_level, 5)


def check_user_id(user_id: Any) -> str:
    """The seed's user_id check: a string (TypeError otherwise) in UUID form (ValueError otherwise)."""
    if not isinstance(user_id, str):
        raise TypeError(f"user_id must be a string, got {type(user_id).__name__}")
    if not user_id.strip():
        raise ValueError("user_id cannot be empty")
    try:
        uuid.UUID(user_id)
    except ValueError:
        raise ValueError(
            f"user_id must be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got {user_id[:40]!r}"
        ) from None
    if len(user_id) != 36:
        raise ValueError(f"user_id must be a UUID in its 36-character form, got {user_id[:40]!r}")
    return user_id.lower()


class Profile(BaseModel):
    """A person's profile as they set it up (the seed's fields, plus the language they take tests in)."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    self_level: Literal["beginner", "intermediate", "advanced", "expert"] = "beginner"
    years_experience: int = Field(0, ge=0, le=60)
    job_role: str = Field("Unknown", min_length=1, max_length=100)
    duty: str = Field("Not specified", min_length=1, max_length=500)
    interests: list[str] = Field(default_factory=list, max_length=10)
    previous_score: float = Field(0, ge=0, le=100)
    lang: Literal["en", "zh-CN"] = "en"

    @field_validator("user_id")
    @classmethod
    def _uuid(cls, value: str) -> str:
        return check_user_id(value)

    @field_validator("interests")
    @classmethod
    def _interests(cls, values: list[str]) -> list[str]:
        cleaned = [v.strip() for v in values]
        if any(not 1 <= len(v) <= 50 for v in cleaned):
            raise ValueError("each interest must be 1-50 characters")
        return cleaned

    def tool_result(self) -> dict[str, Any]:
        """Tool 1's answer: the seed's fields."""
        return self.model_dump(exclude={"lang"})


def save_profile(engine: Engine, profile: Profile) -> Profile:
    """Create or replace `profile` (one statement)."""
    row = {
        **profile.model_dump(),
        "interests": json.dumps(profile.interests, ensure_ascii=False),
        "updated_at": utcnow(),
    }
    with engine.begin() as conn:
        conn.execute(upsert(conn, profiles, key=["user_id"], set_=[k for k in row if k != "user_id"]).values(**row))
    return profile


def load_profile(engine: Engine, user_id: str) -> Profile | None:
    """The stored profile of `user_id`, or None (database errors propagate: tool 1's policies handle them)."""
    with engine.connect() as conn:
        row = conn.execute(select(profiles).where(profiles.c.user_id == user_id.lower())).mappings().first()
    if row is None:
        return None
    return Profile(
        user_id=row["user_id"],
        self_level=row["self_level"],
        years_experience=row["years_experience"],
        job_role=row["job_role"],
        duty=row["duty"],
        interests=json.loads(row["interests"] or "[]"),
        previous_score=row["previous_score"] or 0,
        lang=row["lang"] or "en",
    )
