"""What front ends show of a test (`SessionView`, `ItemView`, `Feedback`, `Point`, `Reviewed`, `AnswerResult`),
made from the stored rows by `_view`: never an item's key before its answer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from ._cat import CatRules, se_target_of
from ._grading import truth
from ._test_pool import _Item
from ._test_profile import PRIOR_SD, ProfileForm

__all__ = ["AnswerResult", "Feedback", "ItemView", "Point", "Reviewed", "SessionView"]

# ---- what front ends show ---------------------------------------------------------------------------------------


class ItemView(BaseModel):
    """An item as the person sees it: never its key."""

    position: int
    question_id: str
    item_type: Literal["multiple_choice", "true_false", "short_answer"]
    stem: str
    choices: list[str] | None = None
    category: str
    topic: str = ""
    difficulty: int


def item_view(item: _Item, position: int) -> ItemView:
    """Item `item` as shown at `position`: its stem and choices, never its key."""
    return ItemView(
        position=position,
        question_id=item.id,
        item_type=item.item_type,  # type: ignore[arg-type]
        stem=item.stem,
        choices=item.choices,
        category=item.category,
        topic=item.topic,
        difficulty=item.difficulty,
    )


class Feedback(BaseModel):
    """What an answer earned: its score (0-100) and correctness, the right answer, the item's explanation (and the
    short-answer grader's own words), and the estimate after it."""

    position: int
    question_id: str
    answer: str
    score: float
    is_correct: bool
    correct_answer: str | None = None
    correct_keywords: list[str] | None = None
    explanation: str | None = None
    grader_explanation: str | None = None
    grader_feedback: str | None = None
    graded_by: Literal["code", "model", "fallback"]
    theta: float
    se: float


class Point(BaseModel):
    """The estimate after `position` answers (0: the prior, before any)."""

    position: int
    theta: float
    se: float
    is_correct: bool | None = None


class Reviewed(BaseModel):
    """An answered item, its feedback, and whether its parameters were level-derived when the test used them."""

    item: ItemView
    feedback: Feedback
    level_derived: bool = False


class SessionView(BaseModel):
    """A test as its person sees it. In progress: `item` is the one to answer now (item `item.position` of at most
    `max_items`). Finished: the stop reason, the estimate with its SE, and `review`, every item with its feedback.
    `level_derived_items` / `calibrated_items`: how many of the items given so far had parameters derived from their
    1-10 level (a = 1 assumed) or estimated from responses; `se_target` is the SE the test stops at, the larger
    level-derived target once it gave a level-derived item (`_cat.se_target_of`)."""

    id: str
    status: Literal["in_progress", "finished", "abandoned"]
    lang: str
    profile: ProfileForm
    answered: int
    min_items: int
    max_items: int
    se_target: float
    level_derived_items: int = 0
    calibrated_items: int = 0
    theta: float
    se: float
    item: ItemView | None = None
    last: Feedback | None = None
    stop_reason: Literal["se_target", "max_items", "bank_exhausted"] | None = None
    trajectory: list[Point]
    review: list[Reviewed] | None = None
    started_at: str
    finished_at: str | None = None


class AnswerResult(BaseModel):
    """The answer's feedback and the test after it. `repeated`: this answer had been recorded already (a retry):
    nothing was counted again."""

    feedback: Feedback
    session: SessionView
    repeated: bool = False


def _feedback(row: Mapping[str, Any], item: _Item) -> Feedback:
    grader = json.loads(row["grader"] or "{}")
    return Feedback(
        position=row["position"],
        question_id=row["question_id"],
        answer=row["answer"],
        score=row["score"],
        is_correct=bool(row["is_correct"]),
        correct_answer=truth(item.key) if item.item_type == "true_false" else item.key,
        correct_keywords=item.keywords,
        explanation=item.explanation,
        grader_explanation=grader.get("explanation"),
        grader_feedback=grader.get("feedback"),
        graded_by=row["graded_by"],
        theta=row["theta"],
        se=row["se"],
    )


def _view(
    session: Mapping[str, Any],
    rows: list[Mapping[str, Any]],
    questions: Mapping[str, _Item],
    derived: Mapping[int, bool],
) -> SessionView:
    rules = json.loads(session["rules"])
    level_derived = sum(derived.values())
    answered = [r for r in rows if r["answer"] is not None]
    feedback = [_feedback(r, questions[r["question_id"]]) for r in answered]
    shown = next((r for r in rows if r["answer"] is None), None) if session["status"] == "in_progress" else None
    trajectory = [Point(position=0, theta=session["prior_mean"], se=PRIOR_SD)] + [
        Point(position=f.position, theta=f.theta, se=f.se, is_correct=f.is_correct) for f in feedback
    ]
    finished = session["status"] == "finished"
    return SessionView(
        id=session["id"],
        status=session["status"],
        lang=session["lang"],
        profile=ProfileForm.model_validate_json(session["profile"]),
        answered=len(answered),
        min_items=rules["min_items"],
        max_items=rules["max_items"],
        se_target=se_target_of(CatRules(**rules), level_derived=level_derived > 0),
        level_derived_items=level_derived,
        calibrated_items=len(derived) - level_derived,
        theta=session["theta"],
        se=session["se"],
        item=item_view(questions[shown["question_id"]], shown["position"]) if shown is not None else None,
        last=feedback[-1] if feedback else None,
        stop_reason=session["stop_reason"],
        trajectory=trajectory,
        review=[
            Reviewed(
                item=item_view(questions[f.question_id], f.position),
                feedback=f,
                level_derived=derived.get(f.position, False),
            )
            for f in feedback
        ]
        if finished
        else None,
        started_at=session["created_at"],
        finished_at=session["finished_at"],
    )
