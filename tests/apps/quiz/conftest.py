"""quiz test fixtures: a store in a temporary folder, the six tools over it, scripted models for the judge and the
generator (each a script file, as `--model scripted:PATH` takes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.quiz import QuizTools, RetryQueue
from consulta.models import ScriptedModel
from consulta.runtime import Store

USER = "123e4567-e89b-12d3-a456-426614174000"


def final(**output: Any) -> dict[str, Any]:
    """A scripted step answering with one typed output (pydantic-ai's output tool)."""
    return {"tool_calls": [{"name": "final_result", "args": output}]}


def judge_agents(rating: int = 5) -> list[dict[str, Any]]:
    """Scripts for quiz-judge's three requests (its instructions' first words pick the script)."""
    return [
        {
            "when": "You review test items",
            "steps": [final(clarity=rating, answer_correct=rating, distractors=rating, fairness=rating, reasons=[])],
        },
        {"when": "You are a teacher marking", "steps": [final(verdict="correct")]},
        {
            "when": "You explain a test item",
            "steps": [
                final(
                    explanation="The keyed answer follows from the definition given in the references.",
                    key_points=["Read the definition."],
                )
            ],
        },
    ]


def submit(*questions: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "submit_questions", "args": {"questions": list(questions)}}]}


def write_script(
    path: Path,
    *,
    generator: list[dict[str, Any]] | None = None,
    rating: int = 5,
    rewrite: dict[str, Any] | None = None,
) -> Path:
    """A script for the generator's steps, the judge's requests (all rated `rating`) and, with `rewrite`, the draft
    every rewrite request answers with (each rewrite is its own conversation: the same answer each time)."""
    agents = judge_agents(rating)
    if generator is not None:
        agents.append({"when": "You write test questions", "steps": generator})
    if rewrite is not None:
        agents.append({"when": "You revise test questions", "steps": [final(question=rewrite)]})
    path.write_text(json.dumps({"agents": agents}), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(f"sqlite:///{tmp_path}/consulta.db")
    yield s
    s.engine.dispose()


@pytest.fixture
def tools(store: Store, tmp_path: Path) -> QuizTools:
    from consulta.apps.quiz._judge import ModelJudge

    return QuizTools(
        store.engine,
        queue=RetryQueue(tmp_path / "retry.jsonl"),
        judge=ModelJudge(ScriptedModel({"agents": judge_agents()})),
    )
