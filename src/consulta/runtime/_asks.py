"""Asks from the runtime's side: the kinds it knows, answers and cancellations, and the bounded waits.

An answer reads the ask once (or not at all, given the record the caller already read), validates it with the
ask's kind and closes it with the store's conditional update: of two answerers exactly one wins, the other gets
ConflictError. Every closing is told as `AskClosed`, then handed to `on_closed` (the runtime continues the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from ._agent import Agent
from ._errors import ConfigError, ConflictError, InvalidAnswerError, ListenerError
from ._events import AskClosed
from ._plan_book import PLAN_ASK
from ._records import AskRecord, AskStatus
from ._run_log import RunRecorder
from ._store import Store
from ._tools import AskKind

__all__ = ["AskDesk", "AskTimers", "Outcome"]

_logger = logging.getLogger(__name__)

Outcome = Callable[[AskKind, dict[str, Any]], Any]
"""The tool result an ask closed without an answer gives the model, from its kind and payload."""


class _PlanApproval:
    """The ask kind of a staged plan: the answer is approve or reject; every other way of closing applies nothing."""

    name = PLAN_ASK

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        return args

    def answered_result(self, payload: dict[str, Any], answer: bool) -> dict[str, Any]:
        return {"approve": answer}

    def timeout_result(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"approve": False}

    cancelled_result = unavailable_result = timeout_result

    def not_alone_result(self) -> dict[str, Any]:  # pragma: no cover - plans are not tool calls
        return {"approve": False}

    def validate_answer(self, payload: dict[str, Any], answer: Any) -> bool:
        if isinstance(answer, dict):
            answer = answer.get("approve")
        if isinstance(answer, str) and answer.strip().lower() in ("approve", "approved", "yes", "y", "true"):
            return True
        if isinstance(answer, str) and answer.strip().lower() in ("reject", "rejected", "no", "n", "false"):
            return False
        if isinstance(answer, bool):
            return answer
        raise InvalidAnswerError(key="error.plan.decision")


class AskTimers:
    """Every wait is bounded: each open ask gets a timer on the running event loop that fires after its timeout."""

    def __init__(self) -> None:
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._deadlines: dict[str, float] = {}

    def start(self, ask_id: str, seconds: float, on_timeout: Callable[[], None]) -> None:
        """Call `on_timeout` in `seconds` unless `cancel(ask_id)` comes first (call on the event loop)."""
        loop = asyncio.get_running_loop()
        self.cancel(ask_id)
        self._deadlines[ask_id] = loop.time() + seconds
        self._handles[ask_id] = loop.call_later(seconds, self._fire, ask_id, on_timeout)

    def seconds_left(self, ask_id: str) -> float:
        deadline = self._deadlines.get(ask_id)
        return 0.0 if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())

    def cancel(self, ask_id: str) -> None:
        handle = self._handles.pop(ask_id, None)
        if handle is not None:
            handle.cancel()
        self._deadlines.pop(ask_id, None)

    def clear(self) -> None:
        for ask_id in list(self._handles):
            self.cancel(ask_id)

    def _fire(self, ask_id: str, on_timeout: Callable[[], None]) -> None:
        self._handles.pop(ask_id, None)
        self._deadlines.pop(ask_id, None)
        on_timeout()


class AskDesk:
    """The asks of one runtime: kinds, answers and cancellations, and the waits of the runs it carries."""

    def __init__(
        self,
        store: Store,
        recorder: RunRecorder,
        *,
        answered_by: str,
        on_closed: Callable[[AskRecord], None],
        on_timeout_failed: Callable[[AskRecord, Exception], None],
    ) -> None:
        """`on_timeout_failed(ask, error)`: an ask's timeout could not close it (the store failed); its run must not
        wait on it any longer."""
        self.store = store
        self.recorder = recorder
        self.answered_by = answered_by
        self.on_closed = on_closed
        self.on_timeout_failed = on_timeout_failed
        self.timers = AskTimers()
        self.waiting: dict[str, str] = {}
        """Ask id -> run id, for the asks this process continues a run on when they close."""
        self._kinds: dict[str, AskKind] = {PLAN_ASK: _PlanApproval()}

    # ---- kinds ------------------------------------------------------------------------------------------------

    def register(self, agent: Agent) -> None:
        for tool in agent.tools:
            if tool.ask_kind is not None:
                self._kinds[tool.ask_kind.name] = tool.ask_kind

    def kind(self, name: str) -> AskKind:
        kind = self._kinds.get(name)
        if kind is None:
            raise ConfigError(f"No ask kind {name!r} is registered in this process; resume the run's app first.")
        return kind

    def known_kind(self, name: str) -> AskKind | None:
        return self._kinds.get(name)

    # ---- closing ----------------------------------------------------------------------------------------------

    def answer(self, ask: str | AskRecord, answer: Any, *, answered_by: str | None = None) -> AskRecord:
        """Answer a pending ask: one read (none given its record), the kind's validation, the conditional close."""
        ask = ask if isinstance(ask, AskRecord) else self.store.get_ask(ask)
        if ask.status != AskStatus.pending:
            raise ConflictError(key="error.ask.closed", values={"id": ask.id, "status": ask.status.value})
        kind = self.kind(ask.kind)
        value = kind.validate_answer(ask.payload, answer)
        closed = self.store.close_ask(
            ask.id,
            AskStatus.answered,
            answer=value,
            outcome=kind.answered_result(ask.payload, value),
            answered_by=answered_by or self.answered_by,
            expect=AskStatus.pending,
        )
        self.closed(closed)
        return closed

    def cancel(
        self,
        ask: str | AskRecord,
        *,
        status: AskStatus = AskStatus.cancelled,
        answered_by: str | None = None,
        outcome: Outcome | None = None,
    ) -> AskRecord:
        """Close a pending ask without an answer; the model gets `outcome` (by default the kind's `cancelled_result`)."""
        ask = ask if isinstance(ask, AskRecord) else self.store.get_ask(ask)
        kind = self.kind(ask.kind)
        result = (outcome or _cancelled)(kind, ask.payload)
        closed = self.store.close_ask(
            ask.id, status, outcome=result, answered_by=answered_by or self.answered_by, expect=AskStatus.pending
        )
        self.closed(closed)
        return closed

    def close_quietly(self, ask: AskRecord, status: AskStatus, outcome: Any, *, by: str) -> None:
        """Close the ask unless it closed meanwhile (then the other closing stands)."""
        with contextlib.suppress(ConflictError):
            self.closed(self.store.close_ask(ask.id, status, outcome=outcome, answered_by=by, expect=AskStatus.pending))

    def closed(self, ask: AskRecord) -> None:
        """An ask closed in this process: tell listeners, then `on_closed`. The ask is closed: its run goes on
        whatever the telling meets (a listener's error is logged; the store's reaches the caller)."""
        try:
            self.recorder.emit(
                AskClosed(
                    run_id=ask.run_id,
                    ask_id=ask.id,
                    kind=ask.kind,
                    status=ask.status.value,
                    answered_by=ask.answered_by,
                )
            )
        except ListenerError:
            _logger.exception("A listener failed on the closing of ask %s (its run goes on).", ask.id)
        finally:
            self.on_closed(ask)

    # ---- waiting ----------------------------------------------------------------------------------------------

    def wait(self, run_id: str, ask: AskRecord, *, timed: bool) -> bool:
        """Continue run `run_id` when `ask` closes; `timed`: time it out after its timeout. False if already waited on."""
        if ask.id in self.waiting:
            return False
        self.waiting[ask.id] = run_id
        if timed and ask.timeout_s:
            self.timers.start(ask.id, ask.timeout_s, lambda: self._time_out(ask))
        return True

    def stop_waiting(self, ask_id: str) -> str | None:
        """The ask closed (or its run ends): no timer, nobody waits; the run it was waited on for, if any."""
        self.timers.cancel(ask_id)
        return self.waiting.pop(ask_id, None)

    def _time_out(self, ask: AskRecord) -> None:
        # An answer that arrived at the same moment wins.
        try:
            self.close_quietly(ask, AskStatus.timed_out, self.kind(ask.kind).timeout_result(ask.payload), by="timeout")
        except Exception as error:  # on a timer: nobody else would hear of it
            self.on_timeout_failed(ask, error)


def _cancelled(kind: AskKind, payload: dict[str, Any]) -> Any:
    return kind.cancelled_result(payload)
