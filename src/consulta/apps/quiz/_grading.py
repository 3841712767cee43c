"""Grading a test's answers: multiple choice and true/false in code (`score_exact`, `truth`), short answers by a
`ShortAnswerScorer` (the model through seed tool 6 `score_and_explain`: `model_short_answers`), with the seed's
fallback (`FALLBACK`) when the grader fails."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["FALLBACK", "Scored", "ShortAnswer", "ShortAnswerScorer", "model_short_answers", "score_exact", "truth"]

log = logging.getLogger("consulta.quiz")


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A score (0-100) and whether the answer is correct; a grader's explanation and feedback if it gave them."""

    score: float
    is_correct: bool
    graded_by: Literal["code", "model", "fallback"]
    explanation: str | None = None
    feedback: str | None = None


@dataclass(frozen=True, kw_only=True)
class ShortAnswer:
    """A short answer to grade: seed tool 6's inputs."""

    session_id: str
    user_id: str
    question_id: str
    answer: str
    keywords: list[str]
    difficulty: int
    category: str
    lang: str
    stem: str = ""
    topic: str = ""
    explanation: str | None = None


ShortAnswerScorer = Callable[[ShortAnswer], Awaitable[Scored]]
"""Grades a short answer (the model through seed tool 6, in production)."""

FALLBACK = Scored(score=50.0, is_correct=False, graded_by="fallback")
"""Seed tool 6's fallback when the grader fails: score=50, is_correct=False."""


def model_short_answers(model: Callable[[], Any], *, timeout_s: float = 15.0) -> ShortAnswerScorer:
    """Short answers graded by the model `model()` makes (made once, at the first short answer, outside the time
    limit: loading the embedded model takes a while) through seed tool 6 (`score_and_explain` with a `ModelJudge`),
    within the seed's 15 s (its `budget`, which bounds every model request of the grade); the seed's fallback when it
    fails. Only the grade waits for the model: the explanation is code's (the item's own explanation, the expected
    ideas found and missing, the references), so an answer is graded in the seconds one label read takes."""
    made: list[Any] = []

    async def grade(request: ShortAnswer) -> Scored:
        try:
            from ._judge import ModelJudge
            from ._score import score_and_explain

            if not made:
                made.append(await asyncio.to_thread(model))
            result = await score_and_explain(
                request.session_id,
                request.user_id,
                request.question_id,
                "short_answer",
                request.answer,
                correct_keywords=request.keywords,
                difficulty=request.difficulty,
                category=request.category,
                judge=ModelJudge(made[0]),
                stem=request.stem or None,
                explanation=request.explanation,
                topic=request.topic or None,
                lang=request.lang,
                budget=timeout_s,  # each model request gets what is left of it (`typed_answer`'s own timeout)
                model_explains=False,  # the person waits for the grade; the item's explanation is shown
            )
        except Exception as error:  # noqa: BLE001 - any failure of the grader is the seed's fallback
            log.warning(
                "Short answer of %s not graded (%s): the seed's fallback.", request.question_id, type(error).__name__
            )
            return FALLBACK
        return _scored(result)

    return grade


def _scored(result: Any) -> Scored:
    """Tool 6's result (a mapping or a model) as a Scored."""
    get = result.get if isinstance(result, Mapping) else lambda name, default=None: getattr(result, name, default)
    score = float(get("score", 50.0))
    fell_back = bool(get("fallback", False))
    return Scored(
        score=max(0.0, min(100.0, score)),
        is_correct=bool(get("is_correct", False)),
        graded_by="fallback" if fell_back else "model",
        explanation=get("explanation") or None,
        feedback=get("feedback") or None,
    )


_TRUTH = {
    **dict.fromkeys(("true", "t", "yes", "正确", "对", "是"), "true"),
    **dict.fromkeys(("false", "f", "no", "错误", "错", "否"), "false"),
}
"""How true/false keys and answers may be written (a bank may key them in either language): each read as true or false."""


def truth(value: str | None) -> str | None:
    """`true` or `false` for a way of writing one (`True`, `正确` …), else None."""
    return _TRUTH.get(value.strip().casefold()) if value is not None else None


def score_exact(item_type: str, key: str | None, answer: str) -> Scored:
    """Multiple choice and true/false: exact, case-insensitive, trimmed — 100 or 0 (true/false as `truth` reads them)."""
    if item_type == "true_false":
        right = truth(key) is not None and truth(answer) == truth(key)
    else:
        right = key is not None and answer.strip().casefold() == key.strip().casefold()
    return Scored(score=100.0 if right else 0.0, is_correct=right, graded_by="code")
