"""A run whose process died between steps (not on an ask) is taken up by another runtime from its last checkpoint."""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from sqlalchemy import update

from consulta.runtime import Agent, RunStatus, Runtime, Store, read_tool
from consulta.runtime._store import runs


@pytest.mark.both_backends
def test_resume_after_a_crash_between_steps_continues_from_the_checkpoint(store_url: str) -> None:
    calls: list[str] = []

    @read_tool
    def lookup(name: str) -> dict:
        """Look up."""
        calls.append(name)
        return {"ok": True, "name": name}

    agent = Agent(app="toy", instructions="x", tools=(lookup,))
    hang = asyncio.Event()

    async def model_fn(messages, info):  # noqa: ANN001, ANN202
        n = sum(isinstance(m, ModelResponse) for m in messages)
        if n == 0:
            return ModelResponse(parts=[ToolCallPart("lookup", {"name": "a"}, tool_call_id="c0")])
        if n == 1 and not hang.is_set():
            await asyncio.Event().wait()  # the process "dies" here, during the second model request
        return ModelResponse(parts=[TextPart(f"done after {n} steps")])

    model = FunctionModel(model_fn)
    url = store_url

    async def scenario() -> None:
        first = Runtime(store=Store(url), resolve_model=lambda s: model)
        run = await first.start(agent, "go", model="f")
        for _ in range(200):
            checkpoint = first.store.load_checkpoint(run.id)
            if checkpoint and '"tool-return"' in checkpoint[1]:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("no checkpoint with the tool's result")
        # The first process is gone: its task never finishes and its lease goes stale.
        with first.store.engine.begin() as conn:
            conn.execute(update(runs).where(runs.c.id == run.id).values(owner="elsewhere:1:x", heartbeat_at=0))
        hang.set()
        second = Runtime(store=Store(url), resolve_model=lambda s: model)
        await second.resume(run.id, agent)
        done = await second.settled(run.id)
        assert done.status == RunStatus.finished, done.error
        assert done.output == "done after 1 steps"
        assert calls == ["a"]  # the tool did not run twice
        await second.aclose()
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()

    asyncio.run(scenario())
