"""Tool 4 with a test-double model: the seed's thresholds, rules named, the fallback when the model fails or is
silent, batch mode going on past a bad item, and bad input refused before the model is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from consulta.apps.quiz._validate import validate_question_quality

from ._scripts import failing, rating, scripted, silent

GOOD_MC = dict(
    stem="Which SQL clause filters groups after aggregation?",
    question_type="multiple_choice",
    choices=["WHERE", "HAVING", "GROUP BY", "ORDER BY"],
    correct_answer="HAVING",
)


def validate(*args: Any, **kwargs: Any) -> Any:
    return asyncio.run(validate_question_quality(*args, **kwargs))


def test_a_good_item_passes() -> None:
    judge = scripted(rating(5, 5, 4, 5))
    result = validate(**GOOD_MC, judge=judge)
    assert result["score"] == pytest.approx(0.9375) and result["rule_score"] == 1.0
    assert (
        result["final_score"] == result["score"] and result["recommendation"] == "pass" and result["is_valid"] is True
    )
    assert result["issues"] == [] and result["failed_rules"] == [] and result["fallback"] is False
    assert "save it" in result["feedback"] and judge.model.calls == 1


@pytest.mark.parametrize(
    ("ratings", "recommendation", "valid"),
    [
        ((5, 5, 5, 5), "pass", True),
        ((4, 4, 4, 4), "revise", True),
        ((4, 5, 3, 4), "revise", True),
        ((3, 3, 3, 3), "reject", False),
        ((1, 1, 1, 1), "reject", False),
    ],
)
def test_thresholds_on_the_model_score(ratings: tuple[int, int, int, int], recommendation: str, valid: bool) -> None:
    result = validate(**GOOD_MC, judge=scripted(rating(*ratings)))
    assert result["recommendation"] == recommendation and result["is_valid"] is valid


def test_a_flaw_caps_a_perfect_rating_at_revise_and_is_named() -> None:
    result = validate(
        "Which of the following is not a Python built-in type?",
        "multiple_choice",
        ["list", "dict", "array", "tuple"],
        "array",
        judge=scripted(rating(reasons=["negative stem"])),
    )
    assert result["score"] == 1.0 and result["rule_score"] == pytest.approx(0.84)
    assert (
        result["final_score"] == pytest.approx(0.84)
        and result["recommendation"] == "revise"
        and result["is_valid"] is True
    )
    assert (
        result["failed_rules"] == ["negative_stem"]
        and "not" in result["issues"][0]
        and "negative stem" in result["reasons"]
    )


def test_the_answer_missing_from_the_choices_is_rejected() -> None:
    result = validate(
        GOOD_MC["stem"],
        "multiple_choice",
        ["WHERE", "GROUP BY", "ORDER BY", "LIMIT"],
        "HAVING",
        judge=scripted(rating()),
    )
    assert (
        result["recommendation"] == "reject"
        and result["is_valid"] is False
        and result["failed_rules"] == ["answer_in_choices"]
    )


def test_feedback_in_chinese_for_a_chinese_item() -> None:
    result = validate(
        "下列哪一项不是 Python 的内置类型？",
        "multiple_choice",
        ["列表", "字典", "数组", "元组"],
        "数组",
        judge=scripted(rating()),
    )
    assert (
        result["failed_rules"] == ["negative_stem"]
        and "否定" in result["issues"][0]
        and "建议修改" in result["feedback"]
    )


def test_model_failure_gives_the_seeds_fallback() -> None:
    result = validate(**GOOD_MC, judge=failing())
    assert result["is_valid"] is False and result["recommendation"] == "reject" and result["fallback"] is True
    assert result["score"] == 0.5 and result["rule_score"] == 1.0 and "not available" in result["feedback"]


def test_a_silent_model_is_bounded_by_the_timeout() -> None:
    result = validate(**GOOD_MC, judge=silent(0.2))
    assert (
        result["fallback"] is True
        and result["recommendation"] == "reject"
        and "did not answer in time" in result["feedback"]
    )


def test_an_answer_that_never_fits_is_a_fallback_too() -> None:
    judge = scripted(rating(9, 9, 9, 9), rating(0, 0, 0, 0), timeout=5)
    result = validate(**GOOD_MC, judge=judge)
    assert result["fallback"] is True and judge.model.calls == 2  # asked again once with the errors, then given up


def test_batch_goes_on_past_a_bad_item() -> None:
    judge = scripted(rating(), rating(2, 2, 2, 2))
    results = validate(
        [GOOD_MC["stem"], "", "Python lists are mutable."],
        ["multiple_choice", "short_answer", "true_false"],
        [GOOD_MC["choices"], None, None],
        ["HAVING", None, "True"],
        batch=True,
        judge=judge,
    )
    assert [r["recommendation"] for r in results] == ["pass", "reject", "reject"]
    assert results[1]["error"]["type"] == "ValueError" and "item 1: stem" in results[1]["error"]["message"]
    assert judge.model.calls == 2  # the bad item was never sent to the model


def test_batch_with_one_type_for_all() -> None:
    results = validate(
        ["Python lists are mutable.", "Python 的元组是可变的。"],
        "true_false",
        None,
        ["True", "错误"],
        batch=True,
        judge=scripted(rating(), rating()),
    )
    assert [r["is_valid"] for r in results] == [True, True]


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        (dict(GOOD_MC, stem=""), ValueError, "stem"),
        (dict(GOOD_MC, stem="x" * 251), ValueError, "stem"),
        (dict(GOOD_MC, stem=42), TypeError, "stem"),
        (dict(GOOD_MC, question_type="essay"), ValueError, "question_type"),
        (dict(GOOD_MC, choices=None), ValueError, "choices"),
        (dict(GOOD_MC, choices=["a", 2, "c", "d"]), TypeError, "choices"),
        (dict(GOOD_MC, correct_answer=None), ValueError, "correct_answer"),
        (dict(GOOD_MC, correct_answer=3), TypeError, "correct_answer"),
        (dict(GOOD_MC, batch="yes"), TypeError, "batch"),
        (
            dict(
                GOOD_MC,
                stem=["a?", "b?"],
                question_type=["true_false"],
                choices=None,
                correct_answer=["True", "False"],
                batch=True,
            ),
            ValueError,
            "question_type",
        ),
        (dict(GOOD_MC, stem="one?", batch=True), TypeError, "stem"),
    ],
)
def test_bad_input_is_refused_before_the_model_is_asked(
    kwargs: dict[str, Any], error: type[Exception], field: str
) -> None:
    judge = scripted(rating())
    with pytest.raises(error, match=field):
        validate(**kwargs, judge=judge)
    assert judge.model.calls == 0


def test_a_budget_bounds_a_batch_and_the_rest_falls_back() -> None:
    import time

    judge = silent(30)
    started = time.monotonic()
    results = validate(
        [GOOD_MC["stem"]] * 3,
        "multiple_choice",
        [GOOD_MC["choices"]] * 3,
        ["HAVING"] * 3,
        batch=True,
        judge=judge,
        budget=0.3,
    )
    assert time.monotonic() - started < 5
    assert [r["fallback"] for r in results] == [True, True, True] and all(
        r["recommendation"] == "reject" for r in results
    )


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_every_flaw_reaches_the_result_named_and_worded(lang: str) -> None:
    from .test_item_rules import BAD

    for rule, stem, choices, answer in BAD:
        result = validate(stem, "multiple_choice", choices, answer, judge=scripted(rating()), lang=lang)
        assert rule in result["failed_rules"] and result["final_score"] < 1.0
        assert result["recommendation"] in (
            ("pass", "revise") if rule == "vague_terms" else ("revise", "reject")
        )  # vague: a note
        assert len(result["issues"]) == len(result["failed_rules"])


def _blind(chosen: str, *ratings: int) -> Any:
    """A judge whose model (a test double) gives label probabilities as the embedded one does: blind, it puts the
    label of the option `chosen` (its text, or true / false) first wherever the option is shown; asked a review question (`ITEM_READINGS`), its "yes" is the criterion's rating in `ratings`
    (clarity, answer_correct, distractors, fairness) mapped from 1-5 to 0-1."""
    from consulta.apps.quiz._judge import ITEM_READINGS

    judge = scripted(rating(*ratings))
    model = judge.model
    model.prompts = []  # type: ignore[attr-defined]
    by_question = dict(zip(ITEM_READINGS.values(), ratings or (5, 5, 5, 5), strict=True))

    async def label_probabilities(*, system: str, prompt: str, labels: Any) -> dict[str, float]:
        model.prompts.append(prompt)  # type: ignore[attr-defined]
        asked = prompt.splitlines()[-1]
        if asked in by_question:
            yes = (by_question[asked] - 1) / 4
            return {"yes": yes, "no": 1 - yes, "Yes": 0.0, "No": 0.0}
        shown = [line.split(". ", 1) for line in prompt.splitlines() if ". " in line[:3]]
        label = chosen if chosen in labels else next(letter for letter, text in shown if text == chosen)
        return {each: (0.7 if each == label else 0.3 / (len(labels) - 1)) for each in labels}

    model.label_probabilities = label_probabilities  # type: ignore[attr-defined]
    return judge


def test_the_key_is_checked_blind_and_a_disagreement_fails_whatever_the_ratings() -> None:
    judge = _blind("WHERE", 5, 5, 5, 5)  # the model, blind, picks WHERE; the key says HAVING
    result = validate(**GOOD_MC, judge=judge)
    assert result["blind_check"] == {"answer": "WHERE", "probability": 0.7, "key_probability": 0.1, "agrees": False}
    assert result["is_valid"] is False and result["recommendation"] == "reject"
    assert any("WHERE" in issue and "HAVING" in issue for issue in result["issues"])
    assert judge.model.prompts[0].count("HAVING") == 1 and "B. HAVING" in judge.model.prompts[0]  # no key given
    assert "D. HAVING" in judge.model.prompts[1]  # read again with the options rotated by half


def test_a_blind_answer_that_agrees_replaces_the_models_rating_of_the_key() -> None:
    result = validate(**GOOD_MC, judge=_blind("HAVING", 5, 2, 5, 5))  # rated the key 2, but answers it blind
    assert result["blind_check"]["agrees"] is True and result["score"] == 1.0 and result["is_valid"] is True
    assert result["fallback"] is False
    tf = validate("Water boils at 100 °C at sea level.", "true_false", None, "正确", judge=_blind("true", 5, 5, 5, 5))
    assert tf["blind_check"]["answer"] == "true" and tf["blind_check"]["agrees"] is True


def test_a_model_with_probabilities_rates_the_item_by_yes_no_readings_with_no_sampled_answer() -> None:
    judge = _blind("HAVING", 5, 4, 2, 5)
    result = validate(**GOOD_MC, judge=judge)
    assert judge.model.calls == 0  # no typed answer was asked for
    readings = [p for p in judge.model.prompts if p.endswith("yes or no?")]
    assert (
        len(readings) == 4
        and len(judge.model.prompts) == 6
        and all(p.startswith("Question: Which SQL clause") and "Key: HAVING" in p for p in readings)
    )
    assert result["score"] == pytest.approx((1 + 1 + 0.25 + 1) / 4)  # the key's rating from the blind check (agrees)
    assert result["reasons"] == [
        "The model's review: the wrong options may be implausible or not clearly wrong (p(yes) 0.25)."
    ]
    other = _blind("WHERE")
    short = validate("Which SQL keyword removes duplicate rows?", "short_answer", None, "DISTINCT", judge=other)
    assert short["blind_check"] is None and short["score"] == 1.0 and len(other.model.prompts) == 3  # no distractors
    assert all("Expected answer words: DISTINCT" in p for p in other.model.prompts)


def test_a_model_that_favours_a_letter_gets_no_option_by_its_letter_alone() -> None:
    from consulta.apps.quiz._judge import ModelJudge

    class LetterA:
        async def label_probabilities(self, *, system: str, prompt: str, labels: Any) -> dict[str, float]:
            return {label: (0.7 if label == "A" else 0.1) for label in labels}

    judge = ModelJudge(LetterA())  # type: ignore[arg-type]
    read = asyncio.run(
        judge.answer_blind(stem=GOOD_MC["stem"], question_type="multiple_choice", choices=GOOD_MC["choices"])
    )
    assert read == pytest.approx({"WHERE": 0.4, "HAVING": 0.1, "GROUP BY": 0.4, "ORDER BY": 0.1})


def test_without_probabilities_no_blind_check_is_claimed() -> None:
    assert validate(**GOOD_MC, judge=scripted(rating()))["blind_check"] is None
