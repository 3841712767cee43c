"""The typed events a run emits: numbered within their run, stored in order and delivered to every listener.

`seq` is the event's number within its run (1, 2, 3 …): the runtime's run log assigns it when it emits the event,
so a listener sees the number the store keeps (`EventRecord.seq`). An event built but not yet emitted has seq 0.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

__all__ = [
    "AskClosed",
    "AskOpened",
    "Event",
    "EventAdapter",
    "ModelText",
    "PlanDecided",
    "ReplyChecked",
    "PlanStaged",
    "RunEnded",
    "RunStarted",
    "StepStarted",
    "TextDelta",
    "ToolCalled",
    "ToolReturned",
]


class _Base(BaseModel):
    run_id: str
    seq: int = 0


class RunStarted(_Base):
    type: Literal["run_started"] = "run_started"
    app: str
    agent: str = ""
    """The agent's name within its app ("" for the app's main agent of a run recorded before agents were named)."""
    prompt: str | None
    resumed: bool = False


class StepStarted(_Base):
    type: Literal["step_started"] = "step_started"
    step: int


class ModelText(_Base):
    type: Literal["model_text"] = "model_text"
    text: str


class TextDelta(_Base):
    """Words of the reply as the model writes them: a draft, published to listeners but never stored or numbered
    (seq stays 0). The draft is `text` appended at `offset` (its length in characters so far); offset 0 starts it
    again with `text`. A draft is provisional: the run's `ModelText` (after the reply checks) is the reply, and any
    other event of the run (a new step, a tool call, a check, the end) means the draft was not it."""

    type: Literal["text_delta"] = "text_delta"
    offset: int
    text: str


class ReplyChecked(_Base):
    """A final text a reply check refused (never shown): which check, why (told to the model), and whether code's
    reply replaced it (the model's rewrite was refused too, no step was left for one, or code's correction needed
    none)."""

    type: Literal["reply_checked"] = "reply_checked"
    check: str
    reason: str
    replaced: bool = False


class ToolCalled(_Base):
    type: Literal["tool_called"] = "tool_called"
    tool_call_id: str
    tool_name: str
    args: Any


class ToolReturned(_Base):
    type: Literal["tool_returned"] = "tool_returned"
    tool_call_id: str
    tool_name: str
    ok: bool
    result: Any
    duration_ms: float


class AskOpened(_Base):
    type: Literal["ask_opened"] = "ask_opened"
    ask_id: str
    kind: str
    payload: dict[str, Any]


class AskClosed(_Base):
    type: Literal["ask_closed"] = "ask_closed"
    ask_id: str
    kind: str
    status: str
    answered_by: str | None = None


class PlanStaged(_Base):
    type: Literal["plan_staged"] = "plan_staged"
    plan_id: str
    items: list[dict[str, Any]]


class PlanDecided(_Base):
    type: Literal["plan_decided"] = "plan_decided"
    plan_id: str
    status: str
    result: Any = None


class RunEnded(_Base):
    type: Literal["run_ended"] = "run_ended"
    status: str
    output: str | None = None
    error: str | None = None


Event = Annotated[
    RunStarted
    | StepStarted
    | ModelText
    | TextDelta
    | ReplyChecked
    | ToolCalled
    | ToolReturned
    | AskOpened
    | AskClosed
    | PlanStaged
    | PlanDecided
    | RunEnded,
    Field(discriminator="type"),
]
EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)
