"""People's self-assessment profiles (seed tool 1's data): the seed's fields, kept in a `StateBook` by profile id
(`quiz_people`)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy.engine import Engine

from ...runtime import StateBook
from ._db import people

__all__ = [
    "DEFAULT_PROFILE",
    "SELF_LEVELS",
    "Profile",
    "ProfileState",
    "check_user_id",
    "level_difficulty",
    "load_profile",
    "profile_book",
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


class ProfileState(BaseModel):
    """What quiz keeps of a person, whole, in their entry of the profile book (`profile_book`): the profile as they
    set it up (the seed's fields), the score of their last test, the language they take tests in."""

    model_config = ConfigDict(extra="ignore")  # a field a later version added does not make the state unreadable

    self_level: Literal["beginner", "intermediate", "advanced", "expert"] = "beginner"
    years_experience: int = Field(0, ge=0, le=60)
    job_role: str = Field("Unknown", min_length=1, max_length=100)
    duty: str = Field("Not specified", min_length=1, max_length=500)
    interests: list[str] = Field(default_factory=list, max_length=10)
    previous_score: float = Field(0, ge=0, le=100)
    lang: Literal["en", "zh-CN"] = "en"

    @field_validator("interests")
    @classmethod
    def _interests(cls, values: list[str]) -> list[str]:
        cleaned = [v.strip() for v in values]
        if any(not 1 <= len(v) <= 50 for v in cleaned):
            raise ValueError("each interest must be 1-50 characters")
        return cleaned


class Profile(ProfileState):
    """A person's profile as tool 1 reads it: their profile id (`user_id`, a UUID) and their `ProfileState`."""

    model_config = ConfigDict(extra="forbid")

    user_id: str

    @field_validator("user_id")
    @classmethod
    def _uuid(cls, value: str) -> str:
        return check_user_id(value)

    def state(self) -> ProfileState:
        """The profile without its id: what the book keeps under it."""
        return ProfileState.model_validate(self.model_dump(exclude={"user_id"}))

    def tool_result(self) -> dict[str, Any]:
        """Tool 1's answer: the seed's fields."""
        return {"user_id": self.user_id, **self.model_dump(exclude={"user_id", "lang"})}


def profile_book(engine: Engine) -> StateBook[ProfileState]:
    """People's profiles in `engine`'s database (the store's), one `ProfileState` per profile id."""
    return StateBook(engine, people, ProfileState)


def save_profile(engine: Engine, profile: Profile) -> Profile:
    """Create or replace `profile` (one statement)."""
    profile_book(engine).save(profile.user_id, profile.state())
    return profile


def load_profile(engine: Engine, user_id: str) -> Profile | None:
    """The stored profile of `user_id`, or None: none stored, or none this version can read (database errors
    propagate: tool 1's policies handle them)."""
    user_id = user_id.lower()
    state = profile_book(engine).find(user_id)
    return None if state is None else Profile(user_id=user_id, **state.model_dump())
