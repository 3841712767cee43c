"""The model's judgments for tools 4 and 6, each one small structured answer (a pydantic type the model fills).

`ModelJudge(model)` takes any pydantic-ai Model (the embedded one, an endpoint, the scripted test double). Each method
is one bounded request: a short fixed instruction (the same prefix every time, so the local model's prefix cache
serves it), the item in the prompt, a typed answer back. Whatever goes wrong (timeout, a model error, an answer that
never fits its type) is `JudgeUnavailable`: the tools turn it into the seed's fallbacks. Scores the model gives are
ratings; the arithmetic (averages, caps, thresholds) is done by the callers in code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field
from pydantic_ai.models import Model

from ...runtime import current_tool_call, typed_answer

__all__ = ["AnswerGrade", "Explanation", "ItemJudgment", "JudgeUnavailable", "ModelJudge"]

Short = Annotated[str, Field(max_length=160)]
Rating = Annotated[int, Field(ge=1, le=5)]


class ItemJudgment(BaseModel):
    """The model's reading of an item, 1 (poor) to 5 (excellent) per criterion, and why."""

    clarity: Rating = Field(description="Is the stem clear, unambiguous, one question?")
    answer_correct: Rating = Field(description="Is the keyed answer right, and the only right one?")
    distractors: Rating = Field(description="Are the wrong options plausible yet clearly wrong? 5 if there are none.")
    fairness: Rating = Field(description="Free of tricks, bias and outside knowledge it does not test?")
    reasons: list[Short] = Field(default_factory=list, max_length=3, description="Main problems, short; empty if none.")

    @property
    def score(self) -> float:
        """The semantic score 0-1: the mean rating mapped from 1..5 (distractors only count for multiple choice)."""
        return self.score_for(with_distractors=True)

    def score_for(self, *, with_distractors: bool) -> float:
        ratings = [self.clarity, self.answer_correct, self.fairness] + ([self.distractors] if with_distractors else [])
        return round(sum((r - 1) / 4 for r in ratings) / len(ratings), 4)


class AnswerGrade(BaseModel):
    """The model's grade of a short answer, 0-100, and what it lacks."""

    score: int = Field(ge=0, le=100, description="0 wrong or off-topic, 50 partly right, 100 fully right")
    reasoning: str = Field(max_length=300, description="One or two sentences: why this score.")
    missing: list[Annotated[str, Field(max_length=60)]] = Field(default_factory=list, max_length=3, description="Key ideas the answer lacks.")


class Explanation(BaseModel):
    """The model's explanation of an item's answer for the learner."""

    explanation: str = Field(min_length=1, max_length=900, description="Why the right answer is right and the learner's answer is or is not.")
    key_points: list[Short] = Field(default_factory=list, max_length=4, description="Facts to remember.")


class JudgeUnavailable(Exception):
    """The model gave no usable judgment (timeout, error, an answer that never fit): use the seed's fallback."""


_ITEM_INSTRUCTIONS = (
    "You review test items. Rate the item 1-5 on each criterion: clarity (clear, one question), answer_correct (the "
    "keyed answer is right and the only right one), distractors (wrong options plausible but wrong; 5 if none), "
    "fairness (no tricks or bias). In reasons, name the main problems briefly, in the item's language; leave it empty "
    "if the item is good. Judge only the item given."
)
_GRADE_INSTRUCTIONS = (
    "You grade a learner's short answer against the expected ideas. Score 0-100: 100 all expected ideas stated "
    "correctly, 70-80 mostly right with a gap, 40-60 partly right, 0-30 wrong, empty or off-topic. Meaning counts, "
    "not wording; a wrong statement lowers the score. Give a short reasoning and the missing ideas, in the answer's "
    "language."
)
_EXPLAIN_INSTRUCTIONS = (
    "You explain a test item's answer to a learner, in the language asked. In 3-5 sentences: say why the correct "
    "answer is correct, and what the learner's answer got right or wrong. Add up to 4 key points to remember. Use only "
    "facts about the item's subject; do not invent links or sources."
)

T = TypeVar("T", bound=BaseModel)


def _language(lang: str) -> str:
    return "Chinese (简体中文)" if lang.lower().startswith("zh") else "English"


class ModelJudge:
    """The model's structured judgments, each bounded by `timeout` seconds and `retries` re-asks of a misfit answer."""

    def __init__(self, model: Model, *, timeout: float = 60.0, retries: int = 1) -> None:
        self.model = model
        self.timeout = timeout
        self.retries = retries

    async def judge_item(
        self, *, stem: str, question_type: str, choices: Sequence[str] | None, correct_answer: str | None, lang: str = "en"
    ) -> ItemJudgment:
        """Tool 4's semantic stage: the model's ratings of one item."""
        item: dict[str, Any] = {"type": question_type, "stem": stem}
        if choices:
            item["choices"] = list(choices)
        if correct_answer:
            item["correct_answer"] = correct_answer
        prompt = f"Item ({_language(lang)}):\n{json.dumps(item, ensure_ascii=False)}"
        return await self._ask(_ITEM_INSTRUCTIONS, prompt, ItemJudgment)

    async def grade_answer(
        self,
        *,
        user_answer: str,
        expected: Sequence[str],
        stem: str | None = None,
        reference_answer: str | None = None,
        difficulty: int | None = None,
        lang: str = "en",
    ) -> AnswerGrade:
        """Tool 6's short-answer stage: the model's 0-100 grade of `user_answer` against the expected ideas."""
        parts = []
        if stem:
            parts.append(f"Question: {stem}")
        if reference_answer:
            parts.append(f"Reference answer: {reference_answer}")
        if expected:
            parts.append("Expected ideas: " + "; ".join(expected))
        if difficulty is not None:
            parts.append(f"Difficulty: {difficulty}/10")
        parts.append(f"Learner's answer: {user_answer}")
        return await self._ask(_GRADE_INSTRUCTIONS, "\n".join(parts), AnswerGrade)

    async def explain(
        self,
        *,
        question_type: str,
        user_answer: str,
        is_correct: bool,
        stem: str | None = None,
        correct_answer: str | None = None,
        expected: Sequence[str] = (),
        lang: str = "en",
    ) -> Explanation:
        """Tool 6's explanation: the model's prose (code completes it and adds the references)."""
        parts = [f"Write in {_language(lang)}.", f"Item type: {question_type}"]
        if stem:
            parts.append(f"Question: {stem}")
        if correct_answer:
            parts.append(f"Correct answer: {correct_answer}")
        if expected:
            parts.append("Expected ideas: " + "; ".join(expected))
        parts.append(f"Learner's answer: {user_answer} ({'correct' if is_correct else 'not correct'})")
        return await self._ask(_EXPLAIN_INSTRUCTIONS, "\n".join(parts), Explanation)

    async def _ask(self, instructions: str, prompt: str, output_type: type[T]) -> T:
        try:
            answer = await asyncio.wait_for(
                typed_answer(
                    model=self.model, instructions=instructions, prompt=prompt, output_type=output_type,
                    retries=self.retries, within=current_tool_call(),
                ),
                timeout=self.timeout,
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError as error:
            raise JudgeUnavailable(f"the model did not answer within {self.timeout:g} s") from error
        except Exception as error:  # a model or transport error of any kind: the caller's fallback applies
            raise JudgeUnavailable(f"{type(error).__name__}: {error}") from error
        return answer.output  # type: ignore[return-value]
