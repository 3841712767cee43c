"""Seed tool 6, `score_and_explain`: score an answer, explain it, cite real references.

Scoring:
- multiple choice and true/false: exact match, trimmed and case-insensitive (true/false also in other words:
  T/F, 正确/错误, 对/错), 100 or 0;
- short answer (`_short_answer`): code's evidence (the expected keywords said, with variants, numbers compared as
  numbers, Chinese by characters; the share of the reference answer covered) and the model's verdict read as
  probabilities of `correct` / `partial` / `incorrect` in one forward pass, combined by the shipped calibration
  (fitted on human-scored answers) into P(correct) and the seed's 0-100 score. is_correct = score >= 80; 70-79 is
  partial credit (with feedback saying what is missing). `keyword_matches` are the keywords code found.

The explanation (at least 500 characters) is the model's prose, completed by code from what is known — the correct
answer, the keywords found and missing, the item's own explanation and key points, and what each cited reference
covers — never filler. At least three references from the shipped list (`_references`).

When the model cannot grade a short answer in time the seed's fallback holds: score 50, is_correct False,
`fallback: True`, and the feedback and explanation say plainly that the answer was not graded.
When only the explanation fails, the exact score stands and the explanation is written by code.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ...i18n import normalize_lang, t
from ._item_rules import FALSE_WORDS, QUESTION_TYPES, TRUE_WORDS, has_cjk
from ._judge import Budget, JudgeUnavailable, ModelJudge
from ._references import MIN_REFERENCES, Reference, choose_references
from ._short_answer import Calibration, default_calibration, evidence

__all__ = [
    "CORRECT_THRESHOLD",
    "FALLBACK_SCORE",
    "MIN_EXPLANATION_CHARS",
    "PARTIAL_CREDIT",
    "keyword_matches",
    "score_and_explain",
]

CORRECT_THRESHOLD = 80
PARTIAL_CREDIT = range(70, 80)
FALLBACK_SCORE = 50
MIN_EXPLANATION_CHARS = 500
MIN_EXPLAIN_SECONDS = 2.0
MAX_REFERENCES = 8


def keyword_matches(user_answer: str, keywords: Sequence[str]) -> list[str]:
    """The keywords found in the answer (case-insensitive substring), in the keywords' order."""
    answer = user_answer.casefold()
    return [k for k in keywords if k.strip() and k.strip().casefold() in answer]


def _same_choice(user_answer: str, correct_answer: str, question_type: str) -> bool:
    user, correct = user_answer.strip().casefold(), correct_answer.strip().casefold()
    if question_type == "true_false":
        for words in (TRUE_WORDS, FALSE_WORDS):
            if user in words and correct in words:
                return True
    return user == correct


async def score_and_explain(
    session_id: str,
    user_id: str,
    question_id: str,
    question_type: str,
    user_answer: str,
    correct_answer: str | None = None,
    correct_keywords: list[str] | None = None,
    difficulty: int | None = None,
    category: str | None = None,
    *,
    judge: ModelJudge,
    stem: str | None = None,
    explanation: str | None = None,
    key_points: Sequence[str] = (),
    topic: str | None = None,
    lang: str | None = None,
    budget: float | None = None,
    calibration: Calibration | None = None,
    model_explains: bool = True,
) -> dict[str, Any]:
    """Score one answer and explain it (seed tool 6). The seed's fields: `attempt_id`, `session_id`, `question_id`,
        `user_id`, `is_correct`, `score` (0-100), `explanation` (>= 500 chars), `keyword_matches`, `feedback`,
        `graded_at`; and `reference_links` (>= 3, each {title, url}), `model_score` (the model's P(correct) + P(partial)/2, 0-100), `fallback`.

        The keyword-only extras come from the question bank when known: the item's `stem`, its `explanation` and
        `key_points`, its `topic` (what references are chosen by), `lang` (default: the stem's or answer's language).
        `budget` (seconds) bounds the whole call, e.g. the seed's 15 s for tool 6: the grade gets what is left of it, the
        model's explanation what is left after that (below 2 s the explanation is written by code), so the exact score of
        a multiple-choice answer is never lost to a slow explanation. `calibration` maps a short answer's evidence and
        verdict to its score (default: the shipped one). `model_explains=False`: the explanation is written by code
    from what is known (no model prose: the grade alone waits for the model, e.g. during an adaptive test, whose item
    explanation is shown anyway). Raises the seed's TypeError/ValueError naming the field."""
    _check_inputs(
        session_id,
        user_id,
        question_id,
        question_type,
        user_answer,
        correct_answer,
        correct_keywords,
        difficulty,
        category,
    )
    left = Budget(budget)
    lang = normalize_lang(lang) if lang else ("zh-CN" if has_cjk((stem or "") + user_answer) else "en")
    keywords = [k for k in correct_keywords or [] if k.strip()]
    found: list[str] = []
    model_score: int | None = None
    missing: list[str] = list(keywords)
    ungraded: JudgeUnavailable | None = None

    if question_type == "short_answer":
        seen = evidence(user_answer, keywords, reference=correct_answer, stem=stem)
        found, missing = list(seen.found), list(seen.missing)
        mapping = calibration or default_calibration()
        try:
            probabilities = await judge.verdict(
                user_answer=user_answer,
                expected=keywords,
                stem=stem,
                reference_answer=correct_answer,
                readings=mapping.wanted,
                timeout=left(),
            )
            model_score = round(100 * (probabilities["correct"] + probabilities.get("partial", 0.0) / 2))
            mapping = mapping.for_verdict(probabilities)
            score = mapping.score(mapping.probability(probabilities, seen))
        except JudgeUnavailable as error:
            score, ungraded = FALLBACK_SCORE, error
        is_correct = ungraded is None and score >= CORRECT_THRESHOLD
    else:
        is_correct = _same_choice(user_answer, correct_answer or "", question_type)
        score = 100 if is_correct else 0

    texts = [stem or "", topic or "", correct_answer or "", *keywords]
    prose, points = "", list(key_points)
    try:
        if ungraded is not None:
            raise ungraded  # the model is not asked to explain a verdict nobody made
        if not model_explains:
            raise JudgeUnavailable("no_time", "the caller asked for code's explanation")
        remaining = left(reserve=MIN_EXPLAIN_SECONDS)
        written = await judge.explain(
            question_type=question_type,
            user_answer=user_answer,
            is_correct=is_correct,
            stem=stem,
            correct_answer=correct_answer,
            expected=keywords,
            lang=lang,
            timeout=remaining,
        )
        prose, points = written.explanation.strip(), list(dict.fromkeys([*key_points, *written.key_points]))
    except JudgeUnavailable:
        pass  # code writes the explanation from what is known

    for k in range(MIN_REFERENCES, MAX_REFERENCES + 1):
        # Short still: cite one more source and say what it covers (real content, never filler).
        references = choose_references(category=category, texts=texts, lang=lang, k=k)
        text = _explanation(
            lang=lang,
            prose=prose,
            question_type=question_type,
            score=score,
            is_correct=is_correct,
            user_answer=user_answer,
            correct_answer=correct_answer,
            found=found,
            missing=missing,
            background=explanation,
            points=points,
            references=references,
            ungraded=ungraded.reason(lang) if ungraded else None,
        )
        if len(text) >= MIN_EXPLANATION_CHARS:
            break
    return {
        "attempt_id": str(uuid.uuid4()),
        "session_id": session_id,
        "question_id": question_id,
        "user_id": user_id,
        "is_correct": is_correct,
        "score": score,
        "explanation": text,
        "keyword_matches": found,
        "feedback": _feedback(
            question_type, score, is_correct, missing, ungraded.reason(lang) if ungraded else None, lang
        ),
        "graded_at": datetime.now(UTC).isoformat(),
        "reference_links": [r.link() for r in references],
        "model_score": model_score,
        "fallback": ungraded is not None,
        "fallback_detail": str(ungraded) if ungraded else None,
    }


def _check_inputs(
    session_id: Any,
    user_id: Any,
    question_id: Any,
    question_type: Any,
    user_answer: Any,
    correct_answer: Any,
    correct_keywords: Any,
    difficulty: Any,
    category: Any,
) -> None:
    for name, value in (
        ("session_id", session_id),
        ("user_id", user_id),
        ("question_id", question_id),
        ("question_type", question_type),
        ("user_answer", user_answer),
    ):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
        if not value.strip():
            raise ValueError(f"{name} must not be empty")
    if question_type not in QUESTION_TYPES:
        raise ValueError(f"question_type must be one of {', '.join(QUESTION_TYPES)}, got {question_type!r}")
    if correct_answer is not None and not isinstance(correct_answer, str):
        raise TypeError(f"correct_answer must be a string, got {type(correct_answer).__name__}")
    if question_type in ("multiple_choice", "true_false") and not (correct_answer or "").strip():
        raise ValueError(f"correct_answer is required for {question_type}")
    if correct_keywords is not None and (
        not isinstance(correct_keywords, list) or not all(isinstance(k, str) for k in correct_keywords)
    ):
        raise TypeError("correct_keywords must be a list of strings")
    if question_type == "short_answer" and not any(k.strip() for k in correct_keywords or []):
        raise ValueError("correct_keywords is required for short_answer (a non-empty list)")
    if difficulty is not None and (isinstance(difficulty, bool) or not isinstance(difficulty, int)):
        raise TypeError(f"difficulty must be an integer, got {type(difficulty).__name__}")
    if difficulty is not None and not 1 <= difficulty <= 10:
        raise ValueError(f"difficulty must be 1-10, got {difficulty}")
    if category is not None and not isinstance(category, str):
        raise TypeError(f"category must be a string, got {type(category).__name__}")


def _feedback(
    question_type: str, score: int, is_correct: bool, missing: list[str], fallback_reason: str | None, lang: str
) -> str | None:
    if fallback_reason is not None:
        return t("quiz.judge.feedback.fallback", lang, reason=fallback_reason)
    if question_type != "short_answer" or is_correct:
        return None
    listed = ", ".join(missing) if missing else t("quiz.judge.none", lang)
    key = "quiz.judge.feedback.partial" if score in PARTIAL_CREDIT else "quiz.judge.feedback.low"
    return t(key, lang, score=score, missing=listed)


def _explanation(
    *,
    lang: str,
    prose: str,
    question_type: str,
    score: int,
    is_correct: bool,
    user_answer: str,
    correct_answer: str | None,
    found: list[str],
    missing: list[str],
    background: str | None,
    points: list[str],
    references: list[Reference],
    ungraded: str | None = None,
) -> str:
    """The model's prose, then what code knows, then what each reference covers — until 500 characters or more."""
    verdict = t("quiz.judge.explain.correct" if is_correct else "quiz.judge.explain.incorrect", lang)
    if question_type == "short_answer":
        verdict = f"{t('quiz.judge.explain.scored', lang, score=score)} {verdict}"
    if ungraded is not None:
        verdict = t("quiz.judge.feedback.fallback", lang, reason=ungraded)
    sections = [verdict, prose] if prose else [verdict]
    facts = [t("quiz.judge.explain.your_answer", lang, answer=user_answer.strip())]
    if correct_answer and question_type != "short_answer":
        facts.append(t("quiz.judge.explain.correct_answer", lang, answer=correct_answer.strip()))
    if found:
        facts.append(t("quiz.judge.explain.found", lang, words=", ".join(found)))
    if missing:
        facts.append(t("quiz.judge.explain.missing", lang, words=", ".join(missing)))
    sections.append("\n".join(facts))
    if background and background.strip():
        sections.append(f"{t('quiz.judge.explain.background', lang)} {background.strip()}")
    if points:
        sections.append(t("quiz.judge.explain.key_points", lang) + "\n" + "\n".join(f"- {p}" for p in points))
    reading = [f"- {r.title}: {r.note(lang)}" for r in references]
    sections.append(t("quiz.judge.explain.further_reading", lang) + "\n" + "\n".join(reading))
    return "\n\n".join(s for s in sections if s)
