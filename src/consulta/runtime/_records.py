"""The records the store keeps, as plain data: runs, asks, plans, tool calls, events."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

__all__ = [
    "AskRecord",
    "AskStatus",
    "EventRecord",
    "EventRow",
    "PlanRecord",
    "PlanStatus",
    "RunRecord",
    "RunStatus",
    "ToolCallRecord",
]


class RunStatus(StrEnum):
    running = "running"
    waiting = "waiting"  # an ask is pending and nothing in this process waits for it
    finished = "finished"
    failed = "failed"
    cancelled = "cancelled"


class AskStatus(StrEnum):
    pending = "pending"
    answered = "answered"
    cancelled = "cancelled"
    timed_out = "timed_out"
    declined = "declined"


class PlanStatus(StrEnum):
    staging = "staging"  # write calls are being added during the run
    pending = "pending"  # waiting for the user's approval (an ask of kind "plan")
    applied = "applied"
    rejected = "rejected"
    failed = "failed"  # approved, but applying it failed; nothing was written
    cancelled = "cancelled"


EXTERNAL_MODEL_PREFIX = "mcp:"
"""The model of a run driven from outside (an MCP client's model calls the tools): Consulta records it but cannot
advance it, so nothing resumes it."""


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    id: str
    app: str
    agent: str = ""
    """The agent's name within its app; "" is the app's main agent (and every run stored before runs named theirs)."""
    thread_id: str
    parent_run_id: str | None
    status: RunStatus
    prompt: str
    model: str
    lang: str
    options: dict[str, Any]
    trace_id: str
    output: str | None
    error: str | None
    owner: str | None
    """The process holding the run's lease (while it runs)."""
    principal: str | None
    """Whom the run belongs to: a web session, an API token, `local` for the machine's own user."""
    heartbeat_at: float | None
    cancel_requested: bool
    created_at: str
    updated_at: str

    @property
    def external(self) -> bool:
        """Whether the run is driven from outside (see EXTERNAL_MODEL_PREFIX)."""
        return self.model.startswith(EXTERNAL_MODEL_PREFIX)


@dataclass(frozen=True, kw_only=True)
class AskRecord:
    id: str
    run_id: str
    kind: str
    tool_call_id: str | None
    payload: dict[str, Any]
    status: AskStatus
    answer: Any
    outcome: Any
    answered_by: str | None
    timeout_s: float | None
    trace_id: str
    created_at: str
    closed_at: str | None


@dataclass(frozen=True, kw_only=True)
class PlanRecord:
    id: str
    run_id: str
    app: str
    status: PlanStatus
    items: list[dict[str, Any]]
    ask_id: str | None
    result: Any
    created_at: str
    updated_at: str


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord:
    run_id: str
    step: int
    tool_call_id: str
    tool_name: str
    args: Any
    result: Any
    ok: bool
    error_code: str | None
    started_at: str
    duration_ms: float


@dataclass(frozen=True, kw_only=True)
class EventRecord:
    id: int
    """Store-wide order of events (across runs)."""
    run_id: str
    seq: int = 0
    """The event's number within its run: 1, 2, 3 … (unique per run). 0 only in records made outside a store."""
    type: str
    data: dict[str, Any]
    ts: str


class EventRow(NamedTuple):
    """An event as a writer hands it to the store (`Store.save_step(events=[...])`)."""

    seq: int | None
    """Its number within the run, or None: the store numbers it after the run's last stored event."""
    type: str
    data: dict[str, Any] | str
    """The event's data, or that data as JSON text already (a writer that has it so saves the store a dump)."""
    ts: str


@dataclass(frozen=True, kw_only=True)
class ConsultationRecord:
    """One consultation of an expert, as the ledger keeps it (seed 000)."""

    id: str
    """`consult_0001`, … — sequential per store, never reused."""
    run_id: str | None
    tool_call_id: str | None
    expert_id: str
    status: str
    """`done`, or `failed` (the expert's output never fitted its type; `error` says why)."""
    request: dict[str, Any]
    """The validated parameters: question, context, expected_output_type, scenario_id, reasoning."""
    expert_output: dict[str, Any] | None
    binding_rules: list[dict[str, Any]]
    instruction_updates: dict[str, Any]
    attempts: int
    error: str | None
    expert_run_id: str | None
    """The nested run in which the expert worked."""
    started_at: str
    finished_at: str
    duration_ms: float
