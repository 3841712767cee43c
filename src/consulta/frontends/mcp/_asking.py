"""Putting one pending ask to the MCP client's user through elicitation, in either protocol era.

- Handshake-era connections: the tool awaits `elicitation/create` on the session's back-channel (bounded by the
  ask's timeout).
- 2026-07-28 connections have no back-channel: the tool returns an `InputRequiredResult` carrying the form, and
  the client calls the tool again with the person's reply in `input_responses`. Nothing waits in between but the
  ask's row (and its timeout timer); which ask and which call a reply belongs to travels in the request state,
  which FastMCP seals, so a client cannot point a reply at another ask.

A reply closes the ask through the runtime's ask API (`Runtime.answer` validates it with the ask's kind;
`Runtime.cancel_ask`). A reply that does not fit changes nothing and the person is asked again, saying why, at most
`MAX_ATTEMPTS` times in all.
"""

from __future__ import annotations

from typing import Any, assert_never

import anyio
from fastmcp.server.context import Context
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel, ValidationError

from ...runtime import AskRecord, AskStatus, ConflictError, InvalidAnswerError
from ._forms import Form
from ._sessions import McpSession, SessionBook, ToolCall, is_modern

__all__ = ["MAX_ATTEMPTS", "Asker", "RoundState", "elicitation_supported"]

MAX_ATTEMPTS = 3
REPLY_KEY = "reply"
"""The key of the one input request a round carries."""


class RoundState(BaseModel):
    """What a 2026-07-28 round hands to the next one (sealed by FastMCP on the wire)."""

    ask: str
    call: str
    step: int
    started: float
    attempt: int

    @classmethod
    def parse(cls, ctx: Context) -> RoundState | None:
        raw = ctx.request_state
        if raw is None:
            return None
        try:
            return cls.model_validate_json(raw)
        except ValidationError:
            return None  # not a state this server minted: start over


def elicitation_supported(ctx: Context) -> bool:
    """Whether the client said it can show its user a form."""
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def invalid_answer_result(problem: str) -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "invalid_answer",
        "message": f"The client's replies did not fit the question {MAX_ATTEMPTS} times; the last: {problem}",
        "_hint": "Do not ask the same way again: answer from the data, or ask one simpler question.",
    }


class Asker:
    """Drives asks through elicitation for the sessions in `book`."""

    def __init__(self, book: SessionBook) -> None:
        self.book = book
        self.runtime = book.host.runtime

    async def put(
        self, ctx: Context, session: McpSession, ask: AskRecord, form: Form, call: ToolCall
    ) -> AskRecord | InputRequiredResult:
        """Put the pending `ask` to the person: the closed ask, or (2026-07-28) the input request to return first."""
        if is_modern(ctx):
            return self.round(session, ask, form, call, state=RoundState.parse(ctx), replies=ctx.input_responses)
        return await self._push(ctx, session, ask, form)

    def round(
        self, session: McpSession, ask: AskRecord, form: Form, call: ToolCall, *, state: RoundState | None, replies: Any
    ) -> AskRecord | InputRequiredResult:
        """One 2026-07-28 round: settle the reply this round carries, or ask (again)."""
        ask = self.book.store.get_ask(ask.id)
        if ask.status != AskStatus.pending:  # closed meanwhile: timed out, or answered from another front end
            self.book.forget(ask.id)
            return ask
        attempt = state.attempt if state is not None and state.ask == ask.id else 0
        reply = (replies or {}).get(REPLY_KEY) if attempt else None
        problem = None
        if isinstance(reply, ElicitResult):
            settled = self.settle(session, ask, form, reply)
            if isinstance(settled, AskRecord):
                return settled
            problem = settled
            if attempt >= MAX_ATTEMPTS:
                return self.give_up(session, ask, problem)
        request = ElicitRequest(
            params=ElicitRequestFormParams(message=form.message_after(problem), requested_schema=form.schema)
        )
        state = RoundState(ask=ask.id, call=call.id, step=call.step, started=call.started, attempt=attempt + 1)
        return InputRequiredResult(input_requests={REPLY_KEY: request}, request_state=state.model_dump_json())

    async def _push(self, ctx: Context, session: McpSession, ask: AskRecord, form: Form) -> AskRecord:
        """Handshake era: send `elicitation/create` and wait for the reply, at most until the ask times out."""
        problem: str | None = None
        for _ in range(MAX_ATTEMPTS):
            reply: ElicitResult | None = None
            with anyio.move_on_after(self.book.seconds_left(ask.id)):
                try:
                    reply = await ctx.session.elicit_form(
                        form.message_after(problem), form.schema, related_request_id=ctx.request_id
                    )
                except MCPError:  # the client could not show the form
                    return self.book.close_unanswered(
                        ask,
                        AskStatus.declined,
                        by=session.principal,
                        outcome=lambda kind, payload: kind.unavailable_result(payload),
                    )
            if reply is None:
                return self.book.close_unanswered(
                    ask, AskStatus.timed_out, by="timeout", outcome=lambda kind, payload: kind.timeout_result(payload)
                )
            settled = self.settle(session, ask, form, reply)
            if isinstance(settled, AskRecord):
                return settled
            problem = settled
        assert problem is not None
        return self.give_up(session, ask, problem)

    def settle(self, session: McpSession, ask: AskRecord, form: Form, reply: ElicitResult) -> AskRecord | str:
        """Close the ask with the person's reply; a reply that does not fit changes nothing and its problem is returned."""
        by = session.principal
        try:
            match reply.action:
                case "accept":
                    closed = self.runtime.answer(ask.id, form.answer(reply.content), answered_by=by)
                case "decline" if form.decline_answer is not None:
                    closed = self.runtime.answer(ask.id, form.decline_answer, answered_by=by)
                case "decline":
                    closed = self.runtime.cancel_ask(ask.id, status=AskStatus.declined, answered_by=by)
                case "cancel":
                    closed = self.runtime.cancel_ask(ask.id, status=AskStatus.cancelled, answered_by=by)
                case _ as unreachable:
                    assert_never(unreachable)
        except InvalidAnswerError as error:
            return str(error)
        except ConflictError:
            closed = self.book.store.get_ask(ask.id)
        self.book.forget(ask.id)
        return closed

    def give_up(self, session: McpSession, ask: AskRecord, problem: str) -> AskRecord:
        """The client's replies kept not fitting: the ask closes `declined` and the model is told why."""
        return self.book.close_unanswered(
            ask, AskStatus.declined, by=session.principal, outcome=lambda kind, payload: invalid_answer_result(problem)
        )

    def unavailable(self, session: McpSession, ask: AskRecord) -> AskRecord:
        """The client cannot show its user a form: the ask closes `declined` with the kind's `question_unavailable`."""
        return self.book.close_unanswered(
            ask,
            AskStatus.declined,
            by=session.principal,
            outcome=lambda kind, payload: kind.unavailable_result(payload),
        )
