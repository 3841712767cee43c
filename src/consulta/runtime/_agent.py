"""An agent definition: instructions, tools (read, write, ask) and, for write tools, the app's plan executor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._errors import ConfigError
from ._plans import PlanExecutor
from ._tools import AskKind, ToolDef

__all__ = ["Agent", "tool_schemas"]


@dataclass(frozen=True, kw_only=True)
class Agent:
    """What one app's agent is: everything the runtime needs to run it, and nothing about a model.

    `question_timeout` bounds the in-process wait for an answer (the seed's 300 s); `max_steps` bounds the model
    requests of one run; `options` are recorded on each run so that another process can rebuild the same agent.
    """

    app: str
    instructions: str
    tools: tuple[ToolDef, ...]
    executor: PlanExecutor | None = None
    question_timeout: float = 300.0
    max_steps: int = 25
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ConfigError(f"Agent {self.app!r} has duplicate tool names: {names}.")
        if any(t.kind == "write" for t in self.tools) and self.executor is None:
            raise ConfigError(f"Agent {self.app!r} has write tools but no plan executor to apply them.")

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)

    def ask_kind(self, name: str) -> AskKind:
        for t in self.tools:
            if t.ask_kind is not None and t.ask_kind.name == name:
                return t.ask_kind
        raise ConfigError(f"Agent {self.app!r} has no ask kind {name!r}.")


def tool_schemas(agent: Agent) -> list[dict[str, Any]]:
    """The agent's tools in OpenAI function-calling format (the seed's `tool_schemas()`), from the same definitions."""
    from ._engine import json_schema_for  # the engine generates schemas from type hints

    schemas = []
    for t in agent.tools:
        description = t.description if not t.notes else f"{t.description} {t.notes}"
        schemas.append(
            {
                "type": "function",
                "function": {"name": t.name, "description": description, "parameters": t.parameters or json_schema_for(t)},
                "x-consulta-kind": t.kind,
            }
        )
    return schemas
