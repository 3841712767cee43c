"""The scripted model — a test double: it replays a fixed script of responses. For tests and exact offline demos.

A script is a list of steps; step i is the model's i-th response in the conversation (counted from the messages, so
a run resumed in another process continues the same script). A step is `{"text": "..."}` or
`{"tool_calls": [{"name": "...", "args": {...}}]}`. When the script runs out, the model says so in text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from ruamel.yaml import YAML

from ..runtime._errors import ConfigError

__all__ = ["ScriptedModel", "load_script"]


def load_script(path: Path) -> list[dict[str, Any]]:
    """Read a script from a YAML or JSON file; a malformed file is a ConfigError naming the step."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"Cannot read the model script {path}: {error}") from error
    steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list):
        raise ConfigError(f"The model script {path} must be a list of steps (or a mapping with 'steps').")
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not ({"text", "tool_calls"} & set(step)):
            raise ConfigError(f"Step {i} of {path} needs 'text' or 'tool_calls'.")
    return steps


class ScriptedModel(FunctionModel):
    """A FunctionModel that answers with the next step of its script."""

    def __init__(self, steps: list[dict[str, Any]], *, name: str = "scripted") -> None:
        self.steps = steps
        super().__init__(self._respond, model_name=name)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        index = sum(isinstance(m, ModelResponse) for m in messages)
        if index >= len(self.steps):
            return ModelResponse(parts=[TextPart(f"(the script has no step {index})")])
        step = self.steps[index]
        parts: list[Any] = []
        if step.get("text"):
            parts.append(TextPart(str(step["text"])))
        for j, call in enumerate(step.get("tool_calls") or []):
            args = call.get("args", {})
            parts.append(
                ToolCallPart(
                    call["name"],
                    args if isinstance(args, dict | str) else json.dumps(args),
                    tool_call_id=call.get("id") or f"call_{index}_{j}",
                )
            )
        return ModelResponse(parts=parts)
