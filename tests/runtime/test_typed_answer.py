"""`typed_answer(…, timeout=…)`: the whole answer is bounded, and the model is told the timeout."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.runtime import typed_answer


class Verdict(BaseModel):
    ok: bool


def test_a_model_past_the_timeout_is_given_up_and_was_told_the_timeout() -> None:
    told: list[object] = []

    async def never_answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        told.append((info.model_settings or {}).get("timeout"))
        await asyncio.sleep(60)
        raise AssertionError("not reached")

    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"no Verdict within 0\.2 s"):
        asyncio.run(
            typed_answer(
                model=FunctionModel(never_answers),
                instructions="Judge.",
                prompt="Is it ok?",
                output_type=Verdict,
                timeout=0.2,
            )
        )
    assert time.monotonic() - started < 5
    assert told == [0.2]


def test_an_answer_within_the_timeout_is_the_answer() -> None:
    async def answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        assert info.output_tools
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"ok": True})])

    answer = asyncio.run(
        typed_answer(
            model=FunctionModel(answers), instructions="Judge.", prompt="Is it ok?", output_type=Verdict, timeout=5
        )
    )
    assert answer.output == Verdict(ok=True)
