"""Tool 6 with a test-double model: exact scoring of multiple choice and true/false, short answers graded by the model's verdict
and code's evidence, partial-credit feedback, explanations of 500+ characters citing >= 3 shipped references
in both languages, the seed's fallback, and bad input refused before anything is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from consulta.apps.quiz._references import load_references
from consulta.apps.quiz._score import score_and_explain
from consulta.apps.quiz._short_answer import Calibration

from ._scripts import failing, final, scripted

IDS = dict(session_id="sess_1", user_id="user_1", question_id="q_1")
SHIPPED = {r.url for r in load_references()}


def score(**kwargs: Any) -> dict[str, Any]:
    return asyncio.run(score_and_explain(**{**IDS, **kwargs}))


def explained(text: str = "Atomicity means a transaction's operations all take effect or none do.") -> dict[str, Any]:
    return final(explanation=text, key_points=["A transaction is all or nothing"])


def assert_explained(result: dict[str, Any]) -> None:
    assert len(result["explanation"]) >= 500
    assert len(result["reference_links"]) >= 3 and all(link["url"] in SHIPPED for link in result["reference_links"])
    for link in result["reference_links"]:
        assert link["title"] in result["explanation"]


@pytest.mark.parametrize(
    ("kind", "user", "correct", "expected"),
    [
        ("multiple_choice", " having ", "HAVING", 100),
        ("multiple_choice", "WHERE", "HAVING", 0),
        ("true_false", "true", "True", 100),
        ("true_false", "正确", "True", 100),
        ("true_false", "F", "True", 0),
        ("true_false", "错", "错误", 100),
    ],
)
def test_choice_items_are_scored_exactly(kind: str, user: str, correct: str, expected: int) -> None:
    judge = scripted(explained())
    result = score(question_type=kind, user_answer=user, correct_answer=correct, category="technical", judge=judge)
    assert result["score"] == expected and result["is_correct"] is (expected == 100)
    assert result["feedback"] is None and result["fallback"] is False and result["keyword_matches"] == []
    assert_explained(result)
    assert judge.model.calls == 1  # the explanation only: no model in the scoring


FIXED = Calibration(weights={"bias": -1.0, "model": 1.0, "keywords": 2.0}, threshold=0.6, source="test")
"""A calibration the tests fix (the shipped one is fitted on data and may change)."""


def verdict(label: str) -> dict[str, Any]:
    """A model without probabilities answers one constrained label."""
    return final(verdict=label)


def test_short_answer_correct() -> None:
    judge = scripted(verdict("correct"), explained())
    result = score(
        question_type="short_answer",
        user_answer="Atomicity, isolation and durability (and consistency).",
        correct_keywords=["atomicity", "isolation", "durability"],
        difficulty=4,
        category="technical",
        judge=judge,
        stem="Name the ACID guarantees.",
        explanation="ACID is the set of guarantees of a database transaction.",
        calibration=FIXED,
    )
    assert result["score"] >= 80 and result["is_correct"] is True and result["feedback"] is None
    assert result["keyword_matches"] == ["atomicity", "isolation", "durability"] and result["model_score"] == 100
    assert "ACID is the set of guarantees" in result["explanation"]
    assert any("wikipedia.org/wiki/ACID" in link["url"] for link in result["reference_links"])
    assert_explained(result)


def test_during_a_test_only_the_grade_waits_for_the_model() -> None:
    judge = scripted(verdict("correct"), explained("model prose"))
    result = score(
        question_type="short_answer",
        user_answer="Atomicity, isolation and durability.",
        correct_keywords=["atomicity", "isolation", "durability"],
        difficulty=4,
        category="technical",
        judge=judge,
        stem="Name the ACID guarantees.",
        explanation="ACID is the set of guarantees of a database transaction.",
        calibration=FIXED,
        model_explains=False,
    )
    assert judge.model.calls == 1 and result["is_correct"] is True and result["fallback"] is False
    assert "model prose" not in result["explanation"] and "ACID is the set of guarantees" in result["explanation"]
    assert_explained(result)


def test_the_verdict_is_asked_with_the_question_and_the_reference() -> None:
    judge = scripted(verdict("partial"), explained())
    seen: list[str] = []
    original = judge.model.function

    def spy(messages: Any, info: Any) -> Any:
        seen.append(str(messages[-1].parts[-1].content))
        return original(messages, info)

    judge.model.function = spy
    score(
        question_type="short_answer",
        user_answer="It gets higher",
        correct_answer="When the string was tighter, the pitch was higher.",
        correct_keywords=["pitch", "higher"],
        judge=judge,
        stem="Describe how the sound was different when the string was tightened.",
    )
    assert "Question: Describe how the sound" in seen[0] and "Reference answer: When the string" in seen[0]
    # the answer, then only what is asked: everything before the answer is the item's, shared by its answers
    assert seen[0].rstrip().split("\n")[-2] == "Student's answer: It gets higher"


def test_partial_credit_says_what_is_missing() -> None:
    judge = scripted(verdict("partial"), explained())
    result = score(
        question_type="short_answer",
        user_answer="Atomicity and isolation.",
        correct_keywords=["atomicity", "isolation", "durability"],
        judge=judge,
        calibration=Calibration(weights={"bias": 0.0, "model": 0.0, "keywords": 1.5}, threshold=0.75, source="test"),
    )
    assert 70 <= result["score"] < 80 and result["is_correct"] is False and result["model_score"] == 50
    assert (
        result["feedback"].startswith(f"Partial credit: {result['score']}/100") and "durability" in result["feedback"]
    )


def test_a_synonym_the_item_lists_counts_as_its_keyword() -> None:
    judge = scripted(verdict("correct"), explained())
    result = score(
        question_type="short_answer",
        user_answer="The mutation is harmful to the organism.",
        correct_keywords=["deleterious|harmful"],
        judge=judge,
        calibration=FIXED,
    )
    assert result["keyword_matches"] == ["deleterious|harmful"] and result["is_correct"] is True


def test_a_wrong_verdict_without_keywords_is_not_correct() -> None:
    judge = scripted(verdict("incorrect"), explained())
    result = score(
        question_type="short_answer",
        user_answer="It is about databases being good.",
        correct_keywords=["atomicity", "isolation"],
        judge=judge,
    )
    assert result["score"] < 70 and result["is_correct"] is False and "needs more work" in result["feedback"]


def test_short_answer_in_chinese() -> None:
    judge = scripted(verdict("partial"), explained("原子性指事务中的操作要么全部完成，要么全部不做。"))
    result = score(
        question_type="short_answer",
        user_answer="原子性和隔离性",
        correct_keywords=["原子性", "隔离性", "持久性"],
        category="technical",
        judge=judge,
        stem="ACID 包括哪些特性？",
        calibration=Calibration(weights={"bias": 0.0, "model": 0.0, "keywords": 1.5}, threshold=0.8, source="test"),
    )
    assert result["keyword_matches"] == ["原子性", "隔离性"]
    assert 70 <= result["score"] < 80 and "部分得分" in result["feedback"] and "持久性" in result["feedback"]
    assert "延伸阅读" in result["explanation"] and "你的答案：原子性和隔离性" in result["explanation"]
    assert_explained(result)


def test_grading_failure_gives_the_seeds_fallback() -> None:
    result = score(
        question_type="short_answer",
        user_answer="Atomicity",
        correct_keywords=["atomicity", "isolation"],
        category="business",
        judge=failing(),
    )
    assert result["score"] == 50 and result["is_correct"] is False and result["fallback"] is True
    assert result["keyword_matches"] == ["atomicity"] and "provisional score of 50" in result["feedback"]
    assert result["explanation"].startswith("Automatic grading was not available (the model could not be reached")
    assert "not correct" not in result["explanation"] and "ConnectionError" in result["fallback_detail"]
    assert_explained(result)  # written by code from what is known and the references


def test_fallback_in_chinese_is_all_chinese() -> None:
    result = score(
        question_type="short_answer",
        user_answer="原子性",
        correct_keywords=["原子性", "隔离性"],
        judge=failing(),
        lang="zh-CN",
    )
    assert result["feedback"] == "自动评分暂不可用（模型无法连接或未给出可用的回答）；暂给 50 分，不计为答对。"


def test_explanation_failure_keeps_an_exact_score() -> None:
    result = score(
        question_type="multiple_choice",
        user_answer="HAVING",
        correct_answer="HAVING",
        category="general",
        judge=failing(),
        lang="zh-CN",
    )
    assert result["score"] == 100 and result["is_correct"] is True and result["fallback"] is False
    assert result["explanation"].startswith("你的回答正确。")
    assert_explained(result)


def test_result_has_the_seeds_fields() -> None:
    result = score(question_type="multiple_choice", user_answer="B", correct_answer="B", judge=scripted(explained()))
    for field in (
        "attempt_id",
        "session_id",
        "question_id",
        "user_id",
        "is_correct",
        "score",
        "explanation",
        "keyword_matches",
        "feedback",
        "graded_at",
    ):
        assert field in result
    assert result["session_id"] == "sess_1" and len(result["attempt_id"]) == 36


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        (dict(session_id=""), ValueError, "session_id"),
        (dict(user_id=None), TypeError, "user_id"),
        (dict(question_id="  "), ValueError, "question_id"),
        (dict(question_type="essay"), ValueError, "question_type"),
        (dict(user_answer=""), ValueError, "user_answer"),
        (dict(correct_answer=None), ValueError, "correct_answer"),
        (dict(difficulty=11), ValueError, "difficulty"),
        (dict(difficulty=True), TypeError, "difficulty"),
        (dict(category=3), TypeError, "category"),
        (dict(question_type="short_answer", correct_keywords=None), ValueError, "correct_keywords"),
        (dict(question_type="short_answer", correct_keywords="atomicity"), TypeError, "correct_keywords"),
    ],
)
def test_bad_input_is_refused_before_the_model_is_asked(
    kwargs: dict[str, Any], error: type[Exception], field: str
) -> None:
    judge = scripted(explained())
    args = {**IDS, "question_type": "multiple_choice", "user_answer": "B", "correct_answer": "B", **kwargs}
    with pytest.raises(error, match=field):
        asyncio.run(score_and_explain(**args, judge=judge))
    assert judge.model.calls == 0


def test_a_budget_keeps_the_exact_score_when_the_explanation_is_slow() -> None:
    import time

    from ._scripts import silent

    started = time.monotonic()
    result = score(
        question_type="multiple_choice",
        user_answer="HAVING",
        correct_answer="HAVING",
        category="technical",
        judge=silent(30),
        budget=0.3,
    )
    assert time.monotonic() - started < 5
    assert result["score"] == 100 and result["is_correct"] is True and result["fallback"] is False
    assert_explained(result)
