"""Seed tool 4, `validate_question_quality`: the model's semantic score and the rule checks, combined in code.

final_score = min(model score, rule score); recommendation pass (>= 0.85), revise (0.70-0.85), reject (< 0.70);
is_valid = final_score >= 0.70. The model's score is the mean of its 1-5 ratings (clarity, answer correct,
distractors for multiple choice, fairness) mapped to 0-1; the rule score is 1 less each failed rule's weight
(see `_item_rules`). When the model gives no judgment (timeout, error) the seed's fallback holds: score 0.5,
is_valid=False, recommendation "reject", `fallback: True`.

Bad input raises the seed's TypeError/ValueError naming the field, before anything is judged. In batch mode the lists
themselves are checked first (same lengths); an item that is bad on its own gets a rejected result naming its error and
the batch goes on with the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ...i18n import normalize_lang, t
from ._item_rules import (
    FALSE_WORDS,
    QUESTION_TYPES,
    STEM_MAX_CHARS,
    TRUE_WORDS,
    Item,
    RuleFailure,
    check_item,
    has_cjk,
    rule_score,
)
from ._judge import Budget, JudgeUnavailable, ModelJudge

__all__ = ["PASS_THRESHOLD", "REVISE_THRESHOLD", "FALLBACK_SCORE", "recommendation_for", "validate_question_quality"]

PASS_THRESHOLD = 0.85
REVISE_THRESHOLD = 0.70
FALLBACK_SCORE = 0.5
BLIND_DISAGREES_CAP = 0.5
"""The final score's cap when the model, answering blind, picks another option than the key: below REVISE_THRESHOLD."""

Recommendation = Literal["pass", "revise", "reject"]


def recommendation_for(final_score: float) -> Recommendation:
    if final_score >= PASS_THRESHOLD:
        return "pass"
    return "revise" if final_score >= REVISE_THRESHOLD else "reject"


async def validate_question_quality(
    stem: str | list[str],
    question_type: str | list[str],
    choices: list[str] | list[list[str] | None] | None = None,
    correct_answer: str | list[str | None] | None = None,
    batch: bool = False,
    *,
    judge: ModelJudge,
    lang: str | None = None,
    budget: float | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """Validate one item, or with `batch=True` a list of items (`stem`, `question_type`, `choices`, `correct_answer`
    as parallel lists; a single `question_type` applies to all). Returns the seed's result per item: `is_valid`,
    `score` (model, 0-1), `rule_score`, `final_score`, `recommendation`, `feedback`, `issues` (one line per failed
    rule), `failed_rules` (their names), `reasons` (the model's), `fallback`. `lang` words the feedback (default: the
    item's language). `budget` (seconds, e.g. the seed's 10 s for tool 4) bounds the whole call: each item's model
    request gets what is left, and items reached after it is spent get the fallback, so a batch always returns."""
    if not isinstance(batch, bool):
        raise TypeError(f"batch must be a bool, got {type(batch).__name__}")
    left = Budget(budget)
    if not batch:
        item = _parse_item(stem, question_type, choices, correct_answer)
        return await _validate(item, judge=judge, lang=lang, timeout=left())
    items = _parse_batch(stem, question_type, choices, correct_answer)
    results = []
    for parsed in items:
        if isinstance(parsed, ValueError | TypeError):
            results.append(_invalid_result(parsed, lang=lang))
        else:
            results.append(await _validate(parsed, judge=judge, lang=lang, timeout=left()))
    return results


def _parse_item(stem: Any, question_type: Any, choices: Any, correct_answer: Any) -> Item:
    """The item, or the seed's TypeError/ValueError naming the field."""
    if not isinstance(stem, str):
        raise TypeError(f"stem must be a string, got {type(stem).__name__}")
    if not stem.strip():
        raise ValueError("stem must not be empty")
    if len(stem) > STEM_MAX_CHARS:
        raise ValueError(f"stem must be 1-{STEM_MAX_CHARS} characters, got {len(stem)}")
    if not isinstance(question_type, str):
        raise TypeError(f"question_type must be a string, got {type(question_type).__name__}")
    if question_type not in QUESTION_TYPES:
        raise ValueError(f"question_type must be one of {', '.join(QUESTION_TYPES)}, got {question_type!r}")
    if choices is not None:
        if not isinstance(choices, list | tuple) or not all(isinstance(c, str) for c in choices):
            raise TypeError("choices must be a list of strings")
    if question_type == "multiple_choice" and not choices:
        raise ValueError("choices is required for multiple_choice (4-5 options)")
    if correct_answer is not None and not isinstance(correct_answer, str):
        raise TypeError(f"correct_answer must be a string, got {type(correct_answer).__name__}")
    if question_type in ("multiple_choice", "true_false") and not (correct_answer or "").strip():
        raise ValueError(f"correct_answer is required for {question_type}")
    return Item(
        stem=stem,
        question_type=question_type,
        choices=tuple(choices) if choices else None,
        correct_answer=correct_answer,
    )


def _parse_batch(
    stem: Any, question_type: Any, choices: Any, correct_answer: Any
) -> list[Item | ValueError | TypeError]:
    """Each item of a batch, or its own error; the lists' shape is checked first (TypeError/ValueError)."""
    if not isinstance(stem, list) or not stem:
        raise TypeError("stem must be a non-empty list of strings when batch=True")
    n = len(stem)
    types = [question_type] * n if isinstance(question_type, str) else question_type
    fields = {"question_type": types, "choices": choices, "correct_answer": correct_answer}
    for name, value in fields.items():
        if value is None and name != "question_type":
            continue
        if not isinstance(value, list):
            raise TypeError(f"{name} must be a list (one entry per stem) when batch=True")
        if len(value) != n:
            raise ValueError(f"{name} has {len(value)} entries for {n} stems")
    parsed: list[Item | ValueError | TypeError] = []
    for i in range(n):
        try:
            parsed.append(
                _parse_item(
                    stem[i],
                    types[i],
                    choices[i] if choices is not None else None,
                    correct_answer[i] if correct_answer is not None else None,
                )
            )
        except (ValueError, TypeError) as error:
            parsed.append(type(error)(f"item {i}: {error}"))
    return parsed


def _lang_of(item: Item, lang: str | None) -> str:
    return normalize_lang(lang) if lang else ("zh-CN" if has_cjk(item.stem) else "en")


def _issue(failure: RuleFailure, lang: str) -> str:
    return t(f"quiz.judge.rule.{failure.rule}", lang, **failure.values)


def _keyed(item: Item) -> str | None:
    """The option the key names, as `ModelJudge.answer_blind` names options (a true/false key as true or false)."""
    key = (item.correct_answer or "").strip()
    if item.question_type == "true_false":
        folded = key.casefold()
        return "true" if folded in TRUE_WORDS else "false" if folded in FALSE_WORDS else None
    return next((c for c in item.choices or [] if c.strip().casefold() == key.casefold()), None)


async def _blind_check(item: Item, *, judge: ModelJudge, lang: str, timeout: float | None) -> dict[str, Any] | None:
    """The key checked independently: the model answers the item from its stem and options (`answer_blind`) and code
    compares its most probable option with the key. None when no check could be made (no probabilities, no options,
    the model did not answer in time: the other checks decide)."""
    keyed = _keyed(item)
    if keyed is None:
        return None
    try:
        probabilities = await judge.answer_blind(
            stem=item.stem, question_type=item.question_type, choices=item.choices, timeout=timeout
        )
    except JudgeUnavailable:
        return None
    if not probabilities:
        return None
    chosen = max(probabilities, key=lambda option: probabilities[option])
    return {
        "answer": chosen,
        "probability": round(probabilities[chosen], 4),
        "key_probability": round(probabilities.get(keyed, 0.0), 4),
        "agrees": chosen == keyed,
    }


async def _validate(item: Item, *, judge: ModelJudge, lang: str | None, timeout: float | None) -> dict[str, Any]:
    lang = _lang_of(item, lang)
    failures = check_item(item)
    rules = rule_score(failures)
    issues = [_issue(f, lang) for f in failures]
    left = Budget(timeout)
    blind = await _blind_check(item, judge=judge, lang=lang, timeout=left())
    if blind is not None and not blind["agrees"]:
        issues.append(t("quiz.judge.blind_disagrees", lang, answer=blind["answer"], keyed=item.correct_answer))
    try:
        timeout = left()
        judgment = await judge.judge_item(
            stem=item.stem,
            question_type=item.question_type,
            choices=item.choices,
            correct_answer=item.correct_answer,
            lang=lang,
            timeout=timeout,
        )
    except JudgeUnavailable as error:
        final = min(FALLBACK_SCORE, rules)
        feedback = [t("quiz.judge.model_unavailable", lang, reason=error.reason(lang)), *issues]
        return _result(
            score=FALLBACK_SCORE,
            rules=rules,
            final=final,
            recommendation="reject",
            feedback=feedback,
            issues=issues,
            failures=failures,
            reasons=[],
            fallback=True,
            lang=lang,
            blind=blind,
        )
    if blind is not None:  # the model's rating of the key counts only as far as code's check of the key agrees
        judgment = judgment.model_copy(update={"answer_correct": 5 if blind["agrees"] else 1})
    score = judgment.score_for(with_distractors=item.question_type == "multiple_choice")
    reasons = [r for r in judgment.reasons if r.strip()]
    final = round(min(score, rules), 4)
    if blind is not None and not blind["agrees"]:
        final = min(final, BLIND_DISAGREES_CAP)  # a key the check finds wrong fails, whatever the ratings say
    recommendation = recommendation_for(final)
    feedback = [t(f"quiz.judge.recommendation.{recommendation}", lang), *issues, *reasons]
    return _result(
        score=score,
        rules=rules,
        final=final,
        recommendation=recommendation,
        feedback=feedback,
        issues=issues,
        failures=failures,
        reasons=reasons,
        fallback=False,
        lang=lang,
        blind=blind,
    )


def _result(
    *,
    score: float,
    rules: float,
    final: float,
    recommendation: Recommendation,
    feedback: Sequence[str],
    issues: list[str],
    failures: Sequence[RuleFailure],
    reasons: list[str],
    fallback: bool,
    lang: str,
    blind: dict[str, Any] | None = None,
) -> dict[str, Any]:
    lines = [*feedback, t("quiz.judge.scores", lang, model=score, rules=rules, final=final)]
    return {
        "is_valid": (not fallback) and final >= REVISE_THRESHOLD,
        "score": score,
        "rule_score": rules,
        "final_score": final,
        "recommendation": recommendation,
        "feedback": "\n".join(lines),
        "issues": issues,
        "failed_rules": [f.rule for f in failures],
        "reasons": reasons,
        "fallback": fallback,
        "blind_check": blind,
    }


def _invalid_result(error: ValueError | TypeError, *, lang: str | None) -> dict[str, Any]:
    """A batch item that is bad on its own: rejected, its error named, nothing judged."""
    lang = normalize_lang(lang)
    message = str(error)
    return {
        "is_valid": False,
        "score": 0.0,
        "rule_score": 0.0,
        "final_score": 0.0,
        "recommendation": "reject",
        "feedback": t("quiz.judge.item_invalid", lang, message=message),
        "issues": [message],
        "failed_rules": [],
        "reasons": [],
        "fallback": False,
        "error": {"type": type(error).__name__, "message": message},
    }
