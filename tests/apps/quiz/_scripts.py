"""Test doubles for the quiz judge: a scripted model's typed answers, a model that fails, one that never answers; a
short answer to grade."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.apps.quiz._grading import ShortAnswer
from consulta.apps.quiz._judge import ModelJudge


def final(**output: Any) -> dict[str, Any]:
    """A scripted step answering with one typed output."""
    return {"tool_calls": [{"name": "final_result", "args": output}]}


def rating(c: int = 5, a: int = 5, d: int = 5, f: int = 5, reasons: list[str] | None = None) -> dict[str, Any]:
    return final(clarity=c, answer_correct=a, distractors=d, fairness=f, reasons=reasons or [])


def scripted(*steps: dict[str, Any], timeout: float = 10.0) -> ModelJudge:
    """A judge whose model answers each request with the next step, across runs (each judgment is its own run)."""
    queue = list(steps)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = queue.pop(0) if queue else {"text": "(no more steps)"}
        parts: list[Any] = [TextPart(step["text"])] if "text" in step else []
        parts += [ToolCallPart(c["name"], c["args"]) for c in step.get("tool_calls", [])]
        return ModelResponse(parts=parts)

    return ModelJudge(CountingModel(respond), timeout=timeout)


class CountingModel(FunctionModel):
    """A FunctionModel that counts its requests."""

    def __init__(self, function: Any) -> None:
        self.calls = 0

        def counted(messages: list[ModelMessage], info: AgentInfo) -> Any:
            self.calls += 1
            return function(messages, info)

        super().__init__(counted)


def failing() -> ModelJudge:
    def boom(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError("the model server is gone")

    return ModelJudge(CountingModel(boom), timeout=5)


def silent(timeout: float = 0.2) -> ModelJudge:
    async def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(60)
        raise AssertionError("unreachable")

    return ModelJudge(FunctionModel(never), timeout=timeout)


def short_answer(**changes: Any) -> ShortAnswer:
    """A short answer to grade (an answer naming the item's one keyword), with `changes`."""
    fields: dict[str, Any] = {
        "session_id": "s",
        "user_id": "u",
        "question_id": "q",
        "answer": "join",
        "keywords": ["join"],
        "difficulty": 4,
        "category": "business",
        "lang": "en",
    }
    return ShortAnswer(**{**fields, **changes})
