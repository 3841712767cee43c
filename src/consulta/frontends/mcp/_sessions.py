"""Every MCP client's session on record: one run per session, its tool calls, events, asks and bounded waits.

An MCP client brings its own model, so a session's run never reaches Consulta's engine: this module writes the
run's records directly (the same tables, events and ask API the runtime uses), so `consulta runs`, `consulta asks`
and the other front ends see what an MCP client did.

Which requests make one session:
- handshake-era connections (protocol <= 2025-11-25): the MCP session (`ctx.session_id`);
- 2026-07-28 connections have no session: the authenticated user if there is one, else the server process (stdio
  and in-memory serve one client per process; anonymous HTTP requests cannot be told apart, so they share one).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastmcp.server.context import Context
from fastmcp.server.sessions import current_principal
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ...i18n import t
from ...runtime import (
    PLAN_ASK,
    AskClosed,
    AskKind,
    AskOpened,
    AskRecord,
    AskStatus,
    EXTERNAL_MODEL_PREFIX,
    ConflictError,
    Event,
    PlanBook,
    RunEnded,
    RunStarted,
    RunStatus,
    ToolCalled,
    ToolReturned,
)
from .._host import AppHost

__all__ = ["McpSession", "SessionBook", "ToolCall", "is_modern"]

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5.0
"""How often this process marks its sessions' runs alive (other processes then leave them alone)."""


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
        self.instance = uuid.uuid4().hex[:12]
        self._sessions: dict[str, McpSession] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._deadlines: dict[str, float] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self.plans = PlanBook(self.store, self.emit)

    # ---- sessions ---------------------------------------------------------------------------------------------

    def for_context(self, ctx: Context) -> McpSession:
        """The session of this request, started (a new run on record) on its first tool call."""
        key = _scope_key(ctx, self.instance)
        session = self._sessions.get(key)
        if session is not None:
            return session
        client = _client_name(ctx)
        lang = self.host.settings.lang
        agent = self.host.agent
        run = self.store.create_run(
            app=agent.app,
            prompt=t("mcp.run.prompt", lang, client=client),
            model=f"{EXTERNAL_MODEL_PREFIX}{client}",
            lang=lang,
            options=agent.options,
            principal=f"mcp:{key}",
        )
        session = self._sessions[key] = McpSession(run_id=run.id, principal=f"mcp:{key}", lang=lang)
        self.emit(RunStarted(run_id=run.id, app=agent.app, prompt=run.prompt))
        self._ensure_heartbeat()
        return session

    def session_of_run(self, run_id: str) -> McpSession | None:
        return next((s for s in self._sessions.values() if s.run_id == run_id), None)

    def emit(self, event: Event) -> None:
        """Record an event of a session's run (in order, like the runtime's)."""
        self.store.append_event(event.run_id, event.type, event.model_dump(mode="json", exclude={"run_id", "type"}))

    # ---- tool calls -------------------------------------------------------------------------------------------

    def begin(self, session: McpSession, tool: str, args: Any) -> ToolCall:
        session.steps += 1
        call = ToolCall(id=f"mcp_{uuid.uuid4().hex[:12]}", tool=tool, args=args, step=session.steps)
        self.emit(ToolCalled(run_id=session.run_id, tool_call_id=call.id, tool_name=tool, args=args))
        return call

    def resumed(self, *, call_id: str, tool: str, args: Any, step: int, started: float) -> ToolCall:
        """A call begun in an earlier input-required round (its id, step and start travel in the sealed request state)."""
        return ToolCall(id=call_id, tool=tool, args=args, step=step, started=started)

    def end(self, session: McpSession, call: ToolCall, result: Any) -> Any:
        """Record the call's result; return it."""
        duration_ms = (time.time() - call.started) * 1000
        self.store.record_tool_call(
            run_id=session.run_id,
            step=call.step,
            tool_call_id=call.id,
            tool_name=call.tool,
            args=call.args,
            result=result,
            started_at=call.started_at,
            duration_ms=duration_ms,
        )
        ok = not (isinstance(result, dict) and result.get("ok") is False)
        self.emit(ToolReturned(run_id=session.run_id, tool_call_id=call.id, tool_name=call.tool, ok=ok, result=result, duration_ms=duration_ms))
        return result

    # ---- asks -------------------------------------------------------------------------------------------------

    def open_ask(self, session: McpSession, *, kind: str, payload: dict[str, Any], tool_call_id: str | None) -> AskRecord:
        """Open an ask on the session's run; it times out after the agent's question timeout (every wait is bounded)."""
        run = self.store.get_run(session.run_id)
        timeout = self.host.agent.question_timeout
        ask = self.store.create_ask(
            run_id=session.run_id, kind=kind, payload=payload, tool_call_id=tool_call_id, timeout_s=timeout, trace_id=run.trace_id
        )
        self.emit(AskOpened(run_id=session.run_id, ask_id=ask.id, kind=kind, payload=payload))
        self.bound(ask)
        return ask

    def bound(self, ask: AskRecord) -> None:
        """Time the open ask out after its timeout (every wait is bounded)."""
        timeout = ask.timeout_s or self.host.agent.question_timeout
        loop = asyncio.get_running_loop()
        self._deadlines[ask.id] = loop.time() + timeout
        self._timers[ask.id] = loop.call_later(timeout, self._time_out, ask.id)

    def seconds_left(self, ask_id: str) -> float:
        deadline = self._deadlines.get(ask_id)
        return 0.0 if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())

    def close_unanswered(
        self, ask: AskRecord, status: AskStatus, *, by: str, outcome: Callable[[AskKind, dict[str, Any]], Any]
    ) -> AskRecord:
        """Close a pending ask without an answer (timed out, nobody can answer, …); the model sees `outcome`.

        A plan ask closed this way decides nothing but "not approved": its outcome is the runtime's own. An ask
        already closed (answered elsewhere meanwhile) stays as it is and is returned."""
        try:
            if ask.kind == PLAN_ASK:
                closed = self.host.runtime.cancel_ask(ask.id, status=status, answered_by=by)
            else:
                kind = self.host.agent.ask_kind(ask.kind)
                closed = self.store.close_ask(ask.id, status, outcome=outcome(kind, ask.payload), answered_by=by)
                self.emit(AskClosed(run_id=closed.run_id, ask_id=closed.id, kind=closed.kind, status=closed.status.value, answered_by=by))
        except ConflictError:
            closed = self.store.get_ask(ask.id)
        self.forget(ask.id)
        return closed

    def forget(self, ask_id: str) -> None:
        """The ask is closed: stop its timer."""
        timer = self._timers.pop(ask_id, None)
        if timer is not None:
            timer.cancel()
        self._deadlines.pop(ask_id, None)

    def _time_out(self, ask_id: str) -> None:
        self._timers.pop(ask_id, None)
        ask = self.store.get_ask(ask_id)
        if ask.status == AskStatus.pending:
            closed = self.close_unanswered(ask, AskStatus.timed_out, by="timeout", outcome=lambda kind, payload: kind.timeout_result(payload))
            if closed.kind == PLAN_ASK:
                self.plans.decline(closed)

    # ---- lifetime ---------------------------------------------------------------------------------------------

    def _ensure_heartbeat(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        """Keep this process's runs alive on record (so `consulta answer` elsewhere does not take them over), and
        honour `consulta stop` of a session's run."""
        while self._sessions:
            try:
                self.store.heartbeat()
                for run_id in self.store.cancel_requested():
                    session = self.session_of_run(run_id)
                    if session is not None:
                        self._end(session, RunStatus.cancelled)
            except Exception:  # a busy or broken store: say so and try again at the next beat
                logger.exception("Recording the MCP sessions' heartbeat failed")
            await asyncio.sleep(HEARTBEAT_SECONDS)

    def _end(self, session: McpSession, status: RunStatus) -> None:
        """End the session's run: pending asks cancelled, plans not yet applied cancelled; its next call starts a new run."""
        for key, known in list(self._sessions.items()):
            if known is session:
                del self._sessions[key]
        for ask in self.store.list_asks(status=AskStatus.pending, run_id=session.run_id):
            closed = self.close_unanswered(ask, AskStatus.cancelled, by="mcp:session-ended", outcome=lambda kind, payload: kind.cancelled_result(payload))
            if closed.kind == PLAN_ASK:
                self.plans.decline(closed)
        self.plans.cancel_open(session.run_id)
        self.store.set_run_status(session.run_id, status)
        self.emit(RunEnded(run_id=session.run_id, status=status.value))

    async def aclose(self) -> None:
        """The server stops: every session's run ends `finished`."""
        for session in list(self._sessions.values()):
            self._end(session, RunStatus.finished)
        for ask_id in list(self._timers):
            self.forget(ask_id)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat


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
