"""A guess becomes a question opened by the runtime: record_thaw with words that fit several records pauses on the
seed's `question` (the candidates as options, no model step in between); the answer runs the same call again with the
chosen tubes, and the model's next step sees the staged result."""

from __future__ import annotations

import asyncio
from pathlib import Path

from consulta.models import ScriptedModel
from consulta.runtime import AskStatus, RunStatus, Runtime

from .test_agent_flow import Harness, audit_lines, inventory, sha, tool_results  # noqa: F401  (fixture)

THAW = {"name": "record_thaw", "args": {"cell_line": "iPSC-KOLF2.1J"}}


def steps() -> list[dict]:
    return [{"tool_calls": [THAW]}, {"text": "Staged, waiting for your approval."}]


def opened(h: Harness, run_id: str):
    (ask,) = h.store.list_asks(run_id=run_id)
    assert ask.kind == "question" and ask.tool_call_id == "call_0_0"
    (question,) = ask.payload["questions"]
    assert len(question["options"]) == 3
    return ask, question["options"]


def test_ambiguous_thaw_asks_then_stages_the_chosen_tube(tmp_path: Path, inventory: Path) -> None:
    h = Harness(tmp_path, inventory, steps())
    before = sha(inventory)

    async def scenario() -> None:
        run = await h.run("Thaw an iPSC-KOLF2.1J tube")
        assert run.status == RunStatus.waiting
        ask, options = opened(h, run.id)
        assert h.store.list_plans(run_id=run.id) == []  # nothing staged before the answer
        assert "call_0_0" not in tool_results(h.store, run.id)  # the model never saw a refusal

        h.runtime.answer(ask.id, [options[1]])
        run = await h.runtime.settled(run.id)
        assert run.status == RunStatus.waiting  # now on the plan
        result = tool_results(h.store, run.id)["call_0_0"]
        assert result["staged"] is True
        (plan,) = h.store.list_plans(run_id=run.id)
        (item,) = plan.items
        chosen = ask.payload["rerun"]["args_for_option"][options[1]]
        assert (item["op"]["record_id"], item["op"]["positions"]) == (chosen["record_id"], chosen["positions"])
        await h.runtime.aclose()

    asyncio.run(scenario())
    assert sha(inventory) == before and audit_lines(inventory) == []


def test_answer_from_a_fresh_runtime_resumes_and_stages(tmp_path: Path, inventory: Path) -> None:
    h = Harness(tmp_path, inventory, steps())

    async def scenario() -> None:
        run = await h.run("Thaw an iPSC-KOLF2.1J tube")
        ask, options = opened(h, run.id)
        await h.runtime.aclose()

        model = ScriptedModel(steps())  # another process: its own model and runtime on the same store
        fresh = Runtime(store=h.store, resolve_model=lambda spec: model, ask_policy="defer")  # type: ignore[arg-type]
        fresh.register(h.agent)
        fresh.answer(ask.id, [options[0]])
        await fresh.resume(run.id, h.agent)
        run = await fresh.settled(run.id)
        assert run.status == RunStatus.waiting
        assert h.store.get_ask(ask.id).status == AskStatus.answered
        assert tool_results(h.store, run.id)["call_0_0"]["staged"] is True
        (plan,) = h.store.list_plans(run_id=run.id)
        chosen = ask.payload["rerun"]["args_for_option"][options[0]]
        assert plan.items[0]["op"]["record_id"] == chosen["record_id"]
        await fresh.aclose()

    asyncio.run(scenario())


def test_free_text_answer_runs_the_call_again_and_a_refusal_carries_the_answer(tmp_path: Path, inventory: Path) -> None:
    h = Harness(tmp_path, inventory, steps())
    before = sha(inventory)

    async def scenario() -> None:
        run = await h.run("Thaw an iPSC-KOLF2.1J tube")
        ask, _ = opened(h, run.id)
        h.runtime.answer(ask.id, ["whichever is oldest"])
        run = await h.runtime.settled(run.id)
        result = tool_results(h.store, run.id)["call_0_0"]
        assert result["ok"] is False and result["error_code"] == "ambiguous_tube"
        assert result["user_answer"] == "whichever is oldest"
        assert len(h.store.list_asks(status=None, run_id=run.id)) == 1  # not asked twice
        assert h.store.list_plans(run_id=run.id) == []
        assert run.status == RunStatus.finished
        await h.runtime.aclose()

    asyncio.run(scenario())
    assert sha(inventory) == before


def test_the_question_is_in_the_runs_language(tmp_path: Path, inventory: Path) -> None:
    h = Harness(tmp_path, inventory, steps())

    async def scenario() -> None:
        run = await h.run("取一管 iPSC-KOLF2.1J", lang="zh-CN")
        ask, _ = opened(h, run.id)
        (question,) = ask.payload["questions"]
        assert question["header"] == "哪一管" and "您指的是哪一个" in question["question"]
        await h.runtime.aclose()

    asyncio.run(scenario())
