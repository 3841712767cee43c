"""The record of a run, written one way for every run: the runtime's own, an expert's run nested in a tool call,
an MCP client's session.

A `RunRecorder` creates runs (their `RunStarted`) and takes up existing ones; the `RunLog` of one run records its
events, numbered 1, 2, 3 … within the run, its tool calls, checkpoints, asks and its end (`RunEnded`, status,
output, error). Every event reaches the process's `EventBus` with the number the store keeps.

Who numbers the events: while this process advances a run (`hold`, and from creation for a run made here), its
log numbers them and writes them with the step's checkpoint in one transaction, except those another process may
act on (asks, plans, the end), written at once. While a run waits (`release`), anyone may write its events — an
answer given in another process closes an ask of it — so the store numbers each as it is written; `hold` takes
the numbering up again from the last stored event.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._errors import ListenerError
from ._event_bus import EventBus
from ._events import (
    AskOpened,
    Event,
    EventAdapter,
    ModelText,
    RunEnded,
    RunStarted,
    StepStarted,
    ToolCalled,
    ToolReturned,
)
from ._messages import count_steps, dump_each, load_messages
from ._records import AskRecord, EventRow, RunRecord, RunStatus
from ._store import Store, utcnow

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["RunLog", "RunRecorder"]

_logger = logging.getLogger(__name__)

_WITH_STEP = (ToolCalled, ToolReturned, RunStarted, StepStarted, ModelText)
"""Events written with the step's checkpoint; the others are written at once."""
_NOT_DATA = {"run_id", "type", "seq"}


def _data(event: Event) -> dict[str, Any]:
    return event.model_dump(mode="json", exclude=_NOT_DATA)


def _row(event: Event) -> EventRow:
    """The event as the store writes it (its data dumped to JSON once, here)."""
    return EventRow(event.seq, event.type, event.model_dump_json(exclude=_NOT_DATA), utcnow())


class RunRecorder:
    """Records the runs of one process in `store` and tells `bus` their events."""

    def __init__(self, store: Store, bus: EventBus | None = None) -> None:
        self.store = store
        self.bus = bus if bus is not None else EventBus()
        self._logs: dict[str, RunLog] = {}

    def create(
        self,
        *,
        agent: str,
        app: str,
        prompt: str,
        model: str,
        lang: str,
        thread_id: str | None = None,
        parent_run_id: str | None = None,
        options: dict[str, Any] | None = None,
        principal: str | None = None,
        trace_id: str | None = None,
        held: bool = True,
    ) -> RunLog:
        """A new run of `agent` (its name within app `app`), with its `RunStarted`. `held`: this process advances
        it (see `RunLog.hold`); a run driven from outside (an MCP client) is not held."""
        run = self.store.create_run(
            app=app,
            agent=agent,
            prompt=prompt,
            model=model,
            lang=lang,
            thread_id=thread_id,
            parent_run_id=parent_run_id,
            options=options,
            principal=principal,
            trace_id=trace_id,
        )
        log = self._logs[run.id] = RunLog(self, run, last_seq=0, held=held)
        try:
            log.emit(RunStarted(run_id=run.id, app=app, agent=agent, prompt=prompt))
        except ListenerError as error:  # nobody will carry the run: it ends here, and the caller hears why
            log.end(RunStatus.failed, error=error.args[0])
            raise
        return log

    def nested(self, parent: RunRecord | None, *, agent: str, app: str, prompt: str, model: str, lang: str) -> RunLog:
        """A run done for a tool call of `parent` (an expert consulted): under it, in its trace, for its principal."""
        return self.create(
            agent=agent,
            app=app,
            prompt=prompt,
            model=model,
            lang=lang,
            parent_run_id=parent.id if parent else None,
            principal=parent.principal if parent else None,
            trace_id=parent.trace_id if parent else None,
        )

    def take_up(self, run: RunRecord) -> RunLog:
        """The log of an existing run this process now carries (resumed after a restart, or from another process);
        `hold` it to advance it."""
        log = self._logs.get(run.id)
        if log is None:
            log = self._logs[run.id] = RunLog(self, run, last_seq=None, held=False)
        return log

    def emit(self, event: Event) -> Event:
        """Record and publish an event of any run: through its log if this process carries it, else numbered by
        the store as it is written."""
        log = self._logs.get(event.run_id)
        return log.emit(event) if log is not None else self._append(event)

    def _append(self, event: Event) -> Event:
        """Write the event now, numbered by the store; then publish it."""
        event.seq = self.store.append_event(event.run_id, event.type, _data(event)).seq
        self.bus.publish(event)
        return event

    def forget(self, log: RunLog) -> None:
        """This process no longer records `log`'s run (it ended, or was let go)."""
        if self._logs.get(log.run.id) is log:
            del self._logs[log.run.id]


class RunLog:
    """The record of one run (see the module docstring). Thread-safe: an answer may arrive on any thread."""

    def __init__(self, recorder: RunRecorder, run: RunRecord, *, last_seq: int | None, held: bool) -> None:
        self.recorder = recorder
        self.store = recorder.store
        self.run = run
        self.saved = 0
        """How many of the run's messages the store has."""
        self.last_seq = last_seq
        """The number of the run's last event this process gave out or saw (None: not known yet)."""
        self._held = held
        self._calls: list[dict[str, Any]] = []
        self._events: list[EventRow] = []
        self._lock = threading.RLock()

    @property
    def held(self) -> bool:
        return self._held

    # ---- events and tool calls --------------------------------------------------------------------------------

    def emit(self, event: Event) -> Event:
        """Number the event, publish it and record it (with the next checkpoint, or at once; see the module)."""
        with self._lock:
            if not self._held:
                self.last_seq = self.recorder._append(event).seq
                return event
            self._number(event)
            self.recorder.bus.publish(event)
            if not isinstance(event, _WITH_STEP):
                self._write()
            return event

    def _number(self, event: Event) -> None:
        assert self.last_seq is not None
        self.last_seq += 1
        event.seq = self.last_seq
        self._events.append(_row(event))

    def catch_up(self) -> list[Event]:
        """Publish the run's events other processes wrote since the last one this process knows (e.g. the
        `AskClosed` of an answer given elsewhere), and return them."""
        with self._lock:
            records = (
                self.store.list_events(self.run.id, after_seq=self.last_seq or 0) if self.last_seq is not None else []
            )
            events = [
                EventAdapter.validate_python({"run_id": r.run_id, "type": r.type, **r.data, "seq": r.seq})
                for r in records
            ]
            for event in events:
                self.last_seq = event.seq
                self.recorder.bus.publish(event)
            return events

    def call_started(self, tool_call_id: str, tool_name: str, args: Any) -> None:
        self.emit(ToolCalled(run_id=self.run.id, tool_call_id=tool_call_id, tool_name=tool_name, args=args))

    def call_returned(
        self,
        *,
        step: int,
        tool_call_id: str,
        tool_name: str,
        args: Any,
        result: Any,
        started_at: str,
        duration_ms: float,
    ) -> None:
        """Record a tool call's result (`ToolReturned`, and its row: with the step's checkpoint while held)."""
        row = {
            "step": step,
            "tool_call_id": tool_call_id,
            "tool_name": tool_name,
            "args": args,
            "result": result,
            "started_at": started_at,
            "duration_ms": duration_ms,
        }
        with self._lock:
            if not self._held:
                self.store.record_tool_call(run_id=self.run.id, **row)
            else:
                self._calls.append(row)
            ok = not (isinstance(result, dict) and result.get("ok") is False)
            self.emit(
                ToolReturned(
                    run_id=self.run.id,
                    tool_call_id=tool_call_id,
                    tool_name=tool_name,
                    ok=ok,
                    result=result,
                    duration_ms=duration_ms,
                )
            )

    # ---- checkpoints ------------------------------------------------------------------------------------------

    def load(self) -> list[ModelMessage] | None:
        """The run's checkpointed conversation, parsed (None before its first checkpoint)."""
        checkpoint = self.store.load_checkpoint(self.run.id)
        messages = load_messages(checkpoint[1]) if checkpoint is not None else None
        self.saved = len(messages) if messages is not None else 0
        return messages

    def checkpoint(self, messages: list[ModelMessage]) -> None:
        """Checkpoint with the step's buffered records, writing only the messages the store does not have yet.

        The last stored message is written again: the engine may still complete it (e.g. the request it sends)."""
        with self._lock:
            self._write(messages=messages)

    def flush(self) -> None:
        """Write the buffered tool calls and events in one transaction."""
        with self._lock:
            self._write()

    def _write(
        self,
        *,
        messages: list[ModelMessage] | None = None,
        last: EventRow | None = None,
        status: RunStatus | None = None,
        output: str | None = None,
        error: str | None = None,
    ) -> int | None:
        """Write in one transaction what is buffered, a checkpoint of `messages`, the event `last` and the run's
        new `status`; the number of the last event written. What is buffered is dropped only once written: after a
        failed write nothing has changed, and the next write (the run's end, failed) carries it again."""
        checkpoint = None
        if messages is not None:
            first = max(0, min(self.saved, len(messages)) - 1)
            checkpoint = (count_steps(messages), first, dump_each(messages[first:]))
        events = self._events if last is None else [*self._events, last]
        if checkpoint is None and status is None and not self._calls and not events:
            return None
        seq = self.store.save_step(
            self.run.id,
            checkpoint=checkpoint,
            tool_calls=self._calls,
            events=events,
            status=status,
            output=output,
            error=error,
        )
        self._calls, self._events = [], []
        if messages is not None:
            self.saved = len(messages)
        return seq

    # ---- holding the run --------------------------------------------------------------------------------------

    def hold(self) -> None:
        """This process advances the run now: number its events here, from the last one stored."""
        with self._lock:
            if not self._held:
                self.last_seq = self.store.last_event_seq(self.run.id)
                self._held = True

    def release(self) -> None:
        """The run waits: write what is buffered; the store numbers its events from now on."""
        with self._lock:
            self._write()
            self._held = False

    def nested(self, *, agent: str, app: str, prompt: str, model: str, lang: str) -> RunLog:
        """A run done for one of this run's tool calls (an expert consulted): see `RunRecorder.nested`."""
        return self.recorder.nested(self.run, agent=agent, app=app, prompt=prompt, model=model, lang=lang)

    # ---- status, asks, the end --------------------------------------------------------------------------------

    def set_status(self, status: RunStatus, *, output: str | None = None) -> None:
        """A status on the way (running, waiting); the end is `end`."""
        self.store.set_run_status(self.run.id, status, output=output)
        self.run = replace(self.run, status=status, output=output if output is not None else self.run.output)

    def open_ask(
        self, *, kind: str, payload: dict[str, Any], tool_call_id: str | None, timeout_s: float | None
    ) -> AskRecord:
        ask = self.store.create_ask(
            run_id=self.run.id,
            kind=kind,
            payload=payload,
            tool_call_id=tool_call_id,
            timeout_s=timeout_s,
            trace_id=self.run.trace_id,
        )
        self.emit(AskOpened(run_id=self.run.id, ask_id=ask.id, kind=kind, payload=payload))
        return ask

    def end(
        self,
        status: RunStatus,
        *,
        output: str | None = None,
        error: str | None = None,
        messages: list[ModelMessage] | None = None,
    ) -> RunEnded:
        """End the run: its last checkpoint (`messages`, if given), what is buffered, `RunEnded` and its status in one
        transaction; listeners hear of the end last, when the store says it. Should the write fail, nothing has
        changed (end it again, e.g. failed); a listener that raises on `RunEnded` is only logged: the run is over."""
        ended = RunEnded(run_id=self.run.id, status=status.value, output=output, error=error)
        with self._lock:
            ended.seq = (
                self.last_seq + 1 if self._held and self.last_seq is not None else None
            )  # else the store numbers it
            row = _row(ended)
            ended.seq = self._write(messages=messages, last=row, status=status, output=output, error=error)
            self.last_seq = ended.seq
            self._held = False
            self.run = replace(
                self.run,
                status=status,
                output=output if output is not None else self.run.output,
                error=error if error is not None else self.run.error,
                owner=None,
                updated_at=row.ts,
            )
        self.recorder.forget(self)
        try:
            self.recorder.bus.publish(ended)
        except ListenerError:
            _logger.exception(
                "A listener failed on the end of run %s (the run ended %s all the same).", self.run.id, status.value
            )
        return ended
