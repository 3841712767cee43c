"""What a turn has done so far, read from its conversation: its tool calls and how they ended (`turn_outcomes`), and
the facts the reply checks hold replies to (`facts_of`) — one reading for the engine's checks and for the checks of
what a tool shows the person (a question)."""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolReturnPart, UserPromptPart

from ._agent import Agent
from ._claims import ToolOutcome, TurnFacts, gather_facts
from ._grounding import Evidence
from ._messages import carry_over, is_refusal, this_turn
from ._run_log import RunLog

__all__ = ["TurnDeps", "facts_of", "turn_outcomes"]


class TurnDeps(Protocol):
    """What reading a turn's facts needs of a run (the engine's `RunDeps` has it)."""

    @property
    def agent(self) -> Agent: ...
    @property
    def instructions(self) -> str: ...
    @property
    def prompt(self) -> str | None: ...
    @property
    def log(self) -> RunLog: ...


def turn_outcomes(messages: list[ModelMessage], agent: Agent) -> list[ToolOutcome]:
    """The tool calls of the turn and how they ended, from its conversation."""
    outcomes = []
    calls = {c.tool_call_id: c for m in this_turn(messages) if isinstance(m, ModelResponse) for c in m.tool_calls}
    for message in this_turn(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if not isinstance(part, ToolReturnPart):
                continue
            content: Any = part.content
            if isinstance(content, str):
                try:
                    content = json.loads(content)
                except ValueError:
                    pass
            result: dict[str, Any] = content if isinstance(content, dict) else {}
            tool = agent.tool(part.tool_name)
            ok = result.get("ok") is not False and getattr(part, "outcome", "success") != "failed"
            call = calls.get(part.tool_call_id)
            outcomes.append(
                ToolOutcome(
                    name=part.tool_name,
                    kind=tool.kind if tool is not None else "other",
                    ok=ok,
                    error_code=result.get("error_code"),
                    message=result.get("message"),
                    data=Evidence.data_text(content)
                    if tool is not None and tool.kind in ("read", "ask") and ok
                    else "",
                    args=call.args_as_dict() if call is not None else {},
                    hint=" ".join(str(result[k]) for k in ("_hint", "next_step") if result.get(k)) or None,
                )
            )
    return outcomes


def facts_of(deps: TurnDeps, messages: list[ModelMessage]) -> TurnFacts:
    calls = turn_outcomes(messages, deps.agent)
    turn = this_turn(messages)
    refusals = [
        str(getattr(p, "content", "")) for m in turn if isinstance(m, ModelRequest) for p in m.parts if is_refusal(p)
    ]
    return gather_facts(
        store=deps.log.store,
        run=deps.log.run,
        calls=calls,
        prompt=deps.prompt,
        executor=deps.agent.executor,
        earlier=_earlier_words(messages[: len(messages) - len(turn)]),
        model_meant=(deps.instructions, *(c.hint for c in calls if c.hint), *refusals),
        tool_names=tuple(t.name for t in deps.agent.tools),
    )


def _earlier_words(messages: list[ModelMessage]) -> str:
    """The thread's earlier turns as the person saw them: their words and the replies shown."""
    return "\n".join(
        str(p.content)
        for m in carry_over(messages)
        for p in m.parts
        if isinstance(p, UserPromptPart | TextPart) and isinstance(p.content, str)
    )
