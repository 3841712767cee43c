"""One app served to people through a front end (web, desktop, MCP): one store, one runtime, every call scoped to
a principal — the person, browser session or token the runs belong to.

A principal sees only its own runs and asks (None stands for the runs recorded before runs had principals, which
the terminal acts for): another principal's id is answered exactly like an unknown id
(NotFoundError), so ids reveal nothing. Answers go through the runtime's ask API (validated, conditional close),
and a run whose process is gone is resumed here, so an answer always lets the run continue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..apps import AppDef, AppEnv, AppOptions, is_proposal, resolve_app, settle
from ..config import Settings
from ..i18n import normalize_lang
from ..models import resolve_model
from ..runtime import (
    Agent,
    AskPolicy,
    AskRecord,
    AskStatus,
    ConflictError,
    Event,
    EventRecord,
    NotFoundError,
    RunEnded,
    RunRecord,
    RunStarted,
    RunStatus,
    Runtime,
    Store,
    Tracing,
    tracing_from_setting,
)

__all__ = ["LOCAL_PRINCIPAL", "AppHost", "HandedOver", "HostEvent", "PrincipalView"]

LOCAL_PRINCIPAL = "local"
"""The machine's own user: runs started in the terminal or the desktop window."""

_log = logging.getLogger("consulta.host")

_HANDING_OVER: ContextVar[str | None] = ContextVar("consulta_handing_over", default=None)
"""While the host starts the next agent's run: the id of the run handing its turn over (the new run's `RunStarted`,
told from inside the start, is known by it as a hand-over's)."""
_REMEMBERED = 1024
"""Hand-overs a long-lived host remembers for `handed_from` / `handed_to` (the store has them all)."""


class HandedOver(BaseModel):
    """Run `run_id` finished and handed the turn to agent `agent` of the app: run `next_run_id` (started by the
    host). Recorded as the run's event `handed_over` right after its `run_ended` (`seq`: its number in the run), and
    told to the host's listeners in that order, together: the run's `RunEnded` is held back until the next run has
    started, then both are told in one go, so a stream that ends with the run has told the hand-over too."""

    type: Literal["handed_over"] = "handed_over"
    run_id: str
    next_run_id: str
    agent: str
    seq: int = 0


HostEvent = Event | HandedOver
"""What the host's listeners hear: the runtime's events, and the host's hand-overs."""


class AppHost:
    """Serve app `app` (a name or an `AppDef`) to front ends. Create inside the event loop that will run
    the agents.

    `options` are the app's options for new sessions (validated against its options model). A run's agent is built
    from what the run recorded — its agent's name and options — so a resumed run comes back as the same agent. When
    a run finishes and the app's `follow_up` hands the turn over, the host starts the next agent's run (every front
    end sees it start; the first run's listeners then hear its `RunEnded` and `HandedOver`).

    Runs are traced as `settings.traces` says (ConfigError for a value that is not a traces setting, before anything
    is opened), unless a `runtime` is given: it traces as it was made to.
    """

    def __init__(
        self,
        *,
        app: str | AppDef,
        settings: Settings,
        options: Mapping[str, Any] | AppOptions | None = None,
        ask_policy: AskPolicy = "wait",
        store: Store | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        self.settings = settings
        self.app: AppDef = resolve_app(app)
        self.options: AppOptions = self.app.parse_options(options)
        self.tracing: Tracing | None = tracing_from_setting(settings.traces) if runtime is None else None
        """This host's tracing (shut down with the host), if its runtime is its own and traces are on."""
        self.store = store or (runtime.store if runtime is not None else Store(settings.database_url))
        self.runtime = runtime or Runtime(
            store=self.store, resolve_model=self._resolve_model, ask_policy=ask_policy, tracing=self.tracing
        )
        if self.app.tables is not None:
            self.store.open_app_tables(self.app.tables)
        self.env = AppEnv(
            store=self.store,
            resolve_model=self._resolve_model,
            model=settings.model,
            lang=normalize_lang(settings.lang),
            data_dir=settings.app_dir(self.app.name),
        )
        self.agent: Agent = self.app.build(self.app.main_agent, self.options, self.env)
        """The main agent over this host's options (each new turn of the machine's own user starts with it; a
        session's turns start with `for_principal(p).agent`, the same agent over the session's own data)."""
        self.runtime.register(self.agent)
        self._session_agents: OrderedDict[str, Agent] = OrderedDict()  # a session's main agent, latest used kept
        self._listeners: list[Callable[[HostEvent], None]] = []
        self._handovers: dict[str, asyncio.Task[RunRecord | None]] = {}  # by the finished run's id
        self._chains: dict[str, tuple[str, ...]] = {}  # a handed-over run's id -> the agents of its turn so far
        self._adopting: asyncio.Task[None] | None = None
        self._handed_from: OrderedDict[str, str] = (
            OrderedDict()
        )  # a run started by a hand-over -> the run that handed over
        self._handed_to: OrderedDict[str, str] = (
            OrderedDict()
        )  # a run that handed over -> the run it handed its turn to
        self._unsubscribe = self.runtime.subscribe(self._hear)
        self._closed = False

    def _resolve_model(self, spec: str) -> Any:
        return resolve_model(spec, models_dir=self.settings.models_dir)

    # ---- agents -----------------------------------------------------------------------------------------------

    def env_for(self, principal: str | None) -> AppEnv:
        """The env of the agents acting for `principal`: `session` is the principal, except for the machine's own
        user (`LOCAL_PRINCIPAL`, and None: runs recorded before principals), whose data is the app's default."""
        return self.env if principal in (None, LOCAL_PRINCIPAL) else replace(self.env, session=principal)

    def agent_of(self, principal: str | None) -> Agent:
        """The main agent that starts `principal`'s turns: over the session's own data (see `env_for`). An app whose
        data is the same for every session (its `data_path` does not depend on `env.session`) serves every session
        with the host's agent (building one per session would cost each session its own read of the app's data)."""
        env = self.env_for(principal)
        if env.session is None or self._data_is_shared(env):
            return self.agent
        agent = self._session_agents.get(env.session)
        if agent is None:
            agent = self._session_agents[env.session] = self.app.build(self.app.main_agent, self.options, env)
        _remember(self._session_agents, env.session, agent)
        return agent

    def _data_is_shared(self, env: AppEnv) -> bool:
        declared = self.app.data_path
        return declared is None or declared(self.options, env) == declared(self.options, self.env)

    def agent_for(self, run: RunRecord) -> Agent:
        """The agent of `run`, rebuilt from what it recorded: its agent's name ("" before runs recorded it: the main
        agent) and its options, acting for the run's principal (its data is that session's, see `env_for`)."""
        return self.app.build(
            getattr(run, "agent", "") or "", self.app.recorded_options(run.options), self.env_for(run.principal)
        )

    def for_principal(self, principal: str | None) -> PrincipalView:
        """The app as `principal`'s runs see it (its main agent, env and data are the session's own)."""
        return PrincipalView(host=self, principal=principal)

    # ---- runs -------------------------------------------------------------------------------------------------

    async def start(
        self, prompt: str, *, principal: str | None, lang: str | None = None, continue_from: str | None = None
    ) -> RunRecord:
        """Start a run of the app's main agent for `principal` (continuing its earlier run `continue_from`, if given)."""
        if continue_from is not None:
            self.run(continue_from, principal=principal)
        return await self.runtime.start(
            self.agent_of(principal),
            prompt,
            model=self.settings.model,
            lang=normalize_lang(lang or self.settings.lang),
            continue_from=continue_from,
            principal=principal,
        )

    async def settled(self, run_id: str, *, principal: str | None) -> RunRecord:
        """Wait until the run ends, or waits on an ask nothing in this process will continue (policy `defer`)."""
        self.run(run_id, principal=principal)
        return await self.runtime.settled(run_id)

    async def resume(self, run_id: str, *, principal: str | None) -> RunRecord:
        """Take the run up here from its checkpoint, as the agent it recorded (ConflictError if a live process has
        it)."""
        run = self.run(run_id, principal=principal)
        return await self.runtime.resume(run_id, self.agent_for(run))

    def run(self, run_id: str, *, principal: str | None) -> RunRecord:
        """The run, if it belongs to `principal`; else NotFoundError."""
        try:
            run = self.store.get_run(run_id)
        except NotFoundError:
            run = None
        if run is None or run.principal != principal or run.app != self.app.name:
            raise _unknown("core.error.no_run", run_id)
        return run

    def runs(self, *, principal: str | None, limit: int = 50) -> list[RunRecord]:
        return self.store.list_runs(principal=principal, app=self.app.name, limit=limit)

    def events(self, run_id: str, *, principal: str | None, after_id: int = 0) -> list[EventRecord]:
        """The run's recorded events after `after_id` (events of a step in progress are recorded with its checkpoint)."""
        self.run(run_id, principal=principal)
        return self.store.list_events(run_id, after_id=after_id)

    async def stop(self, run_id: str, *, principal: str | None) -> RunRecord:
        self.run(run_id, principal=principal)
        return await self.runtime.stop(run_id)

    def subscribe(self, listener: Callable[[HostEvent], None]) -> Callable[[], None]:
        """Hear every event of every run in this process (filter by run id), and the host's hand-overs."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _tell(self, event: HostEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # ---- the hand-over ----------------------------------------------------------------------------------------

    def _hear(self, event: Event) -> None:
        """The runtime's events, passed on; a finished run of an app that hands over is held back until the next
        agent's run has started, so a front end that sees the run end already knows what comes next."""
        if isinstance(event, RunStarted) and not event.resumed and (handing := _HANDING_OVER.get()) is not None:
            _remember(self._handed_from, event.run_id, handing)
            _remember(self._handed_to, handing, event.run_id)
        if isinstance(event, RunEnded) and event.status == RunStatus.finished.value and self.app.follow_up is not None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None
            if loop is not None:
                self._forget_old_handovers()
                self._handovers[event.run_id] = loop.create_task(self._hand_over(event))
                return
        self._tell(event)

    async def _hand_over(self, ended: RunEnded) -> RunRecord | None:
        handed: tuple[RunRecord, HandedOver] | None = None
        try:
            handed = await self._start_next(ended.run_id)
        except Exception:  # the first run stands; its hand-over is logged, not lost silently
            _log.exception("The hand-over after run %s failed.", ended.run_id)
        finally:
            self._tell(ended)  # in the store's order: the run's end, then its hand-over (told together)
            if handed is not None:
                self._tell(handed[1])
        return handed[0] if handed is not None else None

    def _forget_old_handovers(self, keep: int = 256) -> None:
        """A long-lived host keeps the latest finished hand-overs only (the store has them all)."""
        done = [run_id for run_id, task in self._handovers.items() if task.done()]
        for run_id in done[: max(0, len(self._handovers) - keep)]:
            del self._handovers[run_id]

    def handed_from(self, run_id: str) -> str | None:
        """The run that handed its turn over to run `run_id` in this process (known from the new run's `RunStarted`
        on), or None: a run of the person's own (or one this host has forgotten)."""
        return self._handed_from.get(run_id)

    def handed_to(self, run_id: str) -> str | None:
        """The run that run `run_id` handed its turn over to in this process (known from the run's `RunEnded` on),
        or None."""
        return self._handed_to.get(run_id)

    async def handed_over(self, run_id: str) -> RunRecord | None:
        """The run that finished run `run_id` handed its turn to in this process (waiting for the hand-over if it is
        under way), or None."""
        task = self._handovers.get(run_id)
        return await task if task is not None else None

    async def follow_up(self, run_id: str) -> RunRecord | None:
        """Hand finished run `run_id` over to the app's next agent, if its `follow_up` says so: start that agent's
        run (its own options recorded, for the same principal) and tell listeners `HandedOver`. Returns the new run.
        (The host does this itself when a run of this process finishes.)"""
        handed = await self._start_next(run_id)
        if handed is None:
            return None
        self._tell(handed[1])
        return handed[0]

    async def _start_next(self, run_id: str) -> tuple[RunRecord, HandedOver] | None:
        """Start the next agent's run, if any, and record the hand-over on the finished run (told by the caller)."""
        if self.app.follow_up is None:
            return None
        run = self.store.get_run(run_id)
        if run.external:
            return None  # a run driven from outside (an MCP session): its client's model speaks next, not ours
        handover = self.app.follow_up(run, self.env)
        if handover is None:
            return None
        chain = self._chains.pop(run_id, (getattr(run, "agent", "") or self.app.main_agent,))
        if handover.agent in chain:  # a turn hands over to each agent once at most: no loop
            _log.warning(
                "App %s handed run %s back to agent %r of the same turn; not followed.",
                self.app.name,
                run_id,
                handover.agent,
            )
            return None
        options = self.app.recorded_options({**run.options, **handover.options})
        agent = self.app.build(handover.agent, options, self.env_for(run.principal))
        handing = _HANDING_OVER.set(run.id)
        try:
            follow = await self.runtime.start(
                agent, handover.prompt, model=run.model, lang=handover.lang or run.lang, principal=run.principal
            )
        finally:
            _HANDING_OVER.reset(handing)
        _remember(
            self._handed_from, follow.id, run.id
        )  # as `_hear` noted from its RunStarted (should that be told elsewhere)
        _remember(self._handed_to, run.id, follow.id)
        self._chains[follow.id] = (*chain, handover.agent)
        told = HandedOver(run_id=run.id, next_run_id=follow.id, agent=handover.agent)
        stored = self.store.append_event(run.id, told.type, told.model_dump(mode="json", exclude={"type", "seq"}))
        return follow, told.model_copy(update={"seq": getattr(stored, "seq", 0)})

    # ---- asks -------------------------------------------------------------------------------------------------

    def asks(
        self, *, principal: str | None, run_id: str | None = None, status: str | None = AskStatus.pending
    ) -> list[AskRecord]:
        if run_id is not None:
            self.run(run_id, principal=principal)
        return self.store.list_asks(status=status, run_id=run_id, principal=principal)

    def ask(self, ask_id: str, *, principal: str | None) -> AskRecord:
        """The ask, if its run belongs to `principal`; else NotFoundError."""
        try:
            ask = self.store.get_ask(ask_id)
            self.run(ask.run_id, principal=principal)
        except NotFoundError:
            raise _unknown("core.error.no_ask", ask_id) from None
        return ask

    async def answer(self, ask: str | AskRecord, value: Any, *, principal: str | None) -> AskRecord:
        """Answer the ask (NotFoundError, ConflictError when already closed, InvalidAnswerError; nothing changes on
        an error) and make sure its run continues.

        `ask`: its id, or the record `ask(…, principal=principal)` gave the caller (not read again: an answer reads
        the ask once, then closes it with the store's conditional update)."""
        record = self._own_ask(ask, principal=principal)
        closed = self.runtime.answer(record, value, answered_by=principal)
        await self._continue_orphan(record.run_id)
        return closed

    async def cancel(self, ask: str | AskRecord, *, principal: str | None) -> AskRecord:
        """Cancel (decline) the ask: the model is told the person cancelled (`question_cancelled` for a question).
        `ask` as for `answer`."""
        record = self._own_ask(ask, principal=principal)
        closed = self.runtime.cancel_ask(record, answered_by=principal)
        await self._continue_orphan(record.run_id)
        return closed

    def _own_ask(self, ask: str | AskRecord, *, principal: str | None) -> AskRecord:
        return ask if isinstance(ask, AskRecord) else self.ask(ask, principal=principal)

    async def _continue_orphan(self, run_id: str) -> None:
        """A run left by a process that is gone (a restarted server) is taken up here; a live one continues where it is.
        (A holder that looks alive but died, on another machine, is known gone once its lease is stale: then a server
        adopts the run, see `adopt_orphans`.)"""
        if self.runtime.is_running_here(run_id):
            return  # the common case, decided without reading the store
        run = self.store.get_run(run_id)
        if is_proposal(run):
            await settle(self, run)  # a person's own write: decided here, where its approval was given
            return
        if run.external or self.store.run_is_live_elsewhere(run_id):
            return  # an outside client (MCP) picks the answer up itself; a live run continues where it is
        await self.runtime.resume(run_id, self.agent_for(run))

    async def adopt_orphans(self, *, limit: int = 200) -> list[str]:
        """Take up here the app's runs whose holder is gone and that nothing else would continue: those left mid-step
        (`running`) and those `waiting` with every ask closed (answered as their holder died). A run waiting on an open
        ask is left as it is: its answer takes it up. Of several servers adopting one run, one wins. Returns the ids
        taken up here."""
        taken: list[str] = []
        for status in (RunStatus.running, RunStatus.waiting):
            for run in self.store.list_runs(status=status.value, app=self.app.name, limit=limit):
                if (
                    run.external
                    or (run.agent and run.agent not in self.app.agents)
                    or self.runtime.is_running_here(run.id)
                ):
                    continue
                if self.store.run_is_live_elsewhere(run.id) or self.store.list_asks(run_id=run.id):
                    continue  # its holder lives, or it waits on an answer
                with contextlib.suppress(ConflictError):  # another server took it up first
                    await self.runtime.resume(run.id, self.agent_for(run))
                    taken.append(run.id)
        return taken

    def keep_adopting(self, *, every: float = 5.0) -> None:
        """Adopt orphaned runs (`adopt_orphans`) now and every `every` seconds until the host closes: what a
        long-lived server does, so the runs of a server that died continue on the others (call on the event loop)."""
        if self._adopting is None:
            self._adopting = asyncio.get_running_loop().create_task(self._keep_adopting(every))

    async def _keep_adopting(self, every: float) -> None:
        while True:
            try:
                taken = await self.adopt_orphans()
                if taken:
                    _log.info("Took up %d run(s) whose process is gone: %s", len(taken), ", ".join(taken))
            except Exception:  # a busy or broken store: say so and look again next time
                _log.exception("Looking for runs whose process is gone failed.")
            await asyncio.sleep(every)

    # ---- lifetime ---------------------------------------------------------------------------------------------

    @property
    def data_path(self) -> Path | None:
        """The app's data (a file or a folder), as its declaration says, if it has any: the machine's own user's
        (a session's own: `for_principal(p).data_path`)."""
        return None if self.app.data_path is None else self.app.data_path(self.options, self.env)

    async def aclose(self) -> None:
        """Stop background work, flush the traces and close the store (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for task in [*self._handovers.values(), *([self._adopting] if self._adopting else [])]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._unsubscribe()
        await self.runtime.aclose()
        if self.tracing is not None:
            self.tracing.shutdown()  # ends the spans of runs left waiting, flushes the exporter
        self.store.close()


def _unknown(key: str, id_: str) -> NotFoundError:
    """An id the principal has nothing under (unknown, or another's: worded alike), in the reader's language."""
    return NotFoundError(key=key, values={"id": id_})


@dataclass(frozen=True, kw_only=True)
class PrincipalView:
    """What an app's front-end parts read of `host` for one session (`AppView`): the host's options and runtime, the
    session's env, main agent and data."""

    host: AppHost
    principal: str | None

    @property
    def options(self) -> AppOptions:
        return self.host.options

    @property
    def runtime(self) -> Runtime:
        return self.host.runtime

    @property
    def env(self) -> AppEnv:
        return self.host.env_for(self.principal)

    @property
    def agent(self) -> Agent:
        return self.host.agent_of(self.principal)

    @property
    def data_path(self) -> Path | None:
        app = self.host.app
        return None if app.data_path is None else app.data_path(self.host.options, self.env)

    def for_principal(self, principal: str | None) -> PrincipalView:
        return self.host.for_principal(principal)


def _remember(book: OrderedDict[str, Any], key: str, value: Any) -> None:
    book[key] = value
    book.move_to_end(key)
    while len(book) > _REMEMBERED:
        book.popitem(last=False)
