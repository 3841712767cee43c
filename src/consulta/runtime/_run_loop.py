"""Advancing runs: from a prompt or from closed asks, one stretch on the engine at a time, to the run's end or its
next pause.

A run advances until it finishes or pauses on asks; the asks and the checkpoint go to the store and the run's task
ends — nothing waits on a person. When its asks close, the run continues from the conversation it holds (or its
checkpoint, after a restart) with the asks' outcomes as the paused calls' results.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model

if TYPE_CHECKING:
    from pydantic_ai import InstrumentationSettings

from ._agent import Agent
from ._asks import AskDesk
from ._claims import reply_lang
from ._engine import (
    Cancelled,
    EngineRun,
    PausedCall,
    RunDeps,
    build_engine_agent,
    carry_over,
    load_messages,
    pending_tool_calls,
    returned_call_ids,
)
from ._errors import ConsultaError, ToolError, model_failure
from ._events import ModelText, ToolReturned
from ._grounding import Evidence
from ._plan_book import PLAN_ASK, PlanBook, decided_reply, staged_result
from ._records import AskRecord, AskStatus, PlanRecord, PlanStatus, RunStatus
from ._run_log import RunLog
from ._store import Store

__all__ = ["AskPolicy", "EngineTracing", "LiveRun", "RunLoop"]

_logger = logging.getLogger(__name__)

AskPolicy = Literal["wait", "defer", "fail"]
"""What happens when a run pauses on an ask: `wait` in this process (bounded by the agent's timeout; the seed's
blocking semantics), `defer` (persist it and let the caller return; any process can answer and resume later), or
`fail` (nothing can answer: the model gets `question_unavailable` at once)."""


class EngineTracing(Protocol):
    """What the engine's work needs from traces (`Tracing`): pydantic-ai's instrumentation, and the run's span as the
    current context while the engine works for it (its model requests nest under the run)."""

    def instrumentation(self) -> InstrumentationSettings: ...
    def run_context(self, run_id: str) -> AbstractContextManager[None]: ...


@dataclass(eq=False)
class LiveRun:
    """A run this process is responsible for."""

    log: RunLog
    agent: Agent
    task: asyncio.Task[None] | None = None
    cancel: bool = False
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    messages: list[ModelMessage] | None = None
    """The conversation in hand (the checkpoint as this process wrote it), so continuing needs no load."""
    open_asks: int = 0
    failure: Exception | None = None
    """Why the run was let go without its end recorded (the store failed even to record it failed)."""
    _instructions: str | None = None

    @property
    def run_id(self) -> str:
        return self.log.run.id

    @property
    def instructions(self) -> str:
        """The agent's instructions for this run, evaluated once: the same text at every step (the model's cache
        of the conversation holds)."""
        if self._instructions is None:
            given = self.agent.instructions
            self._instructions = given if isinstance(given, str) else given(self.log.run)
        return self._instructions


class RunLoop:
    """Advance the runs in `live` (see the module docstring)."""

    def __init__(
        self,
        *,
        store: Store,
        desk: AskDesk,
        plans: PlanBook,
        resolve_model: Callable[[str], Model],
        ask_policy: AskPolicy,
        max_active_runs: int,
        on_end: Callable[[str], None],
        tracing: EngineTracing | None = None,
    ) -> None:
        self.store = store
        self.desk = desk
        self.plans = plans
        self.resolve_model = resolve_model
        self.ask_policy: AskPolicy = ask_policy
        self.max_active_runs = max_active_runs
        self.live: dict[str, LiveRun] = {}
        self._engines: dict[tuple[int, str], tuple[Agent, Any]] = {}
        # Runs advancing at once (model calls and tools in flight); the rest wait their turn, holding only a task.
        self._active: asyncio.Semaphore | None = None
        self.on_end = on_end
        self.tracing = tracing

    def attach(self) -> None:
        self._active = None  # a semaphore belongs to one event loop

    def begin(self, log: RunLog, agent: Agent, *, prompt: str | None) -> LiveRun:
        """Carry the run here: advance a new run from `prompt`, or continue a taken-up one (prompt None)."""
        live = self.live[log.run.id] = LiveRun(log=log, agent=agent)
        self._spawn(live, self._first(live, prompt) if prompt is not None else self.continue_run(live))
        return live

    async def _first(self, live: LiveRun, prompt: str) -> None:
        await self._advance(live, prompt=prompt, history=self._thread_history(live.log))

    # ---- the run's task: whatever it raises ends the run ------------------------------------------------------

    def _spawn(self, live: LiveRun, work: Coroutine[Any, Any, None]) -> None:
        live.task = asyncio.get_running_loop().create_task(self._guarded(live, work))

    async def _guarded(self, live: LiveRun, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            live.settled.set()  # stopped from outside (the runtime closes): nothing here continues the run
            raise
        except Exception as error:  # a store, listener or engine error the run's own handling did not expect
            self.fail(live, error)

    def fail(self, live: LiveRun, error: Exception) -> None:
        """End the run `failed` with `error` (its pending asks cancelled). Should the store not record even that,
        the run is let go as it stands in the store (a restart takes it up) and its waiters get the error: no run
        is left waiting on nothing."""
        if self.live.get(live.run_id) is not live:
            live.settled.set()  # it ended already (what raised came after)
            return
        reason = f"The run stopped on an unexpected error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        try:
            self._close_asks(live.run_id, AskStatus.cancelled, by="run failed")
        except Exception:  # recording the end matters more than tidying its asks
            _logger.exception("The pending asks of failed run %s could not be cancelled.", live.run_id)
        try:
            self.finish(live.run_id, RunStatus.failed, error=reason)
        except Exception as again:
            live.failure = again
            live.log.recorder.forget(live.log)
            self._let_go(live)

    # ---- continuing -------------------------------------------------------------------------------------------

    async def continue_run(self, live: LiveRun) -> None:
        """Continue a run from what its conversation and asks say (it advances only when no ask is pending)."""
        messages = live.messages if live.messages is not None else live.log.load()
        live.messages = None
        if messages is None:  # died before its first step: start it again
            await self._advance(live, prompt=live.log.run.prompt, history=self._thread_history(live.log))
            return
        run_id = live.run_id
        self._prune_staged(run_id, messages)
        asks = self.store.list_asks(status=None, run_id=run_id)
        plan_ask = self._plan_ask(run_id)
        open_plan = next((a for a in asks if a.kind == PLAN_ASK and a.id == plan_ask), None)
        if open_plan is not None:
            if open_plan.status == AskStatus.pending:
                self.await_asks(live, [open_plan])
            else:
                await self._decide_plan(live, open_plan, messages)
            return
        calls = pending_tool_calls(messages)
        if not calls:
            await self._advance(live, prompt=None, history=messages)
            return
        by_call = {a.tool_call_id: a for a in asks}
        known = [by_call[c.tool_call_id] for c in calls if c.tool_call_id in by_call]
        if len(known) < len(calls):
            # Died between the model's response and opening its asks: run the calls again (they are read or ask
            # calls, or write calls that stage idempotently by tool call id).
            await self._advance(live, prompt=None, history=messages)
            return
        pending = [a for a in known if a.status == AskStatus.pending]
        if pending:
            self.await_asks(live, pending)
            return
        live.log.hold()
        for ask in known:  # the paused calls' results, told like any tool's (they reach the model with this step)
            live.log.emit(_answered_call(ask))
        await self._advance(
            live, prompt=None, history=messages, deferred={a.tool_call_id: a.outcome for a in known if a.tool_call_id}
        )

    def _thread_history(self, log: RunLog) -> list[ModelMessage]:
        """Before a run's first step: what the thread's previous run carries over."""
        parent = log.run.parent_run_id
        checkpoint = self.store.load_checkpoint(parent) if parent is not None else None
        return carry_over(load_messages(checkpoint[1])) if checkpoint else []

    def _prune_staged(self, run_id: str, messages: list[ModelMessage]) -> None:
        """Drop staged writes the checkpoint does not know (their step is redone after a crash and stages them again)."""
        known = returned_call_ids(messages)
        for plan in self.store.list_plans(run_id=run_id):
            if plan.status == PlanStatus.staging:
                kept = [i for i in plan.items if i["tool_call_id"] in known]
                if len(kept) != len(plan.items):
                    self.store.update_plan(plan.id, items=kept)

    def _plan_ask(self, run_id: str) -> str | None:
        """The ask of the run's plan that waits for approval, or of its plan decided while the run was not told the
        outcome (the process died between the two): either way, the run's next step is deciding that plan."""
        asked = [p for p in self.store.list_plans(run_id=run_id) if p.ask_id]
        pending = next((p for p in asked if p.status == PlanStatus.pending), None)
        if pending is not None:
            return pending.ask_id
        # A plan is opened only at the end of a run, and its decision ends the run: a decided plan of a run still
        # going was decided just before a crash.
        return asked[-1].ask_id if asked and asked[-1].status != PlanStatus.staging else None

    # ---- advancing --------------------------------------------------------------------------------------------

    async def _advance(
        self, live: LiveRun, *, prompt: str | None, history: list[ModelMessage], deferred: dict[str, Any] | None = None
    ) -> None:
        if self._active is None:
            self._active = asyncio.Semaphore(self.max_active_runs)
        async with self._active:
            live.log.hold()
            await self._advance_now(live, prompt=prompt, history=history, deferred=deferred)

    async def _advance_now(
        self, live: LiveRun, *, prompt: str | None, history: list[ModelMessage], deferred: dict[str, Any] | None
    ) -> None:
        log, agent = live.log, live.agent
        try:
            engine_run = EngineRun(
                engine=self._engine_for(agent, log.run.model),
                deps=self._deps(live, prompt if prompt is not None else log.run.prompt),
                history=history,
                prompt=prompt,
                deferred=deferred,
                max_steps=agent.max_steps,
                on_step=log.checkpoint,
                check_cancel=lambda: live.cancel,
            )
            with self.tracing.run_context(live.run_id) if self.tracing is not None else nullcontext():
                text, paused, messages = await engine_run()
        except Cancelled as stop:
            log.checkpoint(stop.messages)
            self.finish_cancelled(live.run_id)
            return
        except asyncio.CancelledError:
            if live.cancel:
                self.finish_cancelled(live.run_id)
            raise
        except UsageLimitExceeded as error:
            self.finish(
                live.run_id, RunStatus.failed, error=f"The run reached its step limit ({agent.max_steps}): {error}"
            )
            return
        except Exception as error:  # the run fails with a readable reason; the process goes on
            # Ours (the model stuck, a model server's missing feature) and the model API's failures say what went
            # wrong and what to do, in the person's language; anything else is named as it is.
            known = error if isinstance(error, ConsultaError) else model_failure(error)
            reason = known.localized(reply_lang(log.run.prompt, log.run.lang)) if known else None
            self.finish(live.run_id, RunStatus.failed, error=reason or f"{type(error).__name__}: {error}")
            return
        if live.cancel:
            log.checkpoint(messages)
            self.finish_cancelled(live.run_id)
            return
        if paused:
            log.checkpoint(messages)
            live.messages = messages
            log.release()  # from the first ask opened, another process may answer it and record that
            self._open_asks(live, paused)
            return
        if text:
            log.emit(ModelText(run_id=live.run_id, text=text))
        if agent.executor is not None:
            plan = next((p for p in self.store.list_plans(run_id=live.run_id) if p.status == PlanStatus.staging), None)
            if plan is not None and plan.items:
                log.checkpoint(messages)
                log.set_status(RunStatus.running, output=text or "")  # the reply, kept for the end
                log.release()  # its approval may be given in another process
                self._open_plan(live, plan)
                return
        self.finish(live.run_id, RunStatus.finished, output=text or "", messages=messages)

    def _engine_for(self, agent: Agent, model_spec: str) -> Any:
        key = (id(agent), model_spec)
        cached = self._engines.get(key)
        if cached is None or cached[0] is not agent:
            if len(self._engines) >= 64:
                self._engines.pop(next(iter(self._engines)))
            engine = build_engine_agent(agent, self.resolve_model(model_spec))
            if self.tracing is not None:
                engine.instrument = self.tracing.instrumentation()
            cached = self._engines[key] = (agent, engine)
        return cached[1]

    def _deps(self, live: LiveRun, prompt: str | None) -> RunDeps:
        async def stage(tool_call_id: str, tool_name: str, op: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
            return self._stage(live, tool_call_id, tool_name, op, evidence)

        return RunDeps(agent=live.agent, instructions=live.instructions, prompt=prompt, log=live.log, stage=stage)

    # ---- write tools: staging and plans -----------------------------------------------------------------------

    def _stage(
        self, live: LiveRun, tool_call_id: str, tool_name: str, op: dict[str, Any], evidence: Evidence
    ) -> dict[str, Any]:
        executor = live.agent.executor
        if executor is None:
            raise ToolError("no_plan_executor", f"{tool_name} cannot be staged: this agent cannot apply writes.")
        executor.check_grounding(tool_name, op, evidence)
        plan, previews = self.plans.stage(
            run_id=live.run_id,
            app=live.agent.app,
            executor=executor,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            op=op,
        )
        return staged_result(
            plan, previews, next_step="Now tell the user, in one short sentence in their language, what is staged."
        )

    def _open_plan(self, live: LiveRun, plan: PlanRecord) -> None:
        assert live.agent.executor is not None
        try:
            ask = self.plans.open(
                plan,
                executor=live.agent.executor,
                lang=live.log.run.lang,
                timeout_s=live.agent.question_timeout,
                trace_id=live.log.run.trace_id,
            )
        except ToolError as error:  # the data changed under the staged plan: nothing to approve
            self.finish(live.run_id, RunStatus.failed, error=f"Plan {plan.id} no longer fits the data: {error.message}")
            return
        self.await_asks(live, [ask])

    async def _decide_plan(self, live: LiveRun, ask: AskRecord, messages: list[ModelMessage]) -> None:
        executor = live.agent.executor
        assert executor is not None
        live.log.hold()
        run = live.log.run
        lang = reply_lang(run.prompt, run.lang)
        previews = self.plans.previews(ask, executor=executor, lang=lang)  # before applying: the data as approved
        status, result = await self.plans.decide(ask, executor=executor)
        plan_id = ask.payload["plan_id"]
        if status == PlanStatus.failed and (result or {}).get("error_code") == "apply_failed":
            self.finish(
                live.run_id, RunStatus.failed, error=f"Applying plan {plan_id} failed: {(result or {}).get('message')}"
            )
            return
        # The reply written while the plan waited said "staged"; what the decision did is said by code, from the plan.
        reply = decided_reply((status, result), previews=previews, lang=lang)
        live.log.emit(ModelText(run_id=live.run_id, text=reply))
        # The thread's next turn carries it over too: the agent's last word on the plan is its outcome.
        told = [*messages, ModelResponse(parts=[TextPart(content=reply)])]
        if status == PlanStatus.failed:  # the approved change was refused: the run did not do what it was asked
            error = (
                f"Plan {plan_id} was not applied: {(result or {}).get('message') or (result or {}).get('error_code')}"
            )
            self.finish(live.run_id, RunStatus.failed, output=reply, error=error, messages=told)
            return
        self.finish(live.run_id, RunStatus.finished, output=reply, messages=told)

    # ---- asks: opening and waiting ----------------------------------------------------------------------------

    def _open_asks(self, live: LiveRun, paused: list[PausedCall]) -> None:
        opened: list[AskRecord] = []
        existing = {a.tool_call_id: a for a in self.store.list_asks(status=None, run_id=live.run_id)}
        for item in paused:
            if item.ask is None:
                self.finish(
                    live.run_id,
                    RunStatus.failed,
                    error=f"Tool call {item.call.tool_name} was deferred outside Consulta's asks.",
                )
                return
            if item.call.tool_call_id in existing:  # opened before a restart
                opened.append(existing[item.call.tool_call_id])
                continue
            opened.append(
                live.log.open_ask(
                    kind=item.ask["kind"],
                    payload=item.ask["payload"],
                    tool_call_id=item.call.tool_call_id,
                    timeout_s=live.agent.question_timeout,
                )
            )
        pending = [a for a in opened if a.status == AskStatus.pending]
        if pending:
            self.await_asks(live, pending)
        else:
            self.continue_soon(live)

    def await_asks(self, live: LiveRun, asks: list[AskRecord]) -> None:
        """The run waits on `asks` under the ask policy (`fail`: they close at once, declined)."""
        if self.ask_policy == "fail":
            for ask in asks:
                self.desk.close_quietly(
                    ask, AskStatus.declined, self.desk.kind(ask.kind).unavailable_result(ask.payload), by="policy:fail"
                )
            self.continue_soon(live)
            return
        live.log.release()
        live.log.set_status(RunStatus.waiting)
        for ask in asks:
            if self.desk.wait(live.run_id, ask, timed=self.ask_policy == "wait"):
                live.open_asks += 1
        if self.ask_policy == "defer":
            live.settled.set()  # nothing here will continue it unless an answer arrives in this process

    def ask_closed(self, ask_id: str) -> None:
        """An ask closed (here or elsewhere): continue its run when it was the last one the run waited on here."""
        run_id = self.desk.stop_waiting(ask_id)
        live = self.live.get(run_id) if run_id is not None else None
        if live is None:
            return
        live.open_asks -= 1
        if live.open_asks > 0:
            return  # other asks of the same step are still open
        live.settled.clear()
        self.continue_soon(live)

    def continue_soon(self, live: LiveRun) -> None:
        try:
            live.log.set_status(RunStatus.running)
        except Exception as error:
            self.fail(live, error)
            return
        self._spawn(live, self.continue_run(live))

    # ---- ending -----------------------------------------------------------------------------------------------

    def finish(
        self,
        run_id: str,
        status: RunStatus,
        *,
        output: str | None = None,
        error: str | None = None,
        messages: list[ModelMessage] | None = None,
    ) -> None:
        """End the run (see `RunLog.end`). Should the store fail, the run is still carried here, as it was."""
        live = self.live.get(run_id)
        log = live.log if live is not None else self.desk.recorder.take_up(self.store.get_run(run_id))
        log.end(status, output=output, error=error, messages=messages)
        if live is not None:
            self._let_go(live)
        else:
            self.on_end(run_id)

    def _let_go(self, live: LiveRun) -> None:
        """This process no longer carries the run: no lease, no waits, and its waiters wake up."""
        if self.live.get(live.run_id) is live:
            del self.live[live.run_id]
        try:
            self.on_end(live.run_id)
        finally:
            live.settled.set()

    def finish_cancelled(self, run_id: str) -> None:
        self._close_asks(run_id, AskStatus.cancelled, by="stop")
        self.plans.cancel_open(run_id)
        self.finish(run_id, RunStatus.cancelled)

    def _close_asks(self, run_id: str, status: AskStatus, *, by: str) -> None:
        """Close the run's pending asks (nothing continues the run when they close: it is ending)."""
        for ask in self.store.list_asks(status=AskStatus.pending, run_id=run_id):
            kind = self.desk.known_kind(ask.kind)  # an app not loaded here still gets its asks closed
            self.desk.stop_waiting(ask.id)
            self.desk.close_quietly(
                ask, status, kind.cancelled_result(ask.payload) if kind is not None else None, by=by
            )


def _answered_call(ask: AskRecord) -> ToolReturned:
    """The result of the tool call an ask paused, as the event any tool's result is."""
    waited = datetime.fromisoformat(ask.closed_at or ask.created_at) - datetime.fromisoformat(ask.created_at)
    ok = not (isinstance(ask.outcome, dict) and ask.outcome.get("ok") is False)
    return ToolReturned(
        run_id=ask.run_id,
        tool_call_id=ask.tool_call_id or ask.id,
        tool_name=ask.kind,
        ok=ok,
        result=ask.outcome,
        duration_ms=waited.total_seconds() * 1000,
    )
