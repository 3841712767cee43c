"""The scripted model — a test double: it replays a fixed script of responses. For tests and exact offline demos.

A script is a list of steps for the first turn, or `{"turns": [[steps of turn 1], [steps of turn 2], ...]}` for a
conversation of several user messages. Step i of a turn is the model's i-th response since the user's message
(counted from the messages, so a run resumed in another process continues the same script). A step is
`{"text": "..."}` or `{"tool_calls": [{"name": "...", "args": {...}}]}`. When the script runs out, the model says so.

Several agents sharing one scripted model (an orchestrator and the experts it consults) each get their own script:
`{"agents": [{"when": "words of its instructions", "steps": [...]}, ...]}` (or `"turns"`); the first whose `when`
appears in the agent's instructions is played.

Its responses stream too (a step's text word by word, `word_delay_s` apart: the argument, or a top-level
`word_delay_s` of the script's mapping), so that front ends can be tested on a reply that appears as it is written.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from ruamel.yaml import YAML

from ..runtime import ConfigError
from ._replay import ReplayedStream

__all__ = ["ScriptedModel", "load_script"]


def load_script(path: Path) -> list[dict[str, Any]]:
    """Read a script from a YAML or JSON file; a malformed file is a ConfigError naming the step."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"Cannot read the model script {path}: {error}") from error
    if isinstance(data, dict) and isinstance(data.get("agents"), list):
        for agent in data["agents"]:
            if not isinstance(agent, dict) or not isinstance(agent.get("when"), str):
                raise ConfigError(
                    f"Each agent of {path} needs 'when' (words of its instructions) and 'steps' or 'turns'."
                )
            _check_turns(agent.get("turns") or [agent.get("steps")], path)
        return data  # type: ignore[return-value]
    turns = (data.get("turns") or [data.get("steps")]) if isinstance(data, dict) else [data]
    _check_turns(turns, path)
    if isinstance(data, dict) and "word_delay_s" in data:
        return {"turns": turns, "word_delay_s": data["word_delay_s"]}  # type: ignore[return-value]
    return turns[0] if len(turns) == 1 else {"turns": turns}  # type: ignore[return-value]


class ScriptedModel(FunctionModel):
    """A FunctionModel that answers with the next step of its script."""

    def __init__(
        self, steps: list[dict[str, Any]] | dict[str, Any], *, name: str = "scripted", word_delay_s: float = 0.0
    ) -> None:
        self.agents: list[tuple[str, list[list[dict[str, Any]]]]] = []
        if isinstance(steps, dict) and "agents" in steps:
            self.agents = [(a["when"], _turns(a)) for a in steps["agents"]]
            self.turns: list[list[dict[str, Any]]] = []
        else:
            self.turns = _turns(steps)
        given = steps.get("word_delay_s") if isinstance(steps, dict) else None
        self.word_delay_s = word_delay_s or (float(given) if isinstance(given, int | float) else 0.0)
        super().__init__(self._respond, model_name=name)

    def _script(self, instructions: str | None) -> list[list[dict[str, Any]]]:
        if not self.agents:
            return self.turns
        return next((turns for when, turns in self.agents if when in (instructions or "")), [])

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn, index = _position(messages)
        turns = self._script(info.instructions)
        steps = turns[turn] if turn < len(turns) else []
        if index >= len(steps):
            return ModelResponse(parts=[TextPart(f"(the script has no step {index + 1} in turn {turn + 1})")])
        step = steps[index]
        parts: list[Any] = []
        if step.get("text"):
            parts.append(TextPart(str(step["text"])))
        for j, call in enumerate(step.get("tool_calls") or []):
            args = call.get("args", {})
            parts.append(
                ToolCallPart(
                    call["name"],
                    args if isinstance(args, dict | str) else json.dumps(args),
                    tool_call_id=call.get("id") or (f"call_{index}_{j}" if turn == 0 else f"call_t{turn}_{index}_{j}"),
                )
            )
        return ModelResponse(parts=parts)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The step's response (as `request` gives it), streamed: its text a word at a time."""
        response = await self.request(messages, model_settings, model_request_parameters)
        yield ReplayedStream(
            model_request_parameters=model_request_parameters, _response=response, word_delay_s=self.word_delay_s
        )


def _check_turns(turns: list[Any], path: Path) -> None:
    if not all(isinstance(t, list) for t in turns):
        raise ConfigError(
            f"The model script {path} must be a list of steps, or a mapping with 'steps', 'turns' or 'agents'."
        )
    for t, steps in enumerate(turns):
        for i, step in enumerate(steps):
            if not isinstance(step, dict) or not ({"text", "tool_calls"} & set(step)):
                raise ConfigError(f"Step {i} of turn {t + 1} of {path} needs 'text' or 'tool_calls'.")


def _turns(steps: list[dict[str, Any]] | dict[str, Any]) -> list[list[dict[str, Any]]]:
    if isinstance(steps, dict):
        return steps["turns"] if "turns" in steps else [steps["steps"]]
    return [steps]


def _users_words(part: object) -> bool:
    """A user's message; not a reply check's reason, which reaches the model as a fenced user part."""
    return isinstance(part, UserPromptPart) and not (
        isinstance(part.content, str) and "<pyai:retry_feedback>" in part.content
    )


def _position(messages: list[ModelMessage]) -> tuple[int, int]:
    """(turn, step within it): how many user messages came before the last one, and model responses since it (a
    response the runtime made itself, named `consulta:…` — a turn's first look — is not a step of the script)."""
    turn, index = -1, 0
    for message in messages:
        if isinstance(message, ModelRequest) and any(_users_words(p) for p in message.parts):
            turn, index = turn + 1, 0
        elif isinstance(message, ModelResponse) and not (message.model_name or "").startswith("consulta:"):
            index += 1
    return max(turn, 0), index
