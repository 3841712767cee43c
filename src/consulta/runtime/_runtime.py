"""The runtime: start runs, pause them on asks, resume them from their checkpoint, stop them.

One mechanism serves the in-process wait and the cross-process resume. A run advances until it finishes or pauses on
asks; the asks and the conversation checkpoint go to the store and the run's task ends — nothing waits on a person,
not a thread and not a coroutine (a pending ask costs a row, plus a timer in the process that bounds the wait). When
an ask closes (answered, cancelled, timed out, declined), the run is advanced again from its checkpoint with the
ask's outcome as the paused tool call's result: in this process if it is here, or in any process that resumes it
after a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.models import Model

from ._agent import Agent
from ._engine import Cancelled, EngineRun, PausedCall, RunDeps, build_engine_agent, carry_over, count_steps, dump_each, load_messages, pending_tool_calls, returned_call_ids
from ._errors import ConfigError, ConflictError, InvalidAnswerError, ToolError
from ._events import AskClosed, AskOpened, Event, ModelText, RunEnded, RunStarted, StepStarted, ToolCalled, ToolReturned
from ._grounding import Evidence
from ._plan_book import PLAN_ASK, PlanBook, staged_result
from ._records import AskRecord, AskStatus, PlanRecord, PlanStatus, RunRecord, RunStatus
from ._store import Store, utcnow
from ._tools import AskKind

__all__ = ["AskPolicy", "Runtime"]

AskPolicy = Literal["wait", "defer", "fail"]
"""What happens when a run pauses on an ask: `wait` in this process (bounded by the agent's timeout; the seed's
blocking semantics), `defer` (persist it and let the caller return; any process can answer and resume later), or
`fail` (nothing can answer: the model gets `question_unavailable` at once)."""

_TERMINAL = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)
Listener = Callable[[Event], None]


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
        raise InvalidAnswerError('A plan is answered with "approve" or "reject".')


@dataclass(eq=False)
class _Live:
    """A run this process is responsible for."""

    run: RunRecord
    agent: Agent
    task: asyncio.Task[None] | None = None
    cancel: bool = False
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    # What the current step produced, written with its checkpoint in one transaction.
    calls: list[dict[str, Any]] = field(default_factory=list)
    events: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    saved: int = 0  # how many of the run's messages the store has
    fresh: bool = False  # started here and not yet checkpointed: nothing to load
    open_asks: int = 0


class Runtime:
    """Runs agents against the store. Use one per process (or per event loop)."""

    def __init__(
        self,
        *,
        store: Store,
        resolve_model: Callable[[str], Model],
        ask_policy: AskPolicy = "defer",
        poll_interval: float = 0.5,
        heartbeat_interval: float = 5.0,
        answered_by: str = "user",
        max_active_runs: int = 64,
    ) -> None:
        self.store = store
        self.resolve_model = resolve_model
        self.ask_policy: AskPolicy = ask_policy
        self.poll_interval = poll_interval
        self.heartbeat_interval = heartbeat_interval
        self.answered_by = answered_by
        self._live: dict[str, _Live] = {}
        self._waiting: dict[str, str] = {}  # ask id -> run id, for asks this process continues when they close
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._listeners: list[Listener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poller: asyncio.Task[None] | None = None
        self._closed_seq = 0
        self._kinds: dict[str, AskKind] = {PLAN_ASK: _PlanApproval()}
        self._plans = PlanBook(store, self._emit)
        self._engines: dict[tuple[int, str], tuple[Agent, Any]] = {}
        # Runs advancing at once (model calls and tools in flight); the rest wait their turn, holding only a task.
        self.max_active_runs = max_active_runs
        self._active: asyncio.Semaphore | None = None

    # ---- public API -------------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event of every run in this process; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def start(
        self,
        agent: Agent,
        prompt: str,
        *,
        model: str,
        lang: str = "en",
        continue_from: str | None = None,
        principal: str | None = None,
    ) -> RunRecord:
        """Start a run of `agent` on `prompt` (continuing the conversation of run `continue_from`, if given).

        `principal` records whom the run belongs to (front ends show each person only their own runs and asks);
        a continued conversation keeps its principal unless another is given.
        """
        self._attach_loop()
        thread_id = None
        if continue_from is not None:
            previous = self.store.get_run(continue_from)
            thread_id = previous.thread_id
            principal = principal if principal is not None else previous.principal
        run = self.store.create_run(
            app=agent.app,
            prompt=prompt,
            model=model,
            lang=lang,
            thread_id=thread_id,
            parent_run_id=continue_from,
            options=agent.options,
            principal=principal,
        )
        self._register(agent)
        live = self._live[run.id] = _Live(run=run, agent=agent, fresh=True)
        self._emit(RunStarted(run_id=run.id, app=agent.app, prompt=prompt))
        live.task = asyncio.create_task(self._advance(run.id, prompt=prompt))
        self._ensure_poller()
        return run

    async def run(
        self,
        agent: Agent,
        prompt: str,
        *,
        model: str,
        lang: str = "en",
        continue_from: str | None = None,
        principal: str | None = None,
    ) -> RunRecord:
        """Start a run and return when it has settled (see `settled`)."""
        run = await self.start(agent, prompt, model=model, lang=lang, continue_from=continue_from, principal=principal)
        return await self.settled(run.id)

    async def settled(self, run_id: str) -> RunRecord:
        """Wait until the run ends, or waits on an ask that nothing in this process will continue (policy `defer`)."""
        live = self._live.get(run_id)
        if live is not None:
            await live.settled.wait()
        return self.store.get_run(run_id)

    async def resume(self, run_id: str, agent: Agent) -> RunRecord:
        """Take up a run after a restart (or from another process): continue it from its checkpoint.

        Closed asks are applied; pending ones are waited for under this runtime's ask policy. Raises ConflictError
        when a live process still owns the run.
        """
        self._attach_loop()
        run = self.store.get_run(run_id)
        if run.status in _TERMINAL or run.external:
            return run  # nothing to do, or nothing Consulta can do: an outside client drives it
        if run_id in self._live:
            return run
        if not self.store.claim_run(run_id):
            raise ConflictError(f"Run {run_id} is being run by another live process ({run.owner}); answer it there.")
        self._register(agent)
        live = self._live[run_id] = _Live(run=run, agent=agent)
        self._emit(RunStarted(run_id=run_id, app=agent.app, prompt=None, resumed=True))
        self.store.set_run_status(run_id, RunStatus.running)
        live.task = asyncio.create_task(self._continue(run_id))
        self._ensure_poller()
        return run

    def is_running_here(self, run_id: str) -> bool:
        """Whether this runtime is carrying the run (advancing it, or waiting on its asks to continue it)."""
        return run_id in self._live

    def answer(self, ask_id: str, answer: Any, *, answered_by: str | None = None) -> AskRecord:
        """Answer a pending ask (from any thread). Unknown id → NotFoundError; closed → ConflictError; bad shape → InvalidAnswerError."""
        ask = self.store.get_ask(ask_id)
        if ask.status != AskStatus.pending:
            raise ConflictError(f"Ask {ask_id} is already {ask.status.value}; it cannot be answered again.")
        kind = self._kind(ask.kind)
        value = kind.validate_answer(ask.payload, answer)
        outcome = kind.answered_result(ask.payload, value)
        closed = self.store.close_ask(ask_id, AskStatus.answered, answer=value, outcome=outcome, answered_by=answered_by or self.answered_by)
        self._closed(closed)
        return closed

    def cancel_ask(self, ask_id: str, *, status: AskStatus = AskStatus.cancelled, answered_by: str | None = None) -> AskRecord:
        """Close a pending ask without an answer (the user cancelled or declined): the model is told so."""
        ask = self.store.get_ask(ask_id)
        outcome = self._kind(ask.kind).cancelled_result(ask.payload)
        closed = self.store.close_ask(ask_id, status, outcome=outcome, answered_by=answered_by or self.answered_by)
        self._closed(closed)
        return closed

    async def stop(self, run_id: str) -> RunRecord:
        """Stop a run cooperatively: its pending asks close as cancelled, it ends `cancelled`, nothing is cut mid-write."""
        run = self.store.get_run(run_id)
        if run.status in _TERMINAL:
            return run
        live = self._live.get(run_id)
        if live is None and self.store.run_is_live_elsewhere(run_id):
            self.store.request_cancel(run_id)  # its owner notices within its poll interval
            return run
        if live is not None and live.task is not None and not live.task.done():
            live.cancel = True
            await asyncio.wait({live.task})
            return self.store.get_run(run_id)
        self._finish_cancelled(run_id)
        return self.store.get_run(run_id)

    async def aclose(self) -> None:
        """Stop background work (runs in progress are left as they are: their checkpoints are consistent)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
            self._poller = None
        for live in list(self._live.values()):
            if live.task is not None and not live.task.done():
                live.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await live.task

    def register(self, agent: Agent) -> None:
        """Make the ask kinds of `agent` known (so its asks can be answered before its run is resumed here)."""
        self._register(agent)

    # ---- advancing a run --------------------------------------------------------------------------------------

    async def _continue(self, run_id: str) -> None:
        """Continue a resumed run from what its checkpoint and asks say."""
        checkpoint = self.store.load_checkpoint(run_id)
        if checkpoint is None:  # died before its first step: start it again
            await self._advance(run_id, prompt=self.store.get_run(run_id).prompt)
            return
        messages = load_messages(checkpoint[1])
        self._prune_staged(run_id, messages)
        plan_asks = [a for a in self.store.list_asks(status=None, run_id=run_id) if a.kind == PLAN_ASK]
        open_plan = next((a for a in plan_asks if a.id == self._pending_plan_ask(run_id)), None)
        if open_plan is not None:
            if open_plan.status == AskStatus.pending:
                self._await_asks(run_id, [open_plan])
            else:
                await self._decide_plan(run_id, open_plan)
            return
        calls = pending_tool_calls(messages)
        if not calls:
            await self._advance(run_id, prompt=None)
            return
        asks = {a.tool_call_id: a for a in self.store.list_asks(status=None, run_id=run_id)}
        known = [asks[c.tool_call_id] for c in calls if c.tool_call_id in asks]
        if len(known) < len(calls):
            # Died between the model's response and opening its asks: run the calls again (they are read or ask
            # calls, or write calls that stage idempotently by tool call id).
            await self._advance(run_id, prompt=None)
            return
        pending = [a for a in known if a.status == AskStatus.pending]
        if pending:
            self._await_asks(run_id, pending)
        else:
            for ask in known:  # the paused calls' results, told like any tool's (they reach the model with this step)
                self._emit(_answered_call(ask))
            await self._advance(run_id, prompt=None, deferred={a.tool_call_id: a.outcome for a in known if a.tool_call_id})

    def _history(self, live: _Live) -> list[Any]:
        """The conversation to continue: the run's checkpoint, or before its first step the thread's previous run's."""
        run = live.run
        checkpoint = None if live.fresh else self.store.load_checkpoint(run.id)
        live.fresh = False
        if checkpoint is not None:
            history = load_messages(checkpoint[1])
            live.saved = len(history)
            return history
        live.saved = 0
        parent = self.store.load_checkpoint(run.parent_run_id) if run.parent_run_id is not None else None
        return carry_over(load_messages(parent[1])) if parent else []

    def _prune_staged(self, run_id: str, messages: list[Any]) -> None:
        """Drop staged writes the checkpoint does not know (their step is redone after a crash and stages them again)."""
        known = returned_call_ids(messages)
        for plan in self.store.list_plans(run_id=run_id):
            if plan.status == PlanStatus.staging:
                kept = [i for i in plan.items if i["tool_call_id"] in known]
                if len(kept) != len(plan.items):
                    self.store.update_plan(plan.id, items=kept)

    def _pending_plan_ask(self, run_id: str) -> str | None:
        for plan in self.store.list_plans(run_id=run_id):
            if plan.status == PlanStatus.pending and plan.ask_id:
                return plan.ask_id
        return None

    async def _advance(self, run_id: str, *, prompt: str | None, deferred: dict[str, Any] | None = None) -> None:
        if self._active is None:
            self._active = asyncio.Semaphore(self.max_active_runs)
        async with self._active:
            await self._advance_now(run_id, prompt=prompt, deferred=deferred)

    async def _advance_now(self, run_id: str, *, prompt: str | None, deferred: dict[str, Any] | None) -> None:
        live = self._live[run_id]
        run = live.run
        try:
            history = self._history(live)
            deps = self._deps(live, prompt if prompt is not None else run.prompt)
            engine_run = EngineRun(
                engine=self._engine_for(live.agent, run.model),
                deps=deps,
                history=history,
                prompt=prompt,
                deferred=deferred,
                max_steps=live.agent.max_steps,
                on_step=lambda messages: self._checkpoint(run_id, messages),
                check_cancel=lambda: live.cancel,
            )
            text, paused, messages = await engine_run()
        except Cancelled as stop:
            self._checkpoint(run_id, stop.messages)
            self._finish_cancelled(run_id)
            return
        except asyncio.CancelledError:
            if live.cancel:
                self._finish_cancelled(run_id)
            raise
        except UsageLimitExceeded as error:
            self._finish(run_id, RunStatus.failed, error=f"The run reached its step limit ({live.agent.max_steps}): {error}")
            return
        except Exception as error:  # the run fails with a readable reason; the process goes on
            self._finish(run_id, RunStatus.failed, error=f"{type(error).__name__}: {error}")
            return
        self._checkpoint(run_id, messages)
        if live.cancel:
            self._finish_cancelled(run_id)
            return
        if paused:
            self._open_asks(run_id, paused)
            return
        if text:
            self._emit(ModelText(run_id=run_id, text=text))
        if live.agent.executor is not None:
            plan = next((p for p in self.store.list_plans(run_id=run_id) if p.status == PlanStatus.staging), None)
            if plan is not None and plan.items:
                self.store.set_run_status(run_id, RunStatus.running, output=text or "")  # the reply, kept for the end
                self._open_plan(run_id, plan)
                return
        self._finish(run_id, RunStatus.finished, output=text or "")

    def _engine_for(self, agent: Agent, model_spec: str) -> Any:
        key = (id(agent), model_spec)
        cached = self._engines.get(key)
        if cached is None or cached[0] is not agent:
            if len(self._engines) >= 64:
                self._engines.pop(next(iter(self._engines)))
            cached = self._engines[key] = (agent, build_engine_agent(agent, self.resolve_model(model_spec)))
        return cached[1]

    def _deps(self, live: _Live, prompt: str | None) -> RunDeps:
        run_id = live.run.id

        def record_call(**kw: Any) -> None:
            live.calls.append(kw)
            result = kw["result"]
            ok = not (isinstance(result, dict) and result.get("ok") is False)
            self._emit(ToolReturned(run_id=run_id, tool_call_id=kw["tool_call_id"], tool_name=kw["tool_name"], ok=ok, result=result, duration_ms=kw["duration_ms"]))

        def emit_call(tool_call_id: str, tool_name: str, args: Any) -> None:
            self._emit(ToolCalled(run_id=run_id, tool_call_id=tool_call_id, tool_name=tool_name, args=args))

        async def stage(tool_call_id: str, tool_name: str, op: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
            return self._stage(live, tool_call_id, tool_name, op, evidence)

        def emit_step(step: int) -> None:
            self._emit(StepStarted(run_id=run_id, step=step))

        return RunDeps(
            run_id=run_id, trace_id=live.run.trace_id, agent=live.agent, prompt=prompt, record_call=record_call, stage=stage, emit_call=emit_call, emit_step=emit_step
        )

    def _checkpoint(self, run_id: str, messages: list[Any]) -> None:
        """Checkpoint with the step's buffered records, writing only the messages the store does not have yet.

        The last stored message is written again: the engine may still complete it (e.g. the request it sends)."""
        live = self._live[run_id]
        first = max(0, min(live.saved, len(messages)) - 1)
        self._flush(run_id, checkpoint=(count_steps(messages), first, dump_each(messages[first:])))
        live.saved = len(messages)

    def _flush(self, run_id: str, *, checkpoint: tuple[int, int, list[str]] | None = None) -> None:
        """Write the run's buffered tool calls and events (and a checkpoint) in one transaction."""
        live = self._live.get(run_id)
        calls, events = (live.calls, live.events) if live is not None else ([], [])
        if checkpoint is None and not calls and not events:
            return
        self.store.save_step(run_id, checkpoint=checkpoint, tool_calls=calls, events=events)
        if live is not None:
            live.calls, live.events = [], []

    # ---- write tools: staging and plans -----------------------------------------------------------------------

    def _stage(self, live: _Live, tool_call_id: str, tool_name: str, op: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
        executor = live.agent.executor
        if executor is None:
            raise ToolError("no_plan_executor", f"{tool_name} cannot be staged: this agent cannot apply writes.")
        executor.check_grounding(tool_name, op, evidence)
        plan, previews = self._plans.stage(
            run_id=live.run.id, app=live.agent.app, executor=executor, tool_call_id=tool_call_id, tool_name=tool_name, op=op
        )
        return staged_result(plan, previews, next_step="Now tell the user, in one short sentence in their language, what is staged.")

    def _open_plan(self, run_id: str, plan: PlanRecord) -> None:
        live = self._live[run_id]
        assert live.agent.executor is not None
        try:
            ask = self._plans.open(
                plan, executor=live.agent.executor, lang=live.run.lang, timeout_s=live.agent.question_timeout, trace_id=live.run.trace_id
            )
        except ToolError as error:  # the data changed under the staged plan: nothing to approve
            self._finish(run_id, RunStatus.failed, error=f"Plan {plan.id} no longer fits the data: {error.message}")
            return
        self.store.set_run_status(run_id, RunStatus.waiting)
        self._await_asks(run_id, [ask])

    async def _decide_plan(self, run_id: str, ask: AskRecord) -> None:
        executor = self._live[run_id].agent.executor
        assert executor is not None
        status, result = await self._plans.decide(ask, executor=executor)
        if status == PlanStatus.failed and (result or {}).get("error_code") == "apply_failed":
            self._finish(run_id, RunStatus.failed, error=f"Applying plan {ask.payload['plan_id']} failed: {(result or {}).get('message')}")
            return
        self._finish(run_id, RunStatus.finished, output=self.store.get_run(run_id).output or "")

    # ---- asks: opening, waiting, closing ----------------------------------------------------------------------

    def _open_asks(self, run_id: str, paused: list[PausedCall]) -> None:
        live = self._live[run_id]
        opened: list[AskRecord] = []
        existing = {a.tool_call_id: a for a in self.store.list_asks(status=None, run_id=run_id)}
        for item in paused:
            if item.ask is None:
                self._finish(run_id, RunStatus.failed, error=f"Tool call {item.call.tool_name} was deferred outside Consulta's asks.")
                return
            if item.call.tool_call_id in existing:  # opened before a restart
                opened.append(existing[item.call.tool_call_id])
                continue
            ask = self.store.create_ask(
                run_id=run_id,
                kind=item.ask["kind"],
                payload=item.ask["payload"],
                tool_call_id=item.call.tool_call_id,
                timeout_s=live.agent.question_timeout,
                trace_id=live.run.trace_id,
            )
            self._emit(AskOpened(run_id=run_id, ask_id=ask.id, kind=ask.kind, payload=ask.payload))
            opened.append(ask)
        self.store.set_run_status(run_id, RunStatus.waiting)
        self._await_asks(run_id, [a for a in opened if a.status == AskStatus.pending])
        if all(a.status != AskStatus.pending for a in opened):
            self._schedule_continue(run_id)

    def _await_asks(self, run_id: str, asks: list[AskRecord]) -> None:
        live = self._live[run_id]
        if self.ask_policy == "fail":
            for ask in asks:
                self._close_quietly(ask, AskStatus.declined, self._kind(ask.kind).unavailable_result(ask.payload), by="policy:fail")
            self._schedule_continue(run_id)
            return
        self.store.set_run_status(run_id, RunStatus.waiting)
        for ask in asks:
            if ask.id not in self._waiting:
                live.open_asks += 1
            self._waiting[ask.id] = run_id
            if self.ask_policy == "wait" and ask.timeout_s:
                loop = self._loop_or_fail()
                self._timers[ask.id] = loop.call_later(ask.timeout_s, self._time_out, ask.id)
        self._ensure_poller()
        if self.ask_policy == "defer":
            live.settled.set()  # nothing here will continue it unless an answer arrives in this process

    def _time_out(self, ask_id: str) -> None:
        self._timers.pop(ask_id, None)
        ask = self.store.get_ask(ask_id)
        if ask.status != AskStatus.pending:
            return
        outcome = self._kind(ask.kind).timeout_result(ask.payload)
        with contextlib.suppress(ConflictError):  # an answer that arrived at the same moment wins
            self._closed(self.store.close_ask(ask_id, AskStatus.timed_out, outcome=outcome, answered_by="timeout"))

    def _close_quietly(self, ask: AskRecord, status: AskStatus, outcome: Any, *, by: str) -> None:
        with contextlib.suppress(ConflictError):
            closed = self.store.close_ask(ask.id, status, outcome=outcome, answered_by=by)
            self._emit(AskClosed(run_id=closed.run_id, ask_id=closed.id, kind=closed.kind, status=closed.status.value, answered_by=by))

    def _closed(self, ask: AskRecord) -> None:
        """An ask closed in this process: tell listeners and continue its run if it is waiting here."""
        self._emit(AskClosed(run_id=ask.run_id, ask_id=ask.id, kind=ask.kind, status=ask.status.value, answered_by=ask.answered_by))
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._ask_closed(ask.id)
        else:
            loop.call_soon_threadsafe(self._ask_closed, ask.id)

    def _ask_closed(self, ask_id: str) -> None:
        run_id = self._waiting.pop(ask_id, None)
        timer = self._timers.pop(ask_id, None)
        if timer is not None:
            timer.cancel()
        live = self._live.get(run_id) if run_id is not None else None
        if live is None:
            return
        live.open_asks -= 1
        if live.open_asks > 0:
            return  # other asks of the same step are still open
        live.settled.clear()
        self._schedule_continue(run_id)

    def _schedule_continue(self, run_id: str) -> None:
        live = self._live[run_id]
        self.store.set_run_status(run_id, RunStatus.running)
        live.task = asyncio.get_running_loop().create_task(self._continue(run_id))

    # ---- ending -----------------------------------------------------------------------------------------------

    def _finish(self, run_id: str, status: RunStatus, *, output: str | None = None, error: str | None = None) -> None:
        self._flush(run_id)
        self.store.set_run_status(run_id, status, output=output, error=error)
        self._emit(RunEnded(run_id=run_id, status=status.value, output=output, error=error))
        live = self._live.pop(run_id, None)
        if live is not None:
            live.settled.set()

    def _finish_cancelled(self, run_id: str) -> None:
        for ask in self.store.list_asks(status=AskStatus.pending, run_id=run_id):
            kind = self._kinds.get(ask.kind)  # an app not loaded here still gets its asks closed
            outcome = kind.cancelled_result(ask.payload) if kind is not None else None
            self._waiting.pop(ask.id, None)
            timer = self._timers.pop(ask.id, None)
            if timer is not None:
                timer.cancel()
            self._close_quietly(ask, AskStatus.cancelled, outcome, by="stop")
        self._plans.cancel_open(run_id)
        self._finish(run_id, RunStatus.cancelled)

    # ---- plumbing ---------------------------------------------------------------------------------------------

    def _register(self, agent: Agent) -> None:
        for tool in agent.tools:
            if tool.ask_kind is not None:
                self._kinds[tool.ask_kind.name] = tool.ask_kind

    def _kind(self, name: str) -> AskKind:
        kind = self._kinds.get(name)
        if kind is None:
            raise ConfigError(f"No ask kind {name!r} is registered in this process; resume the run's app first.")
        return kind

    def _emit(self, event: Event) -> None:
        """Tell this process's listeners and record the event, in order. Events of a run in progress are written with
        its next checkpoint; those another process may act on (asks, plans) are written at once."""
        self._notify(event)
        live = self._live.get(event.run_id)
        if live is not None:
            live.events.append((event.type, event.model_dump(mode="json", exclude={"run_id", "type"}), utcnow()))
            if not isinstance(event, ToolCalled | ToolReturned | RunStarted | StepStarted | ModelText):
                self._flush(event.run_id)
        else:
            self.store.append_event(event.run_id, event.type, event.model_dump(mode="json", exclude={"run_id", "type"}))

    def _notify(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _attach_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._poller = None
            self._active = None  # a semaphore belongs to one event loop
            self._closed_seq = self.store.ask_closed_high_water()

    def _loop_or_fail(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("The runtime is not attached to an event loop; start or resume a run first.")
        return self._loop

    def _ensure_poller(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = self._loop_or_fail().create_task(self._poll())

    async def _poll(self) -> None:
        """One loop per process: notice asks closed by other processes, heartbeat live runs, honour remote stops."""
        since_heartbeat = 0.0
        while self._waiting or self._live:
            await asyncio.sleep(self.poll_interval)
            if self._waiting:
                self._closed_seq, closed = self.store.asks_closed_since(self._closed_seq)
                for ask_id, _status in closed:
                    if ask_id in self._waiting:
                        ask = self.store.get_ask(ask_id)
                        # Recorded by the process that closed it; here only this process's listeners hear of it.
                        self._notify(AskClosed(run_id=ask.run_id, ask_id=ask.id, kind=ask.kind, status=ask.status.value, answered_by=ask.answered_by))
                        self._ask_closed(ask_id)
            since_heartbeat += self.poll_interval
            if since_heartbeat >= self.heartbeat_interval:
                since_heartbeat = 0.0
                self.store.heartbeat()
                for run_id in self.store.cancel_requested():
                    asyncio.get_running_loop().create_task(self.stop(run_id))


def _answered_call(ask: AskRecord) -> ToolReturned:
    """The result of the tool call an ask paused, as the event any tool's result is."""
    waited = datetime.fromisoformat(ask.closed_at or ask.created_at) - datetime.fromisoformat(ask.created_at)
    ok = not (isinstance(ask.outcome, dict) and ask.outcome.get("ok") is False)
    return ToolReturned(
        run_id=ask.run_id, tool_call_id=ask.tool_call_id or ask.id, tool_name=ask.kind, ok=ok, result=ask.outcome, duration_ms=waited.total_seconds() * 1000
    )
