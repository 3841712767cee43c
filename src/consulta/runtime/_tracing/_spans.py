"""OpenTelemetry spans built from the runtime's events: the run, its steps, tool calls, asks and consultations.

Every span of a run is in the run's own trace (`RunRecord.trace_id`): the run span's parent is a remote span context
carrying that trace id, whose span id is derived from the run id, so a run and its resumptions (in this process or
another) hang side by side under one parent. A step lasts until the next step starts or the run ends; a tool call
from `ToolCalled` to `ToolReturned` (a call that paused on an ask until the answer's result); an ask from
`AskOpened` to `AskClosed`, under the tool call it paused. A nested run (an expert consulted inside a tool call,
made with its parent's trace id) hangs under the parent's tool call. Plan events are events of the run span.

Only the OpenTelemetry API is used here (pydantic-ai imports it anyway); the SDK stays out until tracing is on.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import assert_never

from opentelemetry.context import Context
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
    set_span_in_context,
)
from opentelemetry.util.types import AttributeValue

from .._events import (
    AskClosed,
    AskOpened,
    Event,
    ModelText,
    PlanDecided,
    PlanStaged,
    ReplyChecked,
    RunEnded,
    RunStarted,
    StepStarted,
    TextDelta,
    ToolCalled,
    ToolReturned,
)
from .._records import RunRecord, RunStatus
from .._store import Store
from .._tools import current_tool_call

__all__ = ["SpanBuilder", "run_root"]

_log = logging.getLogger("consulta.tracing")
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_RECENT = 1024  # runs and asks whose spans ended here, remembered so none is drawn twice


def run_root(trace_id: str, run_id: str) -> Context:
    """The context a run's span starts in: a remote parent in the run's trace (a new trace if the id is not 32 hex)."""
    try:
        trace_int = int(trace_id, 16)
    except ValueError:
        return Context()
    span_id = int.from_bytes(hashlib.blake2b(run_id.encode(), digest_size=8).digest(), "big") or 1
    parent = SpanContext(trace_id=trace_int, span_id=span_id, is_remote=True, trace_flags=_SAMPLED)
    return set_span_in_context(NonRecordingSpan(parent))


class _Recent:
    """The last ids seen (a bounded set)."""

    def __init__(self, size: int = _RECENT) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._size = size

    def add(self, id_: str) -> None:
        self._ids[id_] = None
        while len(self._ids) > self._size:
            self._ids.popitem(last=False)

    def __contains__(self, id_: object) -> bool:
        return id_ in self._ids


@dataclass(eq=False)
class _Run:
    """The open spans of one run in this process."""

    run_id: str
    app: str
    trace_id: str
    root: Context
    span: Span | None = None
    step: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)  # by tool call id
    asks: dict[str, Span] = field(default_factory=dict)  # by ask id

    def context(self) -> Context:
        """Where the run's own work hangs: its span, else (its start was not seen here) its place in the trace."""
        return set_span_in_context(self.span) if self.span is not None else self.root

    def current(self) -> Context:
        """Where a tool call hangs: the step in progress, else the run."""
        return set_span_in_context(self.step) if self.step is not None else self.context()

    def attributes(self, **more: AttributeValue) -> dict[str, AttributeValue]:
        return {"consulta.run_id": self.run_id, "consulta.app": self.app, **more}

    def open_spans(self) -> list[Span]:
        """Innermost first, so children end before their parents."""
        spans = [*self.asks.values(), *self.tools.values(), self.step, self.span]
        self.asks, self.tools, self.step, self.span = {}, {}, None, None
        return [s for s in spans if s is not None]


class SpanBuilder:
    """A runtime listener (see `Runtime.subscribe`) that turns events into spans.

    Events may arrive from any thread (an answer given from a web worker); a lock keeps the spans consistent. A
    failure here is logged and never reaches the run. The store is read for what events do not carry: a run's trace
    id and parent (once per run), an ask's tool call, a consultation's expert run.
    """

    def __init__(self, *, tracer: Tracer, store: Store, consultation_tool: str) -> None:
        self._tracer = tracer
        self._store = store
        self._consultation_tool = consultation_tool
        self._runs: dict[str, _Run] = {}
        self._ended = _Recent()  # runs: a consultation does not draw its expert's run again
        self._closed = _Recent()  # asks: a close heard twice (here and from the store's poll) is drawn once
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        try:
            with self._lock:
                self._on(event)
        except Exception:  # tracing must never break a run
            _log.warning("Could not trace %s of run %s", event.type, event.run_id, exc_info=True)

    def open_context(self, run_id: str) -> Context | None:
        """The context of the run's span if the run is traced here (the engine's own spans nest under it)."""
        with self._lock:
            run = self._runs.get(run_id)
            return run.context() if run is not None else None

    def trace_context(self, run_id: str) -> Context:
        """The run's place in its trace, from the store (NotFoundError for an unknown run)."""
        return run_root(self._store.get_run(run_id).trace_id, run_id)

    def close(self) -> None:
        """End every span still open (runs waiting on a person when the process stops), marked unfinished."""
        with self._lock:
            for run in self._runs.values():
                for span in run.open_spans():
                    span.set_attribute("consulta.unfinished", True)
                    span.end()
            self._runs.clear()

    # ---- events -----------------------------------------------------------------------------------------------

    def _on(self, event: Event) -> None:
        match event:
            case RunStarted():
                self._run_started(event)
            case StepStarted():
                self._step_started(event)
            case ToolCalled():
                self._tool_called(event)
            case ToolReturned():
                self._tool_returned(event)
            case AskOpened():
                self._ask_opened(event)
            case AskClosed():
                self._ask_closed(event)
            case PlanStaged():
                self._run_event(
                    event.run_id,
                    "plan_staged",
                    {"consulta.plan_id": event.plan_id, "consulta.plan.items": len(event.items)},
                )
            case PlanDecided():
                self._run_event(
                    event.run_id,
                    "plan_decided",
                    {"consulta.plan_id": event.plan_id, "consulta.plan.status": event.status},
                )
            case RunEnded():
                self._run_ended(event)
            case ReplyChecked():
                self._run_event(
                    event.run_id,
                    "reply_checked",
                    {"consulta.reply.check": event.check, "consulta.reply.replaced": event.replaced},
                )
            case ModelText() | TextDelta():
                pass  # the text is the run's output; pydantic-ai's spans carry the model's words
            case _:
                assert_never(event)

    def _run_started(self, event: RunStarted) -> None:
        record = self._store.get_run(event.run_id)
        earlier = self._runs.pop(event.run_id, None)
        if earlier is not None:  # started again before its end was seen here
            for span in earlier.open_spans():
                span.end()
        run = self._runs[event.run_id] = _Run(
            run_id=event.run_id, app=record.app, trace_id=record.trace_id, root=run_root(record.trace_id, event.run_id)
        )
        context = self._nested_in(record.parent_run_id, record.trace_id) or run.root
        run.span = self._tracer.start_span(
            f"run {record.app}", context=context, attributes=_run_attributes(record, resumed=event.resumed)
        )

    def _nested_in(self, parent_run_id: str | None, trace_id: str) -> Context | None:
        """For a run made inside a tool call of its parent (same trace): that call's span, else the parent's span."""
        parent = self._runs.get(parent_run_id) if parent_run_id else None
        if parent is None or parent.trace_id != trace_id:
            return None  # a continued conversation names its previous run but has its own trace
        call = current_tool_call()
        if call is not None and call.run_id == parent_run_id and call.tool_call_id in parent.tools:
            return set_span_in_context(parent.tools[call.tool_call_id])
        if parent.tools:
            return set_span_in_context(list(parent.tools.values())[-1])
        return parent.context()

    def _step_started(self, event: StepStarted) -> None:
        run = self._run(event.run_id)
        if run.step is not None:
            run.step.end()
        run.step = self._tracer.start_span(
            f"step {event.step}", context=run.context(), attributes=run.attributes(**{"consulta.step": event.step})
        )

    def _tool_called(self, event: ToolCalled) -> None:
        run = self._run(event.run_id)
        attributes = run.attributes(
            **{"consulta.tool.name": event.tool_name, "consulta.tool_call_id": event.tool_call_id}
        )
        name = f"tool {event.tool_name}"
        if event.tool_name == self._consultation_tool:
            expert = event.args.get("expert_id") if isinstance(event.args, dict) else None
            attributes["consulta.consultation"] = True
            if isinstance(expert, str):
                attributes["consulta.expert_id"] = expert
                name = f"consultation {expert}"
        run.tools[event.tool_call_id] = self._tracer.start_span(name, context=run.current(), attributes=attributes)

    def _tool_returned(self, event: ToolReturned) -> None:
        run = self._run(event.run_id)
        span = run.tools.pop(event.tool_call_id, None)
        if span is None:  # a result without a call seen here: an unknown tool, or an answered ask after a restart
            started = time.time_ns() - int(event.duration_ms * 1_000_000)
            attributes = run.attributes(
                **{"consulta.tool.name": event.tool_name, "consulta.tool_call_id": event.tool_call_id}
            )
            span = self._tracer.start_span(
                f"tool {event.tool_name}", context=run.current(), attributes=attributes, start_time=started
            )
        span.set_attribute("consulta.tool.ok", event.ok)
        result = event.result if isinstance(event.result, dict) else {}
        if not event.ok:
            code = str(result.get("error_code") or "error")
            span.set_attribute("consulta.tool.error_code", code)
            span.set_status(Status(StatusCode.ERROR, code))
        if event.tool_name == self._consultation_tool and isinstance(result.get("consultation_id"), str):
            span.set_attribute("consulta.consultation_id", result["consultation_id"])
            self._expert_run_from_record(span, result["consultation_id"])
        span.end()

    def _expert_run_from_record(self, consultation: Span, consultation_id: str) -> None:
        """The expert's run as the store has it, under its consultation, unless its own events drew it here."""
        expert_run_id = self._store.get_consultation(consultation_id).expert_run_id
        if not expert_run_id:
            return
        consultation.set_attribute("consulta.expert_run_id", expert_run_id)
        if expert_run_id in self._runs or expert_run_id in self._ended:
            return
        record = self._store.get_run(expert_run_id)
        attributes = _run_attributes(record, resumed=False) | {
            "consulta.run.status": record.status.value,
            "consulta.from_record": True,
        }
        span = self._tracer.start_span(
            f"run {record.app}",
            context=set_span_in_context(consultation),
            attributes=attributes,
            start_time=_ns(record.created_at),
        )
        if record.error:
            span.set_status(Status(StatusCode.ERROR, record.error))
        span.end(end_time=max(_ns(record.updated_at), _ns(record.created_at)))

    def _ask_opened(self, event: AskOpened) -> None:
        run = self._run(event.run_id)
        tool_call_id = self._store.get_ask(event.ask_id).tool_call_id
        run.asks[event.ask_id] = self._ask_span(run, event.ask_id, event.kind, tool_call_id)

    def _ask_span(
        self, run: _Run, ask_id: str, kind: str, tool_call_id: str | None, *, start_time: int | None = None
    ) -> Span:
        """An ask's span, under the tool call it paused (a plan's approval has none: under the run)."""
        paused = run.tools.get(tool_call_id) if tool_call_id else None
        context = set_span_in_context(paused) if paused is not None else run.context()
        attributes = run.attributes(**{"consulta.ask_id": ask_id, "consulta.ask.kind": kind})
        return self._tracer.start_span(f"ask {kind}", context=context, attributes=attributes, start_time=start_time)

    def _ask_closed(self, event: AskClosed) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return  # the ask's run is carried by another process: its span is there
        span = run.asks.pop(event.ask_id, None)
        if span is None and event.ask_id in self._closed:
            return
        self._closed.add(event.ask_id)
        if span is None:  # opened before this process took the run up (a resumed run): drawn from its record
            ask = self._store.get_ask(event.ask_id)
            span = self._ask_span(run, ask.id, ask.kind, ask.tool_call_id, start_time=_ns(ask.created_at))
        span.set_attribute("consulta.ask.status", event.status)
        if event.answered_by:
            span.set_attribute("consulta.ask.answered_by", event.answered_by)
        span.end()

    def _run_event(self, run_id: str, name: str, attributes: dict[str, AttributeValue]) -> None:
        run = self._runs.get(run_id)
        if run is not None and run.span is not None:
            run.span.add_event(name, attributes)

    def _run_ended(self, event: RunEnded) -> None:
        run = self._runs.pop(event.run_id, None)
        if run is None:
            return  # ended here without being carried here (a stop of a run that waited): nothing was drawn
        self._ended.add(event.run_id)
        span = run.span
        for open_span in run.open_spans():
            if open_span is not span:
                open_span.end()
        if span is None:
            return
        span.set_attribute("consulta.run.status", event.status)
        if event.status == RunStatus.failed:
            span.set_status(Status(StatusCode.ERROR, event.error or "failed"))
        span.end()

    # ---- plumbing ---------------------------------------------------------------------------------------------

    def _run(self, run_id: str) -> _Run:
        """The run's open spans; a run whose start was not seen here (tracing installed mid-run) gets its trace."""
        run = self._runs.get(run_id)
        if run is None:
            record = self._store.get_run(run_id)
            run = self._runs[run_id] = _Run(
                run_id=run_id, app=record.app, trace_id=record.trace_id, root=run_root(record.trace_id, run_id)
            )
        return run


def _run_attributes(record: RunRecord, *, resumed: bool) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        "consulta.run_id": record.id,
        "consulta.app": record.app,
        "consulta.resumed": resumed,
        "consulta.model": record.model,
    }
    if record.parent_run_id:
        attributes["consulta.parent_run_id"] = record.parent_run_id
    agent = getattr(record, "agent", "")  # RunRecord.agent: the agent's name within its app ("" for its main one)
    if agent:
        attributes["consulta.agent"] = agent
    return attributes


def _ns(timestamp: str) -> int:
    """A store timestamp (ISO 8601) as OpenTelemetry's nanoseconds since the epoch."""
    return int(datetime.fromisoformat(timestamp).timestamp() * 1_000_000_000)
