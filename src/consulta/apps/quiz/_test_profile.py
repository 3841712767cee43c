"""The profile a person gives to start a test (`ProfileForm`, `parse_profile`), the prior it sets (`prior_mean`,
`PRIOR_SD`) and the person's profile id (`user_id_of`)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from ._irt import level_to_b
from ._profiles import SELF_LEVELS, level_difficulty
from ._test_errors import _Invalid, _Words

__all__ = ["PRIOR_SD", "ProfileForm", "parse_profile", "prior_mean", "user_id_of"]

PRIOR_SD = 1.0
_USERS = uuid.UUID("6f1d3c3e-2a51-4f5e-9a53-8c1b0f7f2d11")
"""The namespace of the profile ids made from principals (`user_id_of`)."""


# ---- the profile --------------------------------------------------------------------------------------------------

_NOT_BLANK = r"[^\s\x1c-\x1f]"  # a character str.strip() keeps (it strips \x1c-\x1f, which the schema's \S would allow)
"""Some text besides spaces (a JSON schema `pattern`, so the API's docs say it too)."""
Interest = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=_NOT_BLANK)]


class ProfileForm(BaseModel):
    """The profile a person gives to start a test: the seed's fields (tool 1) — their own level, years of
    experience, job role, duty and interests — each required and within the seed's bounds (kept as the person's
    `_profiles.ProfileState`, read by tool 1 as `_profiles.Profile`). Text is kept without its surrounding spaces."""

    model_config = ConfigDict(extra="forbid", strict=True)  # "3" is not a number of years

    self_level: Literal["beginner", "intermediate", "advanced", "expert"]
    years_experience: int = Field(ge=0, le=60)
    job_role: str = Field(min_length=1, max_length=100, pattern=_NOT_BLANK)
    duty: str = Field(min_length=1, max_length=500, pattern=_NOT_BLANK)
    interests: list[Interest] = Field(min_length=1, max_length=10)

    @field_validator("job_role", "duty")
    @classmethod
    def _trimmed(cls, text: str) -> str:
        return _not_blank(text)

    @field_validator("interests")
    @classmethod
    def _each_trimmed(cls, interests: list[str]) -> list[str]:
        return [_not_blank(text) for text in interests]


def _not_blank(text: str) -> str:
    """`text` without its surrounding spaces; a text that is nothing else is too short (a stored profile must read back)."""
    trimmed = text.strip()
    if not trimmed:
        raise PydanticCustomError("string_too_short", "String should have at least 1 character that is not a space")
    return trimmed


_PROFILE_PROBLEMS = {
    "missing": "missing",
    "string_too_short": "empty",
    "string_pattern_mismatch": "empty",
    "too_short": "empty",
    "string_too_long": "too_long",
    "too_long": "too_many",
    "greater_than_equal": "range",
    "less_than_equal": "range",
    "int_parsing": "number",
    "int_type": "number",
    "int_from_float": "number",
    "string_type": "text",
    "list_type": "list",
    "literal_error": "level",
    "extra_forbidden": "unknown",
}
_LIMITS = {"job_role": 100, "duty": 500, "interests": 10, "years_experience": 60}


def parse_profile(values: Any) -> ProfileForm:
    """`values` as a ProfileForm, or `invalid_profile` naming the first field at fault and why, in the reader's words."""
    try:
        return ProfileForm.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        loc = [str(x) for x in first.get("loc", ())]
        field = loc[0] if loc else "profile"
        kind = _PROFILE_PROBLEMS.get(str(first.get("type")), "invalid")
        if field == "interests" and len(loc) > 1 and kind in ("empty", "too_long"):
            kind = "interest_" + kind
        limit = 50 if kind.startswith("interest_") else _LIMITS.get(field, 0)
        why = _Words(f"profile.bad.{kind}", {"limit": limit, "levels": " / ".join(SELF_LEVELS)})
        raise _Invalid(
            "invalid_profile",
            f"The profile's {field} is not valid: {first.get('msg')}.",
            field=".".join(["profile", *loc]),
            name=_Words(
                f"profile.{field}" if field in ProfileForm.model_fields else "profile.unknown_field", {"field": field}
            ),
            why=why,
        ) from None


def prior_mean(self_level: str) -> float:
    """The prior's mean of θ for a person's own level: the b of the difficulty that level starts at (tool 1's
    `level_difficulty`), so the first item is near what they say they can do."""
    return level_to_b(level_difficulty(self_level))


def user_id_of(principal: str) -> str:
    """The profile id (a UUID, seed tool 1) of a principal: the same person, the same profile."""
    return str(uuid.uuid5(_USERS, principal))
