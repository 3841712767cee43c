"""Tool definitions: read tools, write tools (staged into a plan) and ask tools (the run pauses on a person).

A tool is a plain Python function with type hints and a docstring; its JSON schema is generated from them (or given
explicitly, as the seeds do for `question`). Nothing here depends on the agent engine, so the same definitions
serve the agent, `consulta tools --schema` and an MCP server.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ._policies import ToolPolicy, apply_policies

if TYPE_CHECKING:  # the engine's types, named only for the checker: tools stay engine-free
    from pydantic_ai.usage import RunUsage, UsageLimits

    from ._run_log import RunLog

__all__ = [
    "CURRENT_TOOL_CALL",
    "AskKind",
    "ToolCallContext",
    "ToolDef",
    "ToolKind",
    "ask_tool",
    "current_tool_call",
    "read_tool",
    "write_tool",
]

ToolKind = Literal["read", "write", "ask", "act"]
"""`read` looks up; `write` builds an operation the runtime stages into a plan; `ask` pauses on a person; `act` does
its work itself when called (e.g. runs a team that writes its own workspace's files): not staged, and its result is
not a source of facts."""


class AskKind(Protocol):
    """What a kind of ask (a question, a consultation, …) tells the runtime about itself.

    `prepare` turns the model's arguments into the ask's payload (raising ToolError for bad arguments: nothing is
    asked then); `validate_answer` checks a person's answer (raising InvalidAnswerError); the `*_result` methods
    give the tool result the model sees for each way the ask can close.
    """

    name: str

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]: ...
    def validate_answer(self, payload: dict[str, Any], answer: Any) -> Any: ...
    def answered_result(self, payload: dict[str, Any], answer: Any) -> Any: ...
    def timeout_result(self, payload: dict[str, Any]) -> Any: ...
    def cancelled_result(self, payload: dict[str, Any]) -> Any: ...
    def unavailable_result(self, payload: dict[str, Any]) -> Any: ...
    def not_alone_result(self) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class ToolCallContext:
    """The call a tool function is running for (tools that keep records, e.g. a consultation ledger, name it)."""

    run_id: str
    tool_call_id: str
    tool_name: str
    trace_id: str | None = None
    """The run's trace: work done for the call (e.g. an expert's nested run) joins it."""
    usage: RunUsage | None = None
    """The run's usage so far; a nested run given it counts against the run's own limits."""
    usage_limits: UsageLimits | None = None
    """The limits the run enforces (shared with nested runs)."""
    log: RunLog | None = None
    """The run's record: a run done for the call (an expert's) is created through it (`log.nested(...)`), under
    the run, in its trace, with its events told to the same listeners."""


CURRENT_TOOL_CALL: ContextVar[ToolCallContext | None] = ContextVar("consulta_tool_call", default=None)


def current_tool_call() -> ToolCallContext | None:
    """The run and tool call the current read tool runs for, or None outside a run."""
    return CURRENT_TOOL_CALL.get()


@dataclass(frozen=True, kw_only=True)
class ToolDef:
    """One tool the model can call."""

    name: str
    function: Callable[..., Any]
    description: str
    kind: ToolKind = "read"
    parameters: dict[str, Any] | None = None
    """An explicit JSON schema for the arguments; by default it is generated from the function's signature."""
    policies: tuple[ToolPolicy, ...] = ()
    ask_kind: AskKind | None = None
    notes: str | None = None
    opens_turn: bool = False
    """The runtime may make this call itself when a turn starts (an agent's `first_look`) though it is not a read
    (e.g. an `act` tool that does the turn's whole work); read tools always may."""
    ends_turn: bool = False
    """A successful call ends the agent's turn (e.g. submitting a final packet): its result's `message` is the
    run's output, and the model is not asked again."""
    _wrapped: Callable[..., Any] | None = field(default=None, repr=False, compare=False)

    @property
    def call(self) -> Callable[..., Any]:
        """The function with its policies applied (async, keyword arguments)."""
        if self._wrapped is None:
            object.__setattr__(self, "_wrapped", apply_policies(self.function, self.policies))
        assert self._wrapped is not None
        return self._wrapped


def _description(fn: Callable[..., Any], description: str | None) -> str:
    if description:
        return description
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n", 1)[0].strip() or fn.__name__


def read_tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    policies: tuple[ToolPolicy, ...] | list[ToolPolicy] = (),
) -> Any:
    """Declare a read tool (usable as `@read_tool` or `@read_tool(policies=[...])`)."""

    def make(f: Callable[..., Any]) -> ToolDef:
        return ToolDef(
            name=name or f.__name__,
            function=f,
            description=_description(f, description),
            kind="read",
            policies=tuple(policies),
        )

    return make(fn) if fn is not None else make


def write_tool(fn: Callable[..., Any] | None = None, *, name: str | None = None, description: str | None = None) -> Any:
    """Declare a write tool: its function only builds the operation; the runtime stages it into a plan.

    The function returns the operation as a JSON-able dict (or pydantic model). Validation against the data, the
    grounding check and the application happen in the agent's PlanExecutor.
    """

    def make(f: Callable[..., Any]) -> ToolDef:
        return ToolDef(name=name or f.__name__, function=f, description=_description(f, description), kind="write")

    return make(fn) if fn is not None else make


def ask_tool(
    kind: AskKind, *, name: str, description: str, parameters: dict[str, Any], notes: str | None = None
) -> ToolDef:
    """Declare a tool that pauses the run on an ask of `kind` (the model's arguments are checked by `kind.prepare`)."""

    def never_called(**_: Any) -> Any:  # the runtime defers the call instead of running it
        raise AssertionError("ask tools are handled by the runtime")

    return ToolDef(
        name=name,
        function=never_called,
        description=description,
        kind="ask",
        parameters=parameters,
        ask_kind=kind,
        notes=notes,
    )
