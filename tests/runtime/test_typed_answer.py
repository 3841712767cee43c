"""`typed_answer(…, timeout=…)` and `label_probabilities(…, timeout=…)`: the whole answer is bounded, and the model
is told the timeout (or cancelled)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.runtime import label_probabilities, typed_answer


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


def test_an_answer_refused_every_try_says_the_last_reason() -> None:
    """The record of a failed consultation says why its last try was refused, not only that tries ran out."""
    from consulta.runtime import ToolError

    async def answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"ok": False})])

    def check(output: Verdict) -> None:
        raise ValueError("The explanation gives away the task's answer; use an example unrelated to the task.")

    with pytest.raises(ToolError) as info:
        asyncio.run(
            typed_answer(model=FunctionModel(answers), instructions="J.", prompt="?", output_type=Verdict, check=check)
        )
    assert info.value.error_code == "invalid_expert_output"
    assert "the last refusal: The explanation gives away the task's answer" in str(info.value)


class ReaderDouble:
    """A test double of a model that reads label probabilities (the embedded model does), after `delay_s` seconds."""

    def __init__(self, reading: dict[str, float], *, delay_s: float = 0.0) -> None:
        self.reading, self.delay_s = reading, delay_s
        self.cancelled = False

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        try:
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            self.cancelled = True  # the local model sets its cancel flag here and stops reading
            raise
        return self.reading


def test_label_probabilities_past_the_timeout_are_given_up_and_the_reading_cancelled() -> None:
    model = ReaderDouble({"yes": 1.0, "no": 0.0}, delay_s=60)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"no label probabilities within 0\.2 s"):
        asyncio.run(label_probabilities(model=model, system="Judge.", prompt="Ok?", labels=["yes", "no"], timeout=0.2))
    assert time.monotonic() - started < 5 and model.cancelled


def test_label_probabilities_within_the_timeout_are_the_reading() -> None:
    model = ReaderDouble({"no": 0.25, "yes": 0.75})
    read = asyncio.run(label_probabilities(model=model, system="Judge.", prompt="Ok?", labels=["yes", "no"], timeout=5))
    assert read == {"yes": 0.75, "no": 0.25} and list(read) == ["yes", "no"]


def test_a_model_without_label_probabilities_gives_none_and_a_bad_reading_is_refused() -> None:
    async def unused(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("a model that cannot read labels is not asked")

    labels = ["yes", "no"]
    assert asyncio.run(label_probabilities(model=FunctionModel(unused), system="J.", prompt="?", labels=labels)) is None
    for bad in ({"yes": 1.0}, {"yes": 1.5, "no": 0.0}, {"yes": 0.5, "no": 0.5, "maybe": 0.0}):
        with pytest.raises(ValueError, match="one in \\[0, 1\\] per label"):
            asyncio.run(label_probabilities(model=ReaderDouble(bad), system="J.", prompt="?", labels=labels))
