"""Seed 004's tools 1, 2, 3 and 5 against a real SQLite store: the seed's inputs and errors, fallbacks, retries, the
one-hour cache of tool 3 (an injected clock), idempotent saves, round ids split from the right; and the same tools as
runtime tools, where bad input is `invalid_arguments` naming the field."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError

from consulta.apps.quiz import (
    DEFAULT_KEYWORDS,
    DEFAULT_PROFILE,
    KEYWORD_CACHE_TTL,
    TIMEOUTS,
    InvalidArgument,
    InvalidArgumentType,
    Profile,
    QuizTools,
    RetryQueue,
    parse_round_id,
    save_profile,
)
from consulta.apps.quiz import _profiles as profiles_module
from consulta.apps.quiz._db import questions
from consulta.runtime import ToolError, argument_validator, invalid_arguments_result

from .conftest import USER

ROUND = "sess_abc_1_2025-11-06T10:30:00Z"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# ---- tool 1 -------------------------------------------------------------------------------------------------------


def test_tool1_gives_the_stored_profile_and_the_default_for_an_unknown_user(tools: QuizTools) -> None:
    assert run(tools.get_user_profile(USER)) == {"user_id": USER, **DEFAULT_PROFILE}
    save_profile(
        tools.engine,
        Profile(
            user_id=USER,
            self_level="advanced",
            years_experience=7,
            job_role="Data engineer",
            duty="Pipelines",
            interests=["SQL", "Python"],
            previous_score=72,
        ),
    )
    got = run(tools.get_user_profile(USER))
    assert got == {
        "user_id": USER,
        "self_level": "advanced",
        "years_experience": 7,
        "job_role": "Data engineer",
        "duty": "Pipelines",
        "interests": ["SQL", "Python"],
        "previous_score": 72.0,
    }
    assert "_fallback" not in got


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("not-a-uuid", ValueError),
        ("", ValueError),
        (42, TypeError),
        (None, TypeError),
        ("123e4567e89b12d3a456426614174000", ValueError),
    ],
)
def test_tool1_refuses_what_is_not_a_uuid(tools: QuizTools, value: Any, error: type[Exception]) -> None:
    with pytest.raises(error) as raised:
        run(tools.get_user_profile(value))
    assert isinstance(raised.value, InvalidArgument | InvalidArgumentType) and raised.value.field == "user_id"


def test_tool1_retries_three_times_with_backoff_then_falls_back(
    tools: QuizTools, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[float] = []

    def flaky(engine: Any, user_id: str) -> None:
        calls.append(time.monotonic())
        raise OperationalError("SELECT", {}, Exception("database is locked"))

    monkeypatch.setattr("consulta.apps.quiz._tools.load_profile", flaky)
    got = run(tools.get_user_profile(USER))
    assert len(calls) == 4  # the first try and three retries, all within the tool's 3 s
    assert got == {"user_id": USER, **DEFAULT_PROFILE, "_fallback": True}
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    assert gaps[0] >= 0.18 and gaps[1] >= 0.38 and gaps[2] >= 0.78  # 0.2, 0.4, 0.8 s: exponential backoff

    calls.clear()
    outcomes = [
        OperationalError("SELECT", {}, Exception("locked")),
        OperationalError("SELECT", {}, Exception("locked")),
        None,
    ]

    def recovers(engine: Any, user_id: str) -> Any:
        calls.append(0.0)
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return Profile(user_id=USER, self_level="expert")

    monkeypatch.setattr("consulta.apps.quiz._tools.load_profile", recovers)
    assert run(tools.get_user_profile(USER))["self_level"] == "expert" and len(calls) == 3


def test_tool1_falls_back_when_its_table_is_gone(tools: QuizTools) -> None:
    with tools.engine.begin() as conn:
        conn.execute(text("DROP TABLE quiz_people"))
    assert run(tools.get_user_profile(USER)) == {"user_id": USER, **DEFAULT_PROFILE, "_fallback": True}


# ---- tool 2 -------------------------------------------------------------------------------------------------------


def test_tool2_filters_by_category_interests_and_difficulty_within_one_and_a_half(tools: QuizTools) -> None:
    found = run(tools.search_question_templates(["SQL"], 5, "technical"))
    assert found and len(found) <= 10
    assert all(abs(t["avg_difficulty_score"] - 5) <= 1.5 for t in found)
    assert all("sql" in t["domain"].casefold() for t in found)
    assert {
        "id",
        "stem",
        "type",
        "choices",
        "correct_answer",
        "correct_rate",
        "usage_count",
        "avg_difficulty_score",
    } <= set(found[0])
    assert run(tools.search_question_templates(["SQL"], 5, "business")) == []
    zh = run(tools.search_question_templates(["项目管理"], 4, "business", "zh-CN"))
    assert zh and all(t["lang"] == "zh-CN" for t in zh)
    assert run(tools.search_question_templates(["underwater basket weaving"], 5, "general")) == []


@pytest.mark.parametrize(
    ("args", "error", "field"),
    [
        (([], 5, "technical"), ValueError, "interests"),
        ((["x"] * 11, 5, "technical"), ValueError, "interests"),
        ((["x" * 51], 5, "technical"), ValueError, "interests"),
        ((["ok", ""], 5, "technical"), ValueError, "interests"),
        (("SQL", 5, "technical"), TypeError, "interests"),
        (([1], 5, "technical"), TypeError, "interests"),
        ((["SQL"], 0, "technical"), ValueError, "difficulty"),
        ((["SQL"], 11, "technical"), ValueError, "difficulty"),
        ((["SQL"], "5", "technical"), TypeError, "difficulty"),
        ((["SQL"], 5.5, "technical"), TypeError, "difficulty"),
        ((["SQL"], True, "technical"), TypeError, "difficulty"),
        ((["SQL"], 5, "science"), ValueError, "category"),
    ],
)
def test_tool2_refuses_bad_input(tools: QuizTools, args: tuple[Any, ...], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as raised:
        run(tools.search_question_templates(*args))
    assert raised.value.field == field  # type: ignore[attr-defined]


def test_tool2_gives_an_empty_list_when_its_time_bound_passes(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(self: QuizTools, **_: Any) -> list[Any]:
        threading.Event().wait(1.0)
        return [{"never": True}]

    monkeypatch.setattr(QuizTools, "_fetch_templates", slow)
    quick = QuizTools(
        store.engine, queue=RetryQueue(tmp_path / "q.jsonl"), timeouts={**TIMEOUTS, "search_question_templates": 0.2}
    )
    started = time.monotonic()
    assert run(quick.search_question_templates(["SQL"], 5, "technical")) == []
    assert time.monotonic() - started < 0.9


# ---- tool 3 -------------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_tool3_gives_keywords_concepts_and_examples_and_caches_them_for_one_hour(
    store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    reads: list[tuple[Any, ...]] = []
    real = QuizTools._fetch_keywords

    def fetch(self: QuizTools, difficulty: int, category: str, lang: str) -> Any:
        reads.append((difficulty, category, lang))
        return real(self, difficulty, category, lang)

    monkeypatch.setattr(QuizTools, "_fetch_keywords", fetch)
    tools = QuizTools(store.engine, queue=RetryQueue(tmp_path / "q.jsonl"), clock=clock)
    got = run(tools.get_difficulty_keywords(7, "technical"))
    assert got["difficulty"] == 7 and got["category"] == "technical"
    assert 5 <= len(got["keywords"]) <= 20 and got["concepts"]
    assert all({"name", "acronym", "definition", "key_points"} <= set(c) for c in got["concepts"])
    assert got["example_questions"] and all(e["difficulty_score"] == 7.0 for e in got["example_questions"])
    assert run(tools.get_difficulty_keywords(7, "technical")) == got
    assert len(reads) == 1
    clock.now += KEYWORD_CACHE_TTL - 1
    run(tools.get_difficulty_keywords(7, "technical"))
    assert len(reads) == 1
    clock.now += 2  # past the hour
    run(tools.get_difficulty_keywords(7, "technical"))
    assert len(reads) == 2
    zh = run(tools.get_difficulty_keywords(7, "technical", "zh-CN"))
    assert zh["keywords"] != got["keywords"] and len(reads) == 3


def test_tool3_cache_is_safe_under_concurrent_use(tools: QuizTools) -> None:
    async def many() -> list[Any]:
        return await asyncio.gather(
            *(tools.get_difficulty_keywords(d % 10 + 1, ("technical", "business", "general")[d % 3]) for d in range(60))
        )

    results: list[list[Any]] = []

    def worker() -> None:
        results.append(asyncio.run(many()))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert len(results) == 4 and all(r == results[0] for r in results)
    assert all(r["difficulty"] == d % 10 + 1 for d, r in enumerate(results[0]))


def test_tool3_falls_back_to_the_default_keywords_and_does_not_cache_the_fallback(tools: QuizTools) -> None:
    with tools.engine.begin() as conn:
        conn.execute(text("ALTER TABLE quiz_keywords RENAME TO quiz_keywords_away"))
    got = run(tools.get_difficulty_keywords(4, "business"))
    assert got == {"difficulty": 4, "category": "business", **DEFAULT_KEYWORDS, "_fallback": True}
    with tools.engine.begin() as conn:
        conn.execute(text("ALTER TABLE quiz_keywords_away RENAME TO quiz_keywords"))
    assert "_fallback" not in run(tools.get_difficulty_keywords(4, "business"))


@pytest.mark.parametrize(
    ("args", "error"),
    [((0, "general"), ValueError), ((5, "GENERALS"), ValueError), (("5", "general"), TypeError), ((5, 3), TypeError)],
)
def test_tool3_refuses_bad_input(tools: QuizTools, args: tuple[Any, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        run(tools.get_difficulty_keywords(*args))


# ---- tool 5 -------------------------------------------------------------------------------------------------------


def count_questions(tools: QuizTools, source: str = "generated") -> int:
    with tools.engine.connect() as conn:
        return conn.execute(
            select(func.count()).select_from(questions).where(questions.c.source == source)
        ).scalar_one()


def test_tool5_saves_once_and_splits_the_round_id_from_the_right(tools: QuizTools) -> None:
    saved = run(
        tools.save_generated_question(
            "multiple_choice",
            "Which SQL keyword removes duplicate rows from a result?",
            ["DISTINCT", "UNIQUE", "GROUP", "ONLY"],
            "DISTINCT",
            difficulty=3,
            categories=["technical"],
            round_id=ROUND,
            validation_score=0.91,
            explanation="SELECT DISTINCT drops duplicates.",
        )
    )
    assert (
        saved["success"] is True
        and saved["round_id"] == ROUND
        and saved["answer_schema"]
        == {"correct_key": "DISTINCT", "validation_score": 0.91, "explanation": "SELECT DISTINCT drops duplicates."}
    )
    again = run(
        tools.save_generated_question(
            "multiple_choice",
            "  which SQL keyword removes duplicate rows from a result? ",
            ["distinct", "unique", "group", "only"],
            "distinct",
            difficulty=3,
            categories=["technical"],
            round_id=ROUND,
        )
    )
    assert again["success"] is True and again["question_id"] == saved["question_id"] and again["already_saved"] is True
    assert count_questions(tools) == 1
    with tools.engine.connect() as conn:
        row = conn.execute(select(questions).where(questions.c.id == saved["question_id"])).mappings().one()
    assert (row["session_id"], row["round_number"]) == ("sess_abc", 1)
    assert parse_round_id("a_b_c_12_2025-01-01T00:00:00Z") == ("a_b_c", 12, "2025-01-01T00:00:00Z")


def test_tool5_normalises_true_false_and_keeps_short_answer_keywords(tools: QuizTools) -> None:
    tf = run(
        tools.save_generated_question(
            "true_false", "TCP guarantees in-order delivery.", correct_key="true", round_id=ROUND
        )
    )
    assert tf["answer_schema"]["correct_key"] == "True" and tf["category"] == "general"
    sa = run(
        tools.save_generated_question(
            "short_answer", "Name the ACID properties.", correct_keywords=["atomicity", "durability"], round_id=ROUND
        )
    )
    assert sa["answer_schema"] == {"correct_keywords": ["atomicity", "durability"]}


GOOD = {
    "item_type": "multiple_choice",
    "stem": "Q?",
    "choices": ["a", "b", "c", "d"],
    "correct_key": "a",
    "round_id": ROUND,
}


@pytest.mark.parametrize(
    ("change", "error", "field"),
    [
        ({"item_type": "essay"}, ValueError, "item_type"),
        ({"item_type": 3}, TypeError, "item_type"),
        ({"stem": ""}, ValueError, "stem"),
        ({"stem": "x" * 2001}, ValueError, "stem"),
        ({"choices": ["a", "b", "c"]}, ValueError, "choices"),
        ({"choices": ["a", "b", "c", "d", "e", "f"]}, ValueError, "choices"),
        ({"choices": ["a", "a", "c", "d"]}, ValueError, "choices"),
        ({"correct_key": "z"}, ValueError, "correct_key"),
        ({"correct_key": None}, ValueError, "correct_key"),
        ({"item_type": "true_false", "choices": None, "correct_key": "maybe"}, ValueError, "correct_key"),
        ({"item_type": "short_answer", "choices": None, "correct_key": None}, ValueError, "correct_keywords"),
        ({"item_type": "short_answer", "correct_keywords": []}, ValueError, "correct_keywords"),
        ({"difficulty": 0}, ValueError, "difficulty"),
        ({"difficulty": "hard"}, TypeError, "difficulty"),
        ({"categories": []}, ValueError, "categories"),
        ({"categories": ["science"]}, ValueError, "categories"),
        ({"categories": "technical"}, TypeError, "categories"),
        ({"round_id": ""}, ValueError, "round_id"),
        ({"round_id": "sess_x_2025"}, ValueError, "round_id"),
        ({"round_id": "sess_one_2025-01-01"}, ValueError, "round_id"),
        ({"validation_score": 1.5}, ValueError, "validation_score"),
    ],
)
def test_tool5_refuses_bad_input_and_saves_nothing(
    tools: QuizTools, change: dict[str, Any], error: type[Exception], field: str
) -> None:
    with pytest.raises(error) as raised:
        run(tools.save_generated_question(**{**GOOD, **change}))
    assert raised.value.field == field  # type: ignore[attr-defined]
    assert count_questions(tools) == 0 and len(tools.queue) == 0


# ---- the runtime tools --------------------------------------------------------------------------------------------


def test_as_runtime_tools_bad_input_is_invalid_arguments_naming_the_field(tools: QuizTools) -> None:
    defs = {d.name: d for d in tools.tool_defs()}
    assert list(defs) == [
        "get_user_profile",
        "search_question_templates",
        "get_difficulty_keywords",
        "validate_question_quality",
        "save_generated_question",
        "score_and_explain",
    ]
    with pytest.raises(ToolError) as raised:
        run(defs["get_user_profile"].call(user_id="z" * 36))
    assert raised.value.to_result()["error_code"] == "invalid_arguments" and raised.value.field == "user_id"
    with pytest.raises(ToolError) as raised:
        run(
            defs["save_generated_question"].call(
                item_type="multiple_choice", stem="Q?", round_id="bad", choices=["a", "b", "c", "d"], correct_key="a"
            )
        )
    assert raised.value.field == "round_id"
    check = argument_validator(defs["search_question_templates"])
    with pytest.raises(ValidationError) as schema:
        check({"interests": ["SQL"], "difficulty": 12, "category": "technical"})
    assert invalid_arguments_result("search_question_templates", schema.value)["field"] == "difficulty"
    assert count_questions(tools) == 0
    assert profiles_module.DEFAULT_PROFILE == DEFAULT_PROFILE
