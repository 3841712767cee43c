"""Every MCP client's session on record: one run per session, its tool calls, events, asks and bounded waits.

An MCP client brings its own model, so a session's run never reaches Consulta's engine; it is recorded by the
runtime's own run recorder all the same (`Runtime.recorder`: the run, its numbered events, tool calls, asks and
its end), its asks close through the runtime's ask API, its waits are bounded by `AskTimers`, and the runtime's
leases keep it alive on record and honour `consulta stop`. So `consulta runs`, `consulta asks`, the other front
ends and the process's listeners see what an MCP client did.

Which requests make one session:
- handshake-era connections (protocol <= 2025-11-25): the MCP session (`ctx.session_id`);
- 2026-07-28 connections have no session: the authenticated user if there is one, else the server process (stdio
  and in-memory serve one client per process; anonymous HTTP requests cannot be told apart, so they share one).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastmcp.server.context import Context
from fastmcp.server.sessions import current_principal
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...i18n import t
from ...runtime import (
    CURRENT_TOOL_CALL,
    EXTERNAL_MODEL_PREFIX,
    PLAN_ASK,
    AskRecord,
    AskStatus,
    AskTimers,
    ConflictError,
    Event,
    Outcome,
    RunLog,
    RunStatus,
    ToolCallContext,
)
from .._host import AppHost

__all__ = ["McpSession", "SessionBook", "ToolCall", "is_modern"]


def is_modern(ctx: Context) -> bool:
    """Whether the request came over a 2026-07-28 connection (no server-initiated requests: input-required rounds)."""
    request = ctx.request_context
    return request is not None and request.protocol_version in MODERN_PROTOCOL_VERSIONS


@dataclass(kw_only=True)
class McpSession:
    """One client's session: the run its calls are recorded on, and whom that run belongs to."""

    run_id: str
    principal: str
    lang: str
    steps: int = 0


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """A tool call in progress (it may span several input-required rounds)."""

    id: str
    tool: str
    args: Any
    step: int
    started: float = field(default_factory=time.time)

    @property
    def started_at(self) -> str:
        """The start as the store writes times (ISO-8601 UTC, milliseconds)."""
        return datetime.fromtimestamp(self.started, UTC).isoformat(timespec="milliseconds")


class SessionBook:
    """The sessions this server process serves, and their records. Create and close it inside the event loop."""

    def __init__(self, host: AppHost) -> None:
        self.host = host
        self.store = host.store
        self.runtime = host.runtime
        self.instance = uuid.uuid4().hex[:12]
        self.plans = self.runtime.plans
        self.timers = AskTimers()
        self._sessions: dict[str, McpSession] = {}
        self._logs: dict[str, RunLog] = {}  # run id -> its log

    # ---- sessions ---------------------------------------------------------------------------------------------

    def for_context(self, ctx: Context) -> McpSession:
        """The session of this request, started (a new run on record) on its first tool call."""
        key = _scope_key(ctx, self.instance)
        session = self._sessions.get(key)
        if session is not None:
            return session
        client = _client_name(ctx)
        lang = self.host.settings.lang
        principal = f"mcp:{key}"
        agent = self.host.agent_of(principal)  # over the session's own data: its options are recorded on its run
        self.runtime.attach()
        log = self.runtime.recorder.create(
            agent=agent.name,
            app=agent.app,
            prompt=t("mcp.run.prompt", lang, client=client),
            model=f"{EXTERNAL_MODEL_PREFIX}{client}",
            lang=lang,
            options=agent.options,
            principal=principal,
            held=False,  # the client's model drives it: anyone may write its events
        )
        session = self._sessions[key] = McpSession(run_id=log.run.id, principal=principal, lang=lang)
        self._logs[log.run.id] = log
        self.runtime.leases.hold(log.run.id, on_stop=lambda: self._end(session, RunStatus.cancelled))
        return session

    def session_of_run(self, run_id: str) -> McpSession | None:
        return next((s for s in self._sessions.values() if s.run_id == run_id), None)

    def emit(self, event: Event) -> None:
        """Record an event of a session's run (numbered in its run, told to the process's listeners)."""
        self.runtime.recorder.emit(event)

    # ---- tool calls -------------------------------------------------------------------------------------------

    def begin(self, session: McpSession, tool: str, args: Any) -> ToolCall:
        session.steps += 1
        call = ToolCall(id=f"mcp_{uuid.uuid4().hex[:12]}", tool=tool, args=args, step=session.steps)
        self._logs[session.run_id].call_started(call.id, tool, args)
        return call

    def resumed(self, *, call_id: str, tool: str, args: Any, step: int, started: float) -> ToolCall:
        """A call begun in an earlier input-required round (its id, step and start travel in the sealed request state)."""
        return ToolCall(id=call_id, tool=tool, args=args, step=step, started=started)

    @contextmanager
    def within(self, session: McpSession, call: ToolCall) -> Iterator[ToolCallContext]:
        """Run a tool function inside `call`, as the runtime runs its own (`current_tool_call()`): on the session's
        run, in its trace, with its log — so a run done for the call (an expert consulted) is recorded under the
        session's run, and what is kept per run (a consultation, its budget) counts on it."""
        log = self._logs[session.run_id]
        context = ToolCallContext(
            run_id=session.run_id, tool_call_id=call.id, tool_name=call.tool, trace_id=log.run.trace_id, log=log
        )
        token = CURRENT_TOOL_CALL.set(context)
        try:
            yield context
        finally:
            CURRENT_TOOL_CALL.reset(token)

    def end(self, session: McpSession, call: ToolCall, result: Any) -> Any:
        """Record the call's result; return it."""
        self._logs[session.run_id].call_returned(
            step=call.step,
            tool_call_id=call.id,
            tool_name=call.tool,
            args=call.args,
            result=result,
            started_at=call.started_at,
            duration_ms=(time.time() - call.started) * 1000,
        )
        return result

    # ---- asks -------------------------------------------------------------------------------------------------

    def open_ask(
        self, session: McpSession, *, kind: str, payload: dict[str, Any], tool_call_id: str | None
    ) -> AskRecord:
        """Open an ask on the session's run; it times out after the agent's question timeout (every wait is bounded)."""
        ask = self._logs[session.run_id].open_ask(
            kind=kind, payload=payload, tool_call_id=tool_call_id, timeout_s=self.host.agent.question_timeout
        )
        self.bound(ask)
        return ask

    def bound(self, ask: AskRecord) -> None:
        """Time the open ask out after its timeout (every wait is bounded)."""
        self.timers.start(ask.id, ask.timeout_s or self.host.agent.question_timeout, lambda: self._time_out(ask.id))

    def seconds_left(self, ask_id: str) -> float:
        return self.timers.seconds_left(ask_id)

    def close_unanswered(self, ask: AskRecord, status: AskStatus, *, by: str, outcome: Outcome) -> AskRecord:
        """Close a pending ask without an answer (timed out, nobody can answer, …); the model sees `outcome`.

        A plan ask closed this way decides nothing but "not approved": its outcome is the runtime's own. An ask
        already closed (answered elsewhere meanwhile) stays as it is and is returned."""
        try:
            closed = self.runtime.cancel_ask(
                ask, status=status, answered_by=by, outcome=None if ask.kind == PLAN_ASK else outcome
            )
        except ConflictError:
            closed = self.store.get_ask(ask.id)
        self.forget(ask.id)
        return closed

    def forget(self, ask_id: str) -> None:
        """The ask is closed: stop its timer."""
        self.timers.cancel(ask_id)

    def _time_out(self, ask_id: str) -> None:
        ask = self.store.get_ask(ask_id)
        if ask.status == AskStatus.pending:
            closed = self.close_unanswered(
                ask, AskStatus.timed_out, by="timeout", outcome=lambda kind, payload: kind.timeout_result(payload)
            )
            if closed.kind == PLAN_ASK:
                self.plans.decline(closed)

    # ---- lifetime ---------------------------------------------------------------------------------------------

    def _end(self, session: McpSession, status: RunStatus) -> None:
        """End the session's run: pending asks cancelled, plans not yet applied cancelled; its next call starts a new run."""
        for key, known in list(self._sessions.items()):
            if known is session:
                del self._sessions[key]
        for ask in self.store.list_asks(status=AskStatus.pending, run_id=session.run_id):
            closed = self.close_unanswered(
                ask,
                AskStatus.cancelled,
                by="mcp:session-ended",
                outcome=lambda kind, payload: kind.cancelled_result(payload),
            )
            if closed.kind == PLAN_ASK:
                self.plans.decline(closed)
        self.plans.cancel_open(session.run_id)
        self.runtime.leases.release(session.run_id)
        log = self._logs.pop(session.run_id, None)
        if log is not None:
            log.end(status)

    async def aclose(self) -> None:
        """The server stops: every session's run ends `finished`."""
        for session in list(self._sessions.values()):
            self._end(session, RunStatus.finished)
        self.timers.clear()


def _scope_key(ctx: Context, instance: str) -> str:
    """Which session a request belongs to (see the module docstring)."""
    if not is_modern(ctx):
        return ctx.session_id
    principal = current_principal()
    if principal is not None:
        return "user-" + hashlib.sha256(principal.encode()).hexdigest()[:16]
    return instance


def _client_name(ctx: Context) -> str:
    """The name the client gave (`clientInfo.name`), bounded: it names the run's model on record."""
    params = ctx.session.client_params
    name = params.client_info.name.strip() if params is not None else ""
    return name[:80] or "client"
