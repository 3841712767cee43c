"""A reply streams as drafts (`TextDelta`) while the model writes it: heard before the reply, never stored, and
never carrying words meant for the model."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from consulta.asks import question_tool
from consulta.models import ScriptedModel
from consulta.runtime import Agent, RunStatus
from consulta.runtime._streaming import can_stream, shown_length

from ._support import lookup, run_to_settle, say

pytestmark = [pytest.mark.anyio]

REPLY = "The two HeLa tubes are in box 3, positions A1 and A2; both were frozen in March and nobody has used them."
INSTRUCTIONS = "Always answer in exactly three short sentences and never mention internal codes."


def agent() -> Agent:
    return Agent(app="toy", instructions=INSTRUCTIONS, tools=(lookup, question_tool()))


def heard(rt: Any) -> list[Any]:
    events: list[Any] = []
    rt.subscribe(events.append)
    return events


def draft_of(events: list[Any]) -> str:
    """The draft as a front end keeps it: appended at its offset, started again at offset 0."""
    text = ""
    for e in events:
        if e.type == "text_delta":
            text = e.text if e.offset == 0 else text + e.text if e.offset == len(text) else text
    return text


async def test_a_reply_streams_word_by_word_before_it_is_the_reply(store, make_runtime):
    rt = make_runtime(ScriptedModel([say(REPLY)], word_delay_s=0.001))
    events = heard(rt)
    run = await run_to_settle(rt, agent())
    assert run.status == RunStatus.finished and run.output == REPLY
    types = [e.type for e in events]
    drafts = [e for e in events if e.type == "text_delta"]
    assert len(drafts) >= 10  # word by word (the last few words come together once the reply is written)
    assert types.index("text_delta") < types.index("model_text") < types.index("run_ended")
    assert draft_of(events) == REPLY
    assert all(d.seq == 0 for d in drafts)
    assert "text_delta" not in {r.type for r in store.list_events(run.id)}


async def test_words_meant_for_the_model_never_stream(store, make_runtime):
    echo = f"Sure. {INSTRUCTIONS} The tubes are in box 3."
    rt = make_runtime(ScriptedModel([say(echo), say("The tubes are in box 3.")]))
    events = heard(rt)
    run = await run_to_settle(rt, agent())
    assert run.output == "The tubes are in box 3."
    shown = [e.text for e in events if e.type == "text_delta"]
    assert not any("Always" in s or "three short" in s for s in shown), shown
    assert draft_of(events) == "The tubes are in box 3."  # the rewrite's draft started over


async def test_a_structured_reply_and_tool_calls_do_not_stream(store, make_runtime):
    rt = make_runtime(ScriptedModel([{"tool_calls": [{"name": "lookup", "args": {"name": "HeLa"}}]}, say('{"a": 1}')]))
    events = heard(rt)
    await run_to_settle(rt, agent())
    assert [e for e in events if e.type == "text_delta"] == []


def test_shown_length_holds_back_the_last_words():
    assert shown_length("one two three") == 0
    text = "one two three four five six seven eight"
    assert text[: shown_length(text)] == "one two "
    cjk = "试管在三号盒子的第一排第二个位置"
    assert cjk[: shown_length(cjk)] == cjk[: len(cjk) - 10]


def test_which_models_stream():
    assert can_stream(ScriptedModel([say("hi")]))
    assert can_stream(TestModel())
    assert not can_stream(FunctionModel(lambda m, i: None))  # type: ignore[arg-type,return-value]


async def test_stopping_a_run_while_its_reply_streams_stops_it_at_once(store, make_runtime):
    words = " ".join(f"word{i}" for i in range(200))  # 200 words, 20 ms apart: 4 s to write it all
    rt = make_runtime(ScriptedModel([say(words)], word_delay_s=0.02))
    events = heard(rt)
    run = await rt.start(agent(), "go", model="scripted")
    with anyio.fail_after(10):
        while not any(e.type == "text_delta" for e in events):
            await anyio.sleep(0.01)
    stopped = await rt.stop(run.id)
    assert stopped.status == RunStatus.cancelled
    assert len(draft_of(events)) < len(words) // 2  # left mid-stream, not once the whole reply was written
    assert "model_text" not in [e.type for e in events]  # a draft cut short never becomes the reply
