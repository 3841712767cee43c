"""`Agent.tool_choice`: before each model request the agent narrows the tools the model must call one of, from the
run's state; the model is told through the request's `tool_choice` setting (every tool stays declared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.runtime import Agent, ConfigError, RunStatus, Store, read_tool


def test_each_step_gets_the_choice_the_runs_state_calls_for(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    inspected: list[str] = []

    @read_tool
    def inspect_file(name: str) -> dict[str, Any]:
        """Inspect an uploaded file."""
        inspected.append(name)
        return {"ok": True, "rows": 3}

    @read_tool
    def submit(summary: str) -> dict[str, Any]:
        """Submit the plan."""
        return {"ok": True}

    seen: list[tuple[Any, list[str]]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(((info.model_settings or {}).get("tool_choice"), sorted(t.name for t in info.function_tools)))
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("inspect_file", {"name": "data.csv"})])
        if len(seen) == 2:
            return ModelResponse(parts=[ToolCallPart("submit", {"summary": "ok"})])
        return ModelResponse(parts=[TextPart("Done.")])

    agent = Agent(
        app="t",
        instructions="Plan.",
        tools=(inspect_file, submit),
        tool_choice=lambda run_id: ["inspect_file"] if not inspected else None,
    )
    run = run_once(store, agent, "Plan for data.csv.", FunctionModel(model))
    assert run.status == RunStatus.finished
    assert seen == [
        (["inspect_file"], ["inspect_file", "submit"]),
        (None, ["inspect_file", "submit"]),
        (None, ["inspect_file", "submit"]),
    ]


def test_choosing_a_tool_the_agent_lacks_is_a_config_error() -> None:
    @read_tool
    def only(x: int) -> int:
        """The only tool."""
        return x

    agent = Agent(app="t", instructions="x", tools=(only,), tool_choice=lambda run_id: ["missing"])
    with pytest.raises(ConfigError, match="missing"):
        agent.choose_tools("run_1")
    assert Agent(app="t", instructions="x", tools=(only,)).choose_tools("run_1") is None
