"""At most `max_active_runs` runs advance at once; the others wait their turn and then finish."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from consulta.runtime import Agent, RunStatus, Runtime, Store


def test_no_more_than_max_active_runs_are_in_flight(tmp_path: Path) -> None:
    in_flight = 0
    peak = 0

    async def model_fn(messages, info):  # noqa: ANN001, ANN202
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(app="toy", instructions="x", tools=())
    runtime = Runtime(
        store=Store(f"sqlite:///{tmp_path}/s.db"), resolve_model=lambda s: FunctionModel(model_fn), max_active_runs=2
    )

    async def scenario() -> None:
        runs = [await runtime.start(agent, f"go {i}", model="f") for i in range(5)]
        done = [await runtime.settled(r.id) for r in runs]
        assert [r.status for r in done] == [RunStatus.finished] * 5
        await runtime.aclose()

    asyncio.run(scenario())
    assert peak == 2
