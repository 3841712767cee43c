"""`consulta mcp quiz` serves all six of the seed's tools (with its names and inputs) to the official MCP client, in
memory and over stdio; bad input is a structured `invalid_arguments` error naming the field, and changes nothing."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.client.transports import StdioTransport
from sqlalchemy import func, select

import consulta
from consulta.apps.quiz import TOOL_NAMES, bank_items
from consulta.apps.quiz._db import questions
from consulta.config import Settings
from consulta.frontends.mcp import build_server
from consulta.runtime import Store

from .conftest import USER, write_script

ROUND = "sess_mcp_1_2025-11-06T10:30:00Z"


@pytest.fixture
def server(tmp_path: Path) -> FastMCP:
    script = write_script(tmp_path / "script.json")
    settings = Settings(
        home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang="en"
    )
    return build_server(app="quiz", settings=settings)


async def call(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.structured_content is not None, result
    return result.is_error, result.structured_content


def generated(tmp_path: Path) -> int:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    try:
        with store.engine.connect() as conn:
            return conn.execute(
                select(func.count()).select_from(questions).where(questions.c.source == "generated")
            ).scalar_one()
    finally:
        store.engine.dispose()


def test_all_six_tools_are_served_with_the_seeds_inputs(server: FastMCP) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t for t in await client.list_tools()}

    tools = asyncio.run(scenario())
    assert set(TOOL_NAMES) <= set(tools)
    params = {name: set(tools[name].input_schema["properties"]) for name in TOOL_NAMES}
    assert params["get_user_profile"] == {"user_id"}
    assert {"interests", "difficulty", "category"} <= params["search_question_templates"]
    assert {"difficulty", "category"} <= params["get_difficulty_keywords"]
    assert {"stem", "question_type", "choices", "correct_answer", "batch"} == params["validate_question_quality"]
    assert {
        "item_type",
        "stem",
        "choices",
        "correct_key",
        "correct_keywords",
        "difficulty",
        "categories",
        "round_id",
        "validation_score",
        "explanation",
    } <= params["save_generated_question"]
    assert {
        "session_id",
        "user_id",
        "question_id",
        "question_type",
        "user_answer",
        "correct_answer",
        "correct_keywords",
        "difficulty",
        "category",
        "stem",  # beyond the seed's inputs: the question's text, which a short answer is graded against
    } == params["score_and_explain"]
    assert tools["search_question_templates"].input_schema["properties"]["difficulty"]["maximum"] == 10


def test_the_tools_work_and_bad_input_names_the_field_and_changes_nothing(server: FastMCP, tmp_path: Path) -> None:
    item = next(i for i in bank_items() if i.type == "multiple_choice" and i.lang == "en" and i.topic == "Git")

    async def scenario() -> dict[str, tuple[bool, dict[str, Any]]]:
        out: dict[str, tuple[bool, dict[str, Any]]] = {}
        async with Client(server) as client:
            out["profile"] = await call(client, "get_user_profile", {"user_id": USER})
            out["bad_profile"] = await call(client, "get_user_profile", {"user_id": "z" * 36})
            out["short_profile"] = await call(client, "get_user_profile", {"user_id": "42"})
            out["keywords"] = await call(client, "get_difficulty_keywords", {"difficulty": 3, "category": "general"})
            out["bad_keywords"] = await call(
                client, "get_difficulty_keywords", {"difficulty": 11, "category": "general"}
            )
            out["templates"] = await call(
                client, "search_question_templates", {"interests": ["Finance"], "difficulty": 6, "category": "business"}
            )
            out["bad_templates"] = await call(
                client, "search_question_templates", {"interests": [], "difficulty": 6, "category": "business"}
            )
            out["bad_save"] = await call(
                client,
                "save_generated_question",
                {
                    "item_type": "multiple_choice",
                    "stem": "Which?",
                    "choices": ["a", "b", "c", "d"],
                    "correct_key": "e",
                    "round_id": ROUND,
                },
            )
            out["bad_round"] = await call(
                client,
                "save_generated_question",
                {"item_type": "true_false", "stem": "True?", "correct_key": "True", "round_id": "no-round-here"},
            )
            out["save"] = await call(
                client,
                "save_generated_question",
                {
                    "item_type": "true_false",
                    "stem": "HTTP/1.1 keeps connections open by default.",
                    "correct_key": "True",
                    "round_id": ROUND,
                    "difficulty": 4,
                    "categories": ["technical"],
                    "validation_score": 0.9,
                },
            )
            out["bad_validate"] = await call(
                client, "validate_question_quality", {"stem": "What?", "question_type": "essay"}
            )
            out["validate"] = await call(
                client,
                "validate_question_quality",
                {
                    "stem": item.stem,
                    "question_type": "multiple_choice",
                    "choices": item.choices,
                    "correct_answer": item.answer,
                },
            )
            out["score"] = await call(
                client,
                "score_and_explain",
                {
                    "session_id": "s1",
                    "user_id": USER,
                    "question_id": item.id,
                    "question_type": "multiple_choice",
                    "user_answer": item.answer,
                    "correct_answer": item.answer,
                    "difficulty": item.difficulty,
                    "category": item.category,
                },
            )
            out["bad_score"] = await call(
                client,
                "score_and_explain",
                {
                    "session_id": "s1",
                    "user_id": USER,
                    "question_id": item.id,
                    "question_type": "multiple_choice",
                    "user_answer": "x",
                },
            )
        return out

    out = asyncio.run(scenario())
    assert out["profile"] == (
        False,
        {
            "user_id": USER,
            "self_level": "beginner",
            "years_experience": 0,
            "job_role": "Unknown",
            "duty": "Not specified",
            "interests": [],
            "previous_score": 0,
        },
    )
    for key, field in [
        ("bad_profile", "user_id"),
        ("short_profile", "user_id"),
        ("bad_keywords", "difficulty"),
        ("bad_templates", "interests"),
        ("bad_save", "correct_key"),
        ("bad_round", "round_id"),
        ("bad_validate", "question_type"),
    ]:
        is_error, body = out[key]
        assert is_error and body["ok"] is False and body["error_code"] == "invalid_arguments", (key, body)
        assert body["field"].split(".")[0] == field, (key, body)
    assert out["keywords"][1]["difficulty"] == 3 and out["keywords"][1]["keywords"]
    assert out["templates"][1]["result"] and all(t["domain"] == "Finance" for t in out["templates"][1]["result"])
    assert out["save"][1]["success"] is True
    assert out["validate"][1]["recommendation"] == "pass" and out["validate"][1]["final_score"] >= 0.85
    assert out["score"][1]["is_correct"] is True and out["score"][1]["score"] == 100
    bad_score = out["bad_score"][1]
    assert (
        out["bad_score"][0]
        and bad_score["error_code"] == "invalid_arguments"
        and bad_score["field"] == "correct_answer"
    )
    assert generated(tmp_path) == 1  # only the good save


@pytest.mark.subprocess  # `consulta mcp quiz` as a child process
def test_over_stdio_with_the_official_client(tmp_path: Path) -> None:
    script = write_script(tmp_path / "script.json")
    src = str(Path(consulta.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "CONSULTA_HOME": str(tmp_path),
        "CONSULTA_MODEL": f"scripted:{script}",
        "CONSULTA_LANG": "en",
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    transport = StdioTransport(command=sys.executable, args=["-m", "consulta", "mcp", "quiz"], env=env)

    async def scenario() -> tuple[set[str], tuple[bool, dict[str, Any]], tuple[bool, dict[str, Any]]]:
        async with Client(transport, timeout=120) as client:
            names = {t.name for t in await client.list_tools()}
            good = await call(
                client, "get_difficulty_keywords", {"difficulty": 8, "category": "technical", "lang": "zh-CN"}
            )
            bad = await call(
                client, "search_question_templates", {"interests": ["SQL"], "difficulty": 5, "category": "astronomy"}
            )
            return names, good, bad

    names, good, bad = asyncio.run(scenario())
    assert set(TOOL_NAMES) <= names
    assert good[0] is False and good[1]["category"] == "technical" and any("预写日志" in k for k in good[1]["keywords"])
    assert bad[0] is True and bad[1]["error_code"] == "invalid_arguments" and bad[1]["field"] == "category"
