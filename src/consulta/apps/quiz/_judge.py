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
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field
from pydantic_ai.models import Model

from ...i18n import language_name, t
from ...runtime import LabelReader, StateReader, current_tool_call, label_probabilities, last_state, typed_answer
from ._probe import GradingProbe, prompt_key, shipped_probe

__all__ = [
    "IDEAS_READING",
    "PROBE_READING",
    "VERDICT_PROMPT_KEY",
    "VERDICT_READINGS",
    "YES_NO_READINGS",
    "verdict_prompt",
    "AnswerGrade",
    "Budget",
    "Explanation",
    "ItemJudgment",
    "JudgeUnavailable",
    "ModelJudge",
]

Short = Annotated[str, Field(max_length=100)]  # short outputs: a small local model writes ~9 tokens/s
Rating = Literal[1, 2, 3, 4, 5]  # an enum, not ge/le: the local model's grammar enforces enums, not integer bounds


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
    reasoning: str = Field(max_length=200, description="One or two sentences: why this score.")
    missing: list[Annotated[str, Field(max_length=40)]] = Field(
        default_factory=list, max_length=3, description="Key ideas the answer lacks."
    )


class Explanation(BaseModel):
    """The model's explanation of an item's answer for the learner."""

    explanation: str = Field(
        min_length=1, max_length=600, description="Why the right answer is right and the learner's answer is or is not."
    )
    key_points: list[Short] = Field(default_factory=list, max_length=4, description="Facts to remember.")


class Budget:
    """What is left of a call's time budget in seconds, for the next model request (None: no budget was given, each
    request has the judge's own timeout). With `reserve`, less than that left counts as none."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = None if seconds is None else time.monotonic() + seconds

    def __call__(self, *, reserve: float = 0.0) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        return left if left >= max(reserve, 0.0) and left > 0 else 0.0


class JudgeUnavailable(Exception):
    """The model gave no usable judgment: use the seed's fallback. `kind` says why in a word a person's catalog words
    (`timeout`, `no_time`, `error`); the message has the detail for logs."""

    def __init__(self, kind: Literal["timeout", "no_time", "error"], detail: str) -> None:
        super().__init__(detail)
        self.kind = kind

    def reason(self, lang: str) -> str:
        """Why, in `lang`, one short phrase."""
        return t(f"quiz.judge.unavailable.{self.kind}", lang)


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
_VERDICT_INSTRUCTIONS = (
    "You are a teacher marking a student's short answer to a question. Compare its meaning with the reference answer "
    "and the expected ideas: wording, spelling and synonyms do not matter; a wrong statement does. Reply to the "
    "question asked at the end with one word."
)
# The two readings of a verdict: the same prompt up to the student's answer (the KV cache serves it to the second
# reading and, for the item's part, to the next answer), then what is asked.
_ASK_LABEL = "Your verdict: correct (it says what the reference says), partial (part of it), or incorrect?"
YES_NO_READINGS: dict[str, str] = {
    # The yes/no questions a verdict may read after its labels, by the name a calibration's weight gives them. Each is
    # one more forward pass over the last line only; the calibration says which ones it uses.
    "same": "Does the student's answer say what the reference answer says? yes or no?",
    "right": "Is the student's answer correct? yes or no?",
    "false": "Does the student's answer state something false, or the opposite of the reference answer? yes or no?",
    "gist": "Does the student's answer give the main idea of the reference answer, maybe in other words? yes or no?",
    "answers": "Does the student's answer answer the question that was asked? yes or no?",
    "marks": "Would a teacher give the student's answer full marks? yes or no?",
}
IDEAS_READING = "ideas"
"""The reading of each idea of the reference answer (`_short_answer.ideas_of`) on its own: "does the student's answer
say this: «idea»?", one forward pass per idea over a prompt of its own (the question and the answer, no expected
ideas); its probability is the least P(yes) of the ideas (every idea must be said)."""
PROBE_READING = "probe"
"""The grading probe's P(correct) (`_probe.GradingProbe`): a fitted read-out of the model's hidden state at the end of
the labels' prompt, one token more than the labels; read only for the model and prompt it was fitted on."""
VERDICT_PROMPT_KEY = prompt_key(_VERDICT_INSTRUCTIONS, _ASK_LABEL)
"""The key of the verdict's fixed prompt parts a probe records (`GradingProbe.prompt`)."""
VERDICT_READINGS = (*YES_NO_READINGS, IDEAS_READING, PROBE_READING)
"""Every reading a verdict may add to its labels, by name."""
_IDEAS_INSTRUCTIONS = (
    "You are a teacher marking a student's short answer. Judge meaning, not wording: synonyms, spelling and other "
    "words for the same thing do not matter. Reply to the question at the end with one word: yes or no."
)
_YES_NO = ("yes", "no", "Yes", "No")  # both spellings: the reply's first token may be either
_BLIND_INSTRUCTIONS = (
    "You take a test. Read the question and the options and reply with the answer only: the letter of the right option, "
    "or true or false for a true/false statement."
)
_REVIEW_INSTRUCTIONS = (
    "You review a test item written for learners. Reply to the question asked at the end with one word: yes or no."
)
ITEM_READINGS: dict[str, str] = {
    # Tool 4's ratings as the model's probability of "yes" (one forward pass each over the same item prefix).
    "clarity": "Is the question clear, asking exactly one thing? yes or no?",
    "answer_correct": "Is the key the right answer, and the only right one? yes or no?",
    "distractors": "Are the other options wrong, yet plausible to a learner who does not know? yes or no?",
    "fairness": "Is the item fair: no trick, no bias, nothing it does not test? yes or no?",
}
_DOUBTS = {
    "clarity": "the question may be unclear or ask more than one thing",
    "answer_correct": "the key may be wrong, or not the only right answer",
    "distractors": "the wrong options may be implausible or not clearly wrong",
    "fairness": "the item may be unfair or a trick",
}
_TOPIC_INSTRUCTIONS = "You sort test questions by topic. Reply to the question asked at the end with yes or no."
_REWRITE_INSTRUCTIONS = (
    "You revise test questions. You get the task, a draft question and the one problem found in it. Write the "
    "question again with that problem fixed: on the task's topic, in the task's language, one clear question with "
    "exactly one right answer; keep what was right. Write a new question of your own, not a copy."
)
_EXPLAIN_INSTRUCTIONS = (
    "You explain a test item's answer to a learner, in the language asked. In 3-5 sentences: say why the correct "
    "answer is correct, and what the learner's answer got right or wrong. Add up to 4 key points to remember. Use only "
    "facts about the item's subject; do not invent links or sources."
)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


def _yes(said: dict[str, float]) -> float:
    """P(yes) of a yes/no reading, both spellings, normalised over the four."""
    return (said["yes"] + said["Yes"]) / (sum(said.values()) or 1.0)


def _lines(*fields: tuple[str, str | Sequence[str] | None]) -> str:
    """The prompt: one `Label: value` line per field that has a value (a list joined with "; ")."""
    return "\n".join(
        f"{label}: {value if isinstance(value, str) else '; '.join(value)}" for label, value in fields if value
    )


def _answer_lines(user_answer: str, *, expected: Sequence[str], stem: str | None, reference_answer: str | None) -> str:
    """The verdict prompts' item and answer: what every answer to the item shares first (the KV cache keeps it)."""
    return _lines(
        ("Question", stem),
        ("Reference answer", reference_answer),
        ("Expected ideas", [k.replace("|", " / ") for k in expected]),
        ("Student's answer", user_answer),
    )


def verdict_prompt(
    *, user_answer: str, expected: Sequence[str], stem: str | None = None, reference_answer: str | None = None
) -> tuple[str, str]:
    """The system instruction and the prompt of a short answer's verdict labels (and of the grading probe's state)."""
    asked = _answer_lines(user_answer, expected=expected, stem=stem, reference_answer=reference_answer)
    return _VERDICT_INSTRUCTIONS, f"{asked}\n{_ASK_LABEL}"


class ModelJudge:
    """The model's structured judgments, each bounded by `timeout` seconds (or a call's shorter `timeout`) and
    `retries` re-asks of a misfit answer."""

    def __init__(
        self, model: Model, *, timeout: float = 60.0, retries: int = 1, probe: GradingProbe | None = None
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.retries = retries
        self.probe = probe if probe is not None else shipped_probe()

    @property
    def reads_probe(self) -> bool:
        """Whether the verdict's `probe` reading applies: the model gives its hidden state and is the one the probe
        was fitted on, after the same prompt."""
        return (
            self.probe is not None
            and isinstance(self.model, StateReader)
            and self.probe.applies_to(model_name=self.model.model_name, prompt=VERDICT_PROMPT_KEY)
        )

    async def judge_item(
        self,
        *,
        stem: str,
        question_type: str,
        choices: Sequence[str] | None,
        correct_answer: str | None,
        lang: str = "en",
        timeout: float | None = None,
    ) -> ItemJudgment:
        """Tool 4's semantic stage: the model's ratings of one item. A model that reads label probabilities gives each
        rating as its probability of "yes" to the criterion's question (`ITEM_READINGS`), mapped to 1-5, one forward
        pass each over the same item (seconds, not a sampled answer); another model answers one typed
        `ItemJudgment`."""
        if isinstance(self.model, LabelReader):
            return await self._read_item(
                stem=stem, question_type=question_type, choices=choices, correct_answer=correct_answer, timeout=timeout
            )
        item: dict[str, Any] = {"type": question_type, "stem": stem}
        if choices:
            item["choices"] = list(choices)
        if correct_answer:
            item["correct_answer"] = correct_answer
        prompt = f"Item ({language_name(lang)}):\n{json.dumps(item, ensure_ascii=False)}"
        return await self._ask(_ITEM_INSTRUCTIONS, prompt, ItemJudgment, timeout)

    async def _read_item(
        self,
        *,
        stem: str,
        question_type: str,
        choices: Sequence[str] | None,
        correct_answer: str | None,
        timeout: float | None,
    ) -> ItemJudgment:
        shown = [f"Question: {stem}"]
        if question_type == "multiple_choice" and choices:
            shown += [f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(choices)]
        elif question_type == "true_false":
            shown[0] = f"Statement (true or false): {stem}"
        key = "Expected answer words" if question_type == "short_answer" else "Key"
        shown.append(f"{key}: {correct_answer or '-'}")
        prompt = "\n".join(shown)
        budget = Budget(self.timeout if timeout is None else min(timeout, self.timeout))
        criteria = [c for c in ITEM_READINGS if c != "distractors" or question_type == "multiple_choice"]
        ratings: dict[str, int] = {}
        doubts: list[str] = []
        for criterion in criteria:
            said = await self._read_labels(
                _REVIEW_INSTRUCTIONS, f"{prompt}\n{ITEM_READINGS[criterion]}", _YES_NO, budget()
            )
            assert said is not None  # a LabelReader gives probabilities
            yes = _yes(said)
            ratings[criterion] = 1 + round(4 * yes)
            if ratings[criterion] <= 2:
                doubts.append(f"The model's review: {_DOUBTS[criterion]} (p(yes) {yes:.2f}).")
        return ItemJudgment.model_validate({"distractors": 5, **ratings, "reasons": doubts[:3]})

    async def grade_answer(
        self,
        *,
        user_answer: str,
        expected: Sequence[str],
        stem: str | None = None,
        reference_answer: str | None = None,
        difficulty: int | None = None,
        lang: str = "en",
        timeout: float | None = None,
    ) -> AnswerGrade:
        """Tool 6's short-answer stage: the model's 0-100 grade of `user_answer` against the expected ideas."""
        prompt = _lines(
            ("Write in", language_name(lang)),
            ("Question", stem),
            ("Reference answer", reference_answer),
            ("Expected ideas", expected),
            ("Difficulty", f"{difficulty}/10" if difficulty is not None else None),
            ("Learner's answer", user_answer),
        )
        return await self._ask(_GRADE_INSTRUCTIONS, prompt, AnswerGrade, timeout)

    async def verdict(
        self,
        *,
        user_answer: str,
        expected: Sequence[str],
        stem: str | None = None,
        reference_answer: str | None = None,
        readings: Sequence[str] = ("same",),
        timeout: float | None = None,
    ) -> dict[str, float]:
        """Tool 6's short-answer stage: the model's probability of each label (`_short_answer.LABELS`) for the answer
        and, under each name of `readings` (`YES_NO_READINGS`), its probability of "yes" to that question (e.g. `same`:
        "does the answer say what the reference says?") — each one forward pass over the same prompt but its last
        line, together within `timeout` (`label_probabilities`, the embedded model). A yes/no reading that fails or
        finds no time left is left out (the calibration does without it). A model that gives no probabilities
        answers one constrained label (probability 1; no yes/no readings). The prompt starts with what every answer
        to the item shares, so the KV cache serves it to the next answer. `IDEAS_READING` (`ideas`) reads each idea
        of the reference answer on its own prompt instead (none without a reference)."""
        from ._short_answer import LABELS, Verdict

        unknown = [name for name in readings if name not in VERDICT_READINGS]
        if unknown:
            raise ValueError(f"Unknown verdict readings {unknown}: use names of VERDICT_READINGS {VERDICT_READINGS}.")
        prompt = _answer_lines(user_answer, expected=expected, stem=stem, reference_answer=reference_answer)
        budget = Budget(self.timeout if timeout is None else min(timeout, self.timeout))
        system, asked = verdict_prompt(
            user_answer=user_answer, expected=expected, stem=stem, reference_answer=reference_answer
        )
        probabilities = await self._read_labels(system, asked, LABELS, timeout)
        if probabilities is None:
            answer = await self._ask(system, asked, Verdict, timeout)
            return {label: float(answer.verdict == label) for label in LABELS}
        for name in dict.fromkeys(readings):
            try:
                if name == PROBE_READING:
                    if self.reads_probe:
                        probabilities[name] = await self._probe_said(asked, budget)
                    continue
                if name == IDEAS_READING:
                    said_each = await self._ideas_said(
                        user_answer, stem=stem, reference=reference_answer, budget=budget
                    )
                    if said_each:
                        probabilities[name] = min(said_each)
                    continue
                said = await self._read_labels(
                    _VERDICT_INSTRUCTIONS, f"{prompt}\n{YES_NO_READINGS[name]}", _YES_NO, budget()
                )
            except JudgeUnavailable:
                break  # no time left for this reading (nor the next), or it failed: the verdict stands without them
            if said is not None:
                probabilities[name] = _yes(said)
        return probabilities

    async def _probe_said(self, asked: str, budget: Budget) -> float:
        """The probe's P(correct) for the hidden state at the end of `asked` (the labels' prompt: in the KV cache,
        so one token is read)."""
        assert self.probe is not None
        state = await self._bounded(
            lambda limit: last_state(model=self.model, system=_VERDICT_INSTRUCTIONS, prompt=asked, timeout=limit),
            budget(),
        )
        if state is None:
            raise JudgeUnavailable("error", "the model gave no hidden state")
        return self.probe.probability(state)

    async def _ideas_said(
        self, user_answer: str, *, stem: str | None, reference: str | None, budget: Budget
    ) -> list[float]:
        """The model's P(yes) that `user_answer` says each idea of `reference` (`IDEAS_READING`); none without a
        reference. The prompt is the same up to the idea asked about: the KV cache serves it to the next idea."""
        from ._short_answer import ideas_of

        shown = _lines(("Question", stem), ("Student's answer", user_answer))
        said_each = []
        for idea in ideas_of(reference or ""):
            ask = f'Does the student\'s answer say this: "{idea}"? yes or no?'
            said = await self._read_labels(_IDEAS_INSTRUCTIONS, f"{shown}\n{ask}", _YES_NO, budget())
            if said is None:
                return []
            said_each.append(_yes(said))
        return said_each

    async def answer_blind(
        self,
        *,
        stem: str,
        question_type: str,
        choices: Sequence[str] | None,
        timeout: float | None = None,
    ) -> dict[str, float] | None:
        """The model's probability of each option being the answer to the item, from the stem and options only (no
        key): a true/false item's `true` / `false` in one forward pass; a multiple-choice item's options by their
        letters, read twice, the second time with the options rotated by half, and averaged per option (a small
        model favours a letter; the average cancels most of that; a second reading with no time left is skipped).
        None when the model cannot give probabilities (it is not asked to write an answer: a sampled answer would be
        a rating again) or the item has no options to choose from."""
        if not isinstance(self.model, LabelReader):
            return None
        if question_type == "true_false":
            probabilities = await self._read_labels(
                _BLIND_INSTRUCTIONS, f"Question: {stem}\nOptions: true, false\nAnswer:", ["true", "false"], timeout
            )
            return None if probabilities is None else dict(probabilities)
        if question_type != "multiple_choice" or not choices or len(choices) > 26:
            return None
        options = list(choices)
        n = len(options)
        labels = [chr(ord("A") + i) for i in range(n)]
        budget = Budget(self.timeout if timeout is None else min(timeout, self.timeout))
        orders = [list(range(n)), [(i + n // 2) % n for i in range(n)]] if n > 1 else [[0]]
        readings: list[dict[str, float]] = []
        for order in orders:
            shown = "\n".join(f"{label}. {options[i]}" for label, i in zip(labels, order, strict=True))
            try:
                read = await self._read_labels(
                    _BLIND_INSTRUCTIONS, f"Question: {stem}\n{shown}\nAnswer:", labels, budget()
                )
            except JudgeUnavailable:
                if not readings:
                    raise
                break  # the first reading stands alone
            if read is None:
                return None
            readings.append({options[i]: read[label] for label, i in zip(labels, order, strict=True)})
        return {option: sum(r[option] for r in readings) / len(readings) for option in options}

    async def about_topic(self, *, text: str, topic: str, timeout: float | None = None) -> float | None:
        """The model's probability that `text` (an item) is about `topic`, read in one forward pass (yes / no); None
        when the model gives no probabilities."""
        if not isinstance(self.model, LabelReader):
            return None
        prompt = f"Topic: {topic}\nQuestion: {text}\nIs this question about the topic {topic}? yes or no?"
        said = await self._read_labels(_TOPIC_INSTRUCTIONS, prompt, _YES_NO, timeout)
        if said is None:
            return None
        return _yes(said)

    async def rewrite_item(self, *, prompt: str, output_type: type[T], timeout: float | None = None) -> T:
        """Mode 1's rewrite: the model writes a rejected draft again as `output_type` (its grammar fixes the shape),
        from `prompt` (the task, the draft and its one problem: `_drafting.rewrite_prompt`)."""
        return await self._ask(_REWRITE_INSTRUCTIONS, prompt, output_type, timeout)

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
        timeout: float | None = None,
    ) -> Explanation:
        """Tool 6's explanation: the model's prose (code completes it and adds the references)."""
        prompt = _lines(
            ("Write in", language_name(lang)),
            ("Item type", question_type),
            ("Question", stem),
            ("Correct answer", correct_answer),
            ("Expected ideas", expected),
            ("Learner's answer", f"{user_answer} ({'correct' if is_correct else 'not correct'})"),
        )
        return await self._ask(_EXPLAIN_INSTRUCTIONS, prompt, Explanation, timeout)

    async def _ask(self, instructions: str, prompt: str, output_type: type[T], timeout: float | None) -> T:
        """One typed answer within `timeout` seconds (default: the judge's; a caller's shorter budget wins)."""
        answer = await self._bounded(
            lambda limit: typed_answer(
                model=self.model,
                instructions=instructions,
                prompt=prompt,
                output_type=output_type,
                retries=self.retries,
                within=current_tool_call(),
                timeout=limit,
            ),
            timeout,
        )
        return answer.output  # type: ignore[no-any-return]

    async def _read_labels(
        self, system: str, prompt: str, labels: Sequence[str], timeout: float | None
    ) -> dict[str, float] | None:
        """The model's probability of each label within `timeout` seconds (as `_ask`); None when it gives none."""
        return await self._bounded(
            lambda limit: label_probabilities(
                model=self.model, system=system, prompt=prompt, labels=labels, timeout=limit
            ),
            timeout,
        )

    async def _bounded(self, work: Callable[[float], Awaitable[R]], timeout: float | None) -> R:
        """`work(limit)`'s result, `work` bounding itself to `limit` seconds (the judge's timeout; a caller's shorter
        budget wins); any failure is `JudgeUnavailable`."""
        limit = self.timeout if timeout is None else min(timeout, self.timeout)
        if limit <= 0:
            raise JudgeUnavailable("no_time", "no time was left for the model")
        try:
            return await work(limit)
        except asyncio.CancelledError:
            raise
        except TimeoutError as error:
            raise JudgeUnavailable("timeout", f"the model did not answer within {limit:g} s") from error
        except Exception as error:  # a model or transport error of any kind: the caller's fallback applies
            raise JudgeUnavailable("error", f"{type(error).__name__}: {error}") from error
