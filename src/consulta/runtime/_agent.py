"""An agent definition: instructions, tools (read, write, ask) and, for write tools, the app's plan executor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._claims import ReplyCheck
from ._errors import ConfigError
from ._facts import FactRules
from ._plans import PlanExecutor
from ._records import RunRecord
from ._schemas import json_schema_for
from ._tools import AskKind, ToolDef

__all__ = ["Agent", "ChangeRequest", "FirstLook", "Instructions", "ToolChoice", "WritesAsked", "tool_schemas"]

Instructions = str | Callable[[RunRecord], str]
"""An agent's instructions: a text, or a function of the run giving it (e.g. with the date the run started on:
`run.created_at`). A function is called once each time a process takes the run up, so every step of the run sends
the same text (the model's cache of the conversation holds); read time from the run, not the clock, and a run
resumed later is told what it was told before."""

ToolChoice = Callable[[str], Sequence[str] | None]
"""Given the run id, before each model request: the tools the model must call one of at this step, or None (it may
call any tool or answer in text)."""

ChangeRequest = Callable[[str], bool]
"""Given the user's words of a turn: whether they ask for a change (a write); see `Agent.asks_for_change`."""

WritesAsked = Callable[[str], Sequence[str] | None]
"""Given the user's words of a turn that asks for a change: the write tools of the change they ask for (None: any);
see `Agent.writes_asked`."""

FirstLook = Callable[[str], Sequence[tuple[str, dict[str, Any]]]]
"""Given the user's words of a turn: the read calls (tool name, arguments) to make before the model's first step."""


@dataclass(frozen=True, kw_only=True)
class Agent:
    """What one app's agent is: everything the runtime needs to run it, and nothing about a model.

    `name` is the agent's name within its app (e.g. "orchestrator", "assistant"; "" for an app's only agent): every
    run records it, and a run is resumed only as the agent it recorded. `question_timeout` bounds the in-process
    wait for an answer (the seed's 300 s); `max_steps` bounds the model requests of one run; `options` are recorded on each run so that another process can rebuild the same agent.
    `tool_choice` narrows each step to the tools that make sense in the run's state (e.g. an orchestrator that must
    inspect an upload before it plans): the model still writes the call, and every tool stays described to it.
    `first_step_tool`: the first step of each turn calls a tool (any of the agent's, unless `tool_choice` narrows
    them): an agent whose turns act or look up starts from facts, and free text comes after them.
    `asks_for_change`: when given, a turn whose words do not ask for a change is offered no write tool at any step,
    and a write called anyway is refused (`not_a_change_request`): a request for information never leads to a write.
    `writes_asked`: when given, a turn asking for a change is offered only the write tools of the change its words
    ask for (e.g. putting tubes in, not taking them out); its other tools stay offered.
    `first_look`: read (or `opens_turn`) calls the runtime makes itself when a turn starts, from the user's words (e.g.
    the records of a name the user wrote); they are recorded as the turn's first tool calls and the model starts from
    their results.
    `answered_by_first_look`: given the words of a turn, whether its first look answers them whole (a plain look-up:
    "Do we have any HeLa cells left?"; an undo with no change on record); then what code says the look found
    (`facts.say_found`) is the reply, and the model is not asked.
    `answered_by_staging`: given the words of a turn asking for a change, whether one staged plan answers them whole
    (one change of one thing: "Thaw the tube in box 1 position 28"); then, once a step stages a write and every call
    of that step succeeded, code's statement of the plan (`compose_reply`) is the reply, when the agent's own check
    (`check_reply`) lets it stand, and the model writes no reply of its own.
    """

    app: str
    instructions: Instructions
    tools: tuple[ToolDef, ...]
    name: str = ""
    executor: PlanExecutor | None = None
    question_timeout: float = 300.0
    max_steps: int = 25
    tool_choice: ToolChoice | None = None
    first_step_tool: bool = False
    asks_for_change: ChangeRequest | None = None
    writes_asked: WritesAsked | None = None
    first_look: FirstLook | None = None
    answered_by_first_look: Callable[[str], bool] | None = None
    answered_by_staging: Callable[[str], bool] | None = None
    check_reply: ReplyCheck | None = None
    """The agent's own check in code of its final text against the turn's facts (`TurnFacts`), after the runtime's
    claim check that every agent has: raise ValueError saying why, and the model writes it again with that reason
    (each retry is a step); a `ReplyRefused` with a replacement is replaced by it when the rewrite is refused too."""
    facts: FactRules | None = None
    """What counts as a fact in the agent's replies and how its results read (see `FactRules`): with it, the
    runtime's fact check holds every final reply to the turn's sources. Every agent's replies are checked for words
    meant for the model; `facts.say_found` is then also what code says instead."""
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ConfigError(f"Agent {self.app!r} has duplicate tool names: {names}.")
        if self.first_step_tool and not self.tools:
            raise ConfigError(
                f"Agent {self.app!r} must start each turn with a tool (first_step_tool) but has no tools."
            )
        if self.first_look is not None and not any(t.kind == "read" or t.opens_turn for t in self.tools):
            raise ConfigError(
                f"Agent {self.app!r} has a first_look but no read (or `opens_turn`) tools to make it with."
            )
        if any(t.kind == "write" for t in self.tools) and self.executor is None:
            raise ConfigError(f"Agent {self.app!r} has write tools but no plan executor to apply them.")

    def choose_tools(self, run_id: str) -> list[str] | None:
        """This step's `tool_choice` (None: free); a name the agent does not have is a ConfigError."""
        if self.tool_choice is None:
            return None
        chosen = self.tool_choice(run_id)
        if chosen is None:
            return None
        unknown = [n for n in chosen if self.tool(n) is None]
        if unknown or not chosen:
            raise ConfigError(
                f"Agent {self.app!r} chose tools it does not have: {unknown or 'none'}; choose among {[t.name for t in self.tools]}."
            )
        return list(chosen)

    def offers_writes(self, words: str | None) -> bool:
        """Whether a turn with these user words may call write tools."""
        return self.asks_for_change is None or words is None or self.asks_for_change(words)

    def offered_writes(self, words: str | None) -> list[str] | None:
        """The write tools a turn asking for a change with these words is offered (None: all of them)."""
        if self.writes_asked is None or words is None:
            return None
        asked = self.writes_asked(words)
        return None if asked is None else [t.name for t in self.tools if t.kind == "write" and t.name in asked]

    def first_calls(self, words: str) -> list[tuple[str, dict[str, Any]]]:
        """The turn's first look: calls of read tools and of tools declared `opens_turn` only (another name is left
        out)."""
        if self.first_look is None:
            return []
        return [
            (name, dict(args))
            for name, args in self.first_look(words)
            if (t := self.tool(name)) is not None and (t.kind == "read" or t.opens_turn)
        ]

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)

    def ask_kind(self, name: str) -> AskKind:
        for t in self.tools:
            if t.ask_kind is not None and t.ask_kind.name == name:
                return t.ask_kind
        raise ConfigError(f"Agent {self.app!r} has no ask kind {name!r}.")


def tool_schemas(agent: Agent) -> list[dict[str, Any]]:
    """The agent's tools in OpenAI function-calling format (the seed's `tool_schemas()`), from the same definitions."""
    schemas = []
    for t in agent.tools:
        description = t.description if not t.notes else f"{t.description} {t.notes}"
        schemas.append(
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": description,
                    "parameters": t.parameters or json_schema_for(t),
                },
                "x-consulta-kind": t.kind,
            }
        )
    return schemas
