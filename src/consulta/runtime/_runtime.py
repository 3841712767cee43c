"""The runtime: start runs, pause them on asks, resume them from their checkpoint, stop them.

One mechanism serves the in-process wait and the cross-process resume. A run advances until it finishes or pauses on
asks; the asks and the conversation checkpoint go to the store and the run's task ends — nothing waits on a person,
not a thread and not a coroutine (a pending ask costs a row, plus a timer in the process that bounds the wait). When
an ask closes (answered, cancelled, timed out, declined), the run is advanced again with the ask's outcome as the
paused tool call's result: in this process if it is here, or in any process that resumes it after a restart.

The parts, one job each: `RunRecorder` records runs (`_run_log`), `RunLoop` advances them (`_run_loop`), `AskDesk`
closes asks and bounds the waits (`_asks`), `Leases` shares runs with other processes (`_leases`), `EventBus`
tells listeners (`_event_bus`). This class puts them together behind the public API.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_ai.models import Model

from ._agent import Agent
from ._asks import AskDesk, Outcome
from ._errors import ConfigError, ConflictError
from ._event_bus import EventBus, Listener
from ._events import RunStarted
from ._leases import Leases
from ._plan_book import PlanBook
from ._records import AskRecord, AskStatus, RunRecord, RunStatus
from ._run_log import RunRecorder
from ._run_loop import AskPolicy, RunLoop
from ._store import Store

if TYPE_CHECKING:
    from ._tracing import Tracing

__all__ = ["AskPolicy", "Runtime"]

_TERMINAL = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)
STOP_GRACE = 1.0
"""Seconds a stopped run has to reach its next step by itself before its task is cancelled (a tool call in progress
gets `CancelledError`: its nested runs end `cancelled`, its files are written atomically or not at all)."""


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
        tracing: Tracing | None = None,
    ) -> None:
        """`tracing`: trace every run of this runtime (its events as spans, the engine instrumented in the run's
        trace); off when None."""
        self.store = store
        self.resolve_model = resolve_model
        self._bus = EventBus()
        self.recorder = RunRecorder(store, self._bus)
        """Records every run of this process (front ends that drive runs themselves, e.g. MCP sessions, use it too)."""
        self._asks = AskDesk(
            store,
            self.recorder,
            answered_by=answered_by,
            on_closed=self._on_closed,
            on_timeout_failed=self._on_timeout_failed,
        )
        self.plans = PlanBook(store, self.recorder.emit)
        self._runs = RunLoop(
            store=store,
            desk=self._asks,
            plans=self.plans,
            resolve_model=resolve_model,
            ask_policy=ask_policy,
            max_active_runs=max_active_runs,
            on_end=self._on_end,
            tracing=tracing,
        )
        self.leases = Leases(
            store,
            poll_interval=poll_interval,
            heartbeat_interval=heartbeat_interval,
            waiting=lambda: self._asks.waiting,
            on_closed_elsewhere=self._closed_elsewhere,
        )
        """This process's hold on the runs it carries (front ends driving runs themselves hold theirs here too)."""
        self._event_loop: asyncio.AbstractEventLoop | None = None
        if tracing is not None:
            tracing.install(self, store)

    @property
    def ask_policy(self) -> AskPolicy:
        return self._runs.ask_policy

    # ---- public API -------------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event of every run in this process; returns an unsubscribe function."""
        return self._bus.subscribe(listener)

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
        a continued conversation keeps its principal unless another is given. The run records `agent.name`.
        """
        self.attach()
        thread_id = None
        if continue_from is not None:
            previous = self.store.get_run(continue_from)
            thread_id = previous.thread_id
            principal = principal if principal is not None else previous.principal
        log = self.recorder.create(
            agent=agent.name,
            app=agent.app,
            prompt=prompt,
            model=model,
            lang=lang,
            thread_id=thread_id,
            parent_run_id=continue_from,
            options=agent.options,
            principal=principal,
        )
        self._asks.register(agent)
        self._runs.begin(log, agent, prompt=prompt)
        self._hold(log.run.id)
        return log.run

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
        """Wait until the run ends, or waits on an ask that nothing in this process will continue (policy `defer`).

        A run whose step failed ends `failed` with the reason. Should the store fail even to record that, this
        process lets the run go (a restart takes it up from its last checkpoint) and its waiters get the store's
        error."""
        live = self._runs.live.get(run_id)
        if live is None:
            return self.store.get_run(run_id)
        await live.settled.wait()
        if live.failure is not None:
            raise live.failure
        return live.log.run  # as this process recorded it: no read

    async def resume(self, run_id: str, agent: Agent) -> RunRecord:
        """Take up a run after a restart (or from another process): continue it from its checkpoint.

        `agent` must be the agent the run recorded (`RunRecord.agent`; ConfigError otherwise). Closed asks are
        applied; pending ones are waited for under this runtime's ask policy. Raises ConflictError when a live
        process still owns the run.
        """
        self.attach()
        run = self.store.get_run(run_id)
        if run.status in _TERMINAL or run.external:
            return run  # nothing to do, or nothing Consulta can do: an outside client drives it
        if run_id in self._runs.live:
            return run
        _check_agent(run, agent)
        if not self.store.claim_run(run_id):
            raise ConflictError(key="error.run.elsewhere", values={"id": run_id, "owner": run.owner})
        self._asks.register(agent)
        log = self.recorder.take_up(run)
        try:
            log.hold()
            log.emit(RunStarted(run_id=run_id, app=agent.app, agent=agent.name, prompt=None, resumed=True))
            log.set_status(RunStatus.running)
        except Exception as error:  # claimed but not carried: it ends, rather than look carried by this process
            with contextlib.suppress(Exception):  # the caller hears the first error (and the run stays as it is)
                log.end(RunStatus.failed, error=f"The run could not be resumed: {type(error).__name__}: {error}")
            raise
        self._runs.begin(log, agent, prompt=None)
        self._hold(run_id)
        return run

    def is_running_here(self, run_id: str) -> bool:
        """Whether this runtime is carrying the run (advancing it, or waiting on its asks to continue it)."""
        return run_id in self._runs.live

    def answer(self, ask: str | AskRecord, answer: Any, *, answered_by: str | None = None) -> AskRecord:
        """Answer a pending ask (from any thread), given its id or the record the caller already read: one read at
        most, then the conditional close. Unknown id → NotFoundError; closed → ConflictError; bad shape →
        InvalidAnswerError (nothing changes on an error)."""
        return self._asks.answer(ask, answer, answered_by=answered_by)

    def cancel_ask(
        self,
        ask: str | AskRecord,
        *,
        status: AskStatus = AskStatus.cancelled,
        answered_by: str | None = None,
        outcome: Outcome | None = None,
    ) -> AskRecord:
        """Close a pending ask without an answer (the user cancelled or declined, it timed out elsewhere): the model
        gets `outcome(kind, payload)`, by default the kind's `cancelled_result`. Closed → ConflictError."""
        return self._asks.cancel(ask, status=status, answered_by=answered_by, outcome=outcome)

    async def stop(self, run_id: str) -> RunRecord:
        """Stop a run: its pending asks close as cancelled, it ends `cancelled`; a step in progress after `STOP_GRACE`
        seconds is cancelled (so the stop answers within about that time, whatever tool runs)."""
        run = self.store.get_run(run_id)
        if run.status in _TERMINAL:
            return run
        live = self._runs.live.get(run_id)
        if live is None and self.store.run_is_live_elsewhere(run_id):
            self.store.request_cancel(run_id)  # its owner notices within its poll interval
            return run
        if live is not None and live.task is not None and not live.task.done():
            live.cancel = True
            _, pending = await asyncio.wait({live.task}, timeout=STOP_GRACE)
            if pending:  # a long tool call (e.g. a team at work) is cancelled: the stop reaches it and answers now
                live.task.cancel()
                await asyncio.wait({live.task})
            return self.store.get_run(run_id)
        self._runs.finish_cancelled(run_id)
        return self.store.get_run(run_id)

    async def aclose(self) -> None:
        """Stop background work (runs in progress are left as they are: their checkpoints are consistent)."""
        self._asks.timers.clear()
        await self.leases.aclose()
        for live in list(self._runs.live.values()):
            if live.task is not None and not live.task.done():
                live.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):  # a run's failure is on its record already
                    await live.task

    def register(self, agent: Agent) -> None:
        """Make the ask kinds of `agent` known (so its asks can be answered before its run is resumed here)."""
        self._asks.register(agent)

    def attach(self) -> None:
        """Bind the runtime to the running event loop (start, resume and front ends that hold runs call it)."""
        loop = asyncio.get_running_loop()
        if self._event_loop is not loop:
            self._event_loop = loop
            self._runs.attach()
            self.leases.attach()

    # ---- plumbing ---------------------------------------------------------------------------------------------

    def _hold(self, run_id: str) -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            loop.create_task(self.stop(run_id))

        self.leases.hold(run_id, on_stop=stop)

    def _on_end(self, run_id: str) -> None:
        self.leases.release(run_id)

    def _on_closed(self, ask: AskRecord) -> None:
        """An ask closed in this process (on any thread): its run continues on the event loop if it waits here."""
        loop = self._event_loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._runs.ask_closed(ask.id)
        else:
            loop.call_soon_threadsafe(self._runs.ask_closed, ask.id)

    def _on_timeout_failed(self, ask: AskRecord, error: Exception) -> None:
        """An ask's timeout could not close it: its run fails rather than wait on it."""
        live = self._runs.live.get(ask.run_id)
        if live is not None:
            self._asks.stop_waiting(ask.id)
            self._runs.fail(live, error)

    def _closed_elsewhere(self, ask_id: str) -> None:
        """Another process closed an ask a run here waits on, and recorded it: listeners here hear what it wrote."""
        live = self._runs.live.get(self._asks.waiting.get(ask_id, ""))
        try:
            if live is not None:
                live.log.catch_up()
        finally:  # the run goes on whatever telling it met
            self._runs.ask_closed(ask_id)


def _check_agent(run: RunRecord, agent: Agent) -> None:
    # A run recorded before agents were named ("") ran its app's main agent: whichever the caller gives stands.
    if run.agent and run.agent != agent.name:
        raise ConfigError(
            f"Run {run.id} ran agent {run.agent!r}, not {agent.name!r}; resume it with the agent it recorded (RunRecord.agent)."
        )
