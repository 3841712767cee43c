"""What each MCP tool does: the app's read tools, its write tools (staged), the seed's `question`, and `apply_plan`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from fastmcp.server.dependencies import get_context
from mcp_types import InputRequiredResult
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from ...asks import QuestionKind
from ...runtime import (
    NotFoundError,
    ToolDef,
    ToolError,
    argument_validator,
    invalid_arguments_result,
    json_schema_for,
    tool_exception_result,
    tool_schemas,
)
from .._host import AppHost
from ._asking import Asker, RoundState, elicitation_supported
from ._forms import question_form
from ._plans import PlanDesk
from ._sessions import McpSession, SessionBook, ToolCall
from ._tools import Served, ServedTool, served_tool

__all__ = ["MCP_INSTRUCTIONS", "McpFrontEnd"]

MCP_INSTRUCTIONS = """
Over MCP: `question` shows the user a form and returns their answers.
"""
PLAN_INSTRUCTIONS = """Write tools ({tools}) return a plan_id; when the user's request is fully staged, call \
apply_plan(plan_id): it shows the user the changes to approve and applies them if they do.
"""


def apply_plan(plan_id: str) -> None:
    """Ask the user to approve a staged plan, and apply it atomically if they do (returns the audit ids).

    Args:
        plan_id: The plan_id a write tool returned in this session.
    """
    raise AssertionError("signature only: the MCP front end serves apply_plan")  # pragma: no cover


class McpFrontEnd:
    """One app's tools served to MCP clients, every call on record in the client's session (see `_sessions`)."""

    def __init__(self, host: AppHost) -> None:
        self.host = host
        self.book = SessionBook(host)
        self.asker = Asker(self.book)
        self.desk = PlanDesk(self.book, self.asker) if host.agent.executor is not None else None
        self._apply_plan = ToolDef(
            name="apply_plan", function=apply_plan, description=(apply_plan.__doc__ or "").split("\n\n")[0]
        )
        self.part = host.app.mcp() if host.app.mcp is not None else None
        """The app's own MCP part (instructions, extra tools), if any."""

    @property
    def instructions(self) -> str:
        """What the client's model is told: the agent's instructions when they are a text (a function of the run
        needs a run: the app's MCP instructions say it then), the app's MCP instructions or else the general words
        for its write tools, then how `question` works here."""
        agent = self.host.agent
        own = agent.instructions if isinstance(agent.instructions, str) else ""
        told = self.part.instructions if self.part is not None else ""
        if told:
            how = told if isinstance(told, str) else told(self.host)
        else:
            writes = [t.name for t in agent.tools if t.kind == "write"]
            how = PLAN_INSTRUCTIONS.format(tools=", ".join(writes)) if writes and self.desk is not None else ""
        return own + how + MCP_INSTRUCTIONS

    def _extra_tools(self) -> list[ToolDef]:
        """The app part's extra tools, served like read tools."""
        if self.part is None or self.part.tools is None:
            return []
        return list(self.part.tools(self.host))

    def tools(self) -> list[ServedTool]:
        """The agent's tools as it sees them (ask tools other than `question` have no MCP form yet), and apply_plan."""
        lang = self.host.settings.lang
        extra = self._extra_tools()
        everything = self.host.agent.tools + tuple(extra)
        described = {
            s["function"]["name"]: s["function"] for s in tool_schemas(replace(self.host.agent, tools=everything))
        }
        served = []
        for tool in everything:
            spec = described[tool.name]
            serve: Callable[[dict[str, Any]], Any]
            if tool.kind == "ask":
                if not isinstance(tool.ask_kind, QuestionKind):
                    continue
                serve = partial(self._question, tool.ask_kind)
            elif tool.kind == "write" and self.desk is None:
                continue
            else:
                serve = partial(self._app_tool, tool, argument_validator(tool))
            served.append(
                served_tool(
                    name=tool.name,
                    description=spec["description"],
                    parameters=spec["parameters"],
                    lang=lang,
                    serve=serve,
                    read_only=tool.kind == "read",
                )
            )
        if self.desk is not None:
            plan = self._apply_plan
            served.append(
                served_tool(
                    name=plan.name,
                    description=plan.description,
                    parameters=json_schema_for(plan),
                    lang=lang,
                    serve=partial(self._apply, argument_validator(plan)),
                )
            )
        return served

    async def aclose(self) -> None:
        await self.book.aclose()
        await self.host.aclose()

    # ---- the tools --------------------------------------------------------------------------------------------

    async def _app_tool(
        self, tool: ToolDef, check: Callable[[dict[str, Any]], dict[str, Any]], arguments: dict[str, Any]
    ) -> Served:
        """A read tool's result, or a write tool's operation staged into the session's plan."""
        session = self.book.for_context(get_context())
        call = self.book.begin(session, tool.name, arguments)
        try:
            args = check(arguments)
        except ValidationError as error:
            return self.book.end(session, call, invalid_arguments_result(tool.name, error))
        try:
            with self.book.within(session, call):
                value = to_jsonable_python(await self._own(session, tool).call(**args), fallback=str)
            result = value if tool.kind != "write" else self._stage(session, call, tool.name, value)
        except ToolError as error:
            result = error.to_result()
        except Exception as error:  # a tool's bug must not end the session
            result = tool_exception_result(tool.name, error)
        return self.book.end(session, call, result)

    def _own(self, session: McpSession, tool: ToolDef) -> ToolDef:
        """`tool` as it acts for the session: the same tool of the session's own agent or app part (over its own
        data, see `AppHost.for_principal`); the served one when the session has no data of its own."""
        view = self.host.for_principal(session.principal)
        if view.env.session is None:
            return tool
        extra = self.part.tools(view) if self.part is not None and self.part.tools is not None else ()
        return next((t for t in (*view.agent.tools, *extra) if t.name == tool.name), tool)

    def _stage(self, session: McpSession, call: ToolCall, tool_name: str, op: dict[str, Any]) -> dict[str, Any]:
        assert self.desk is not None
        return self.desk.stage(session, call, tool_name, op)

    def _call(self, session: McpSession, state: RoundState | None, tool: str, arguments: dict[str, Any]) -> ToolCall:
        """The tool call on record: a new one, or the one a later 2026-07-28 round continues."""
        if state is None:
            return self.book.begin(session, tool, arguments)
        return self.book.resumed(call_id=state.call, tool=tool, args=arguments, step=state.step, started=state.started)

    async def _question(self, kind: QuestionKind, arguments: dict[str, Any]) -> Served:
        """The seed's question, put to the client's user as a form; the seed's results (answered, cancelled, timed
        out, unavailable) through the question ask kind."""
        ctx = get_context()
        session = self.book.for_context(ctx)
        state = RoundState.parse(ctx)
        call = self._call(session, state, "question", arguments)
        if state is None:
            try:
                payload = kind.prepare(arguments)  # the seed's validation and error codes
            except ToolError as error:
                return self.book.end(session, call, error.to_result())
            ask = self.book.open_ask(session, kind=kind.name, payload=payload, tool_call_id=call.id)
            if not elicitation_supported(ctx):
                return self.book.end(session, call, self.asker.unavailable(session, ask).outcome)
        else:  # a later 2026-07-28 round of the same call
            try:
                ask = self.host.ask(state.ask, principal=session.principal)
            except NotFoundError as error:
                return {"ok": False, "error_code": "not_found", "message": str(error)}
        put = await self.asker.put(
            ctx, session, ask, question_form(kind.questions(ask.payload), lang=session.lang), call
        )
        if isinstance(put, InputRequiredResult):
            return put
        return self.book.end(session, call, put.outcome)

    async def _apply(self, check: Callable[[dict[str, Any]], dict[str, Any]], arguments: dict[str, Any]) -> Served:
        assert self.desk is not None
        ctx = get_context()
        session = self.book.for_context(ctx)
        state = RoundState.parse(ctx)
        call = self._call(session, state, "apply_plan", arguments)
        try:
            args = check(arguments)
        except ValidationError as error:
            return self.book.end(session, call, invalid_arguments_result("apply_plan", error))
        result = await self.desk.apply(ctx, session, call, args["plan_id"])
        if isinstance(result, InputRequiredResult):
            return result
        return self.book.end(session, call, result)
