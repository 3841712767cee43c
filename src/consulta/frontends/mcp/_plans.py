"""Writes from an MCP client: staged into the session's plan, applied only when the client's user approves.

A write tool's call is validated (the app's PlanExecutor, against the data as it is now) and added to the session's
staging plan; nothing is written. `apply_plan(plan_id)` re-validates the whole plan, opens the runtime's plan ask
(kind `plan`, previews in the session's language) and puts it to the person through elicitation: accepting applies
the plan atomically with its audit entries (`PlanExecutor.apply`); declining rejects it, cancelling or timing out
cancels it — nothing is written then. A client that cannot show a form leaves the plan's ask pending, so the person
can approve it from another front end (`consulta answer ASK approve`) and the client call `apply_plan` again.

Unlike the engine, the server does not check that write arguments are grounded in the user's words: it never sees
them (the client's model talks to the user). The person's approval of the exact previews is the safeguard.
"""

from __future__ import annotations

from typing import Any, assert_never

from fastmcp.server.context import Context

from ...runtime import AskRecord, AskStatus, NotFoundError, PlanRecord, PlanStatus, ToolError, staged_result
from ._asking import Asker, elicitation_supported
from ._forms import plan_form
from ._sessions import McpSession, SessionBook, ToolCall
from ._tools import Served

__all__ = ["PlanDesk"]


class PlanDesk:
    """The plans of the sessions in `book`."""

    def __init__(self, book: SessionBook, asker: Asker) -> None:
        self.book = book
        self.store = book.store
        self.asker = asker
        executor = book.host.agent.executor
        if executor is None:
            raise ValueError(f"App {book.host.agent.app!r} has no plan executor; it cannot take writes.")
        self.executor = executor
        self._applying: set[str] = set()

    # ---- staging ----------------------------------------------------------------------------------------------

    def stage(self, session: McpSession, call: ToolCall, tool_name: str, op: dict[str, Any]) -> dict[str, Any]:
        """Add the write `op` to the session's staging plan after validating the whole plan (ToolError: nothing staged)."""
        plan, previews = self.book.plans.stage(
            run_id=session.run_id,
            app=self.book.host.agent.app,
            executor=self.executor,
            tool_call_id=call.id,
            tool_name=tool_name,
            op=op,
        )
        next_step = "When everything the user asked for is staged, call apply_plan with this plan_id: it asks the user to approve these changes and applies them."
        return {**staged_result(plan, previews, next_step=next_step), "previews": previews}

    # ---- approval and application -----------------------------------------------------------------------------

    async def apply(self, ctx: Context, session: McpSession, call: ToolCall, plan_id: str) -> Served:
        """Ask the person to approve plan `plan_id` and apply it if they do (see the module docstring)."""
        try:
            plan = self.store.get_plan(plan_id)
            self.book.host.run(plan.run_id, principal=session.principal)
        except NotFoundError:
            return {
                "ok": False,
                "error_code": "plan_not_found",
                "message": f"No plan {plan_id!r} in this session.",
                "_hint": "Use the plan_id a write tool returned in this session.",
            }
        if plan.id in self._applying:
            return _closed(plan, "being applied")
        if plan.status == PlanStatus.staging:
            try:
                ask = self._open(session, plan)
            except ToolError as error:
                return error.to_result()
        elif plan.status == PlanStatus.pending and plan.ask_id is not None:
            ask = self.store.get_ask(plan.ask_id)
        else:
            return _closed(plan, plan.status.value)
        if ask.status == AskStatus.pending:
            if not elicitation_supported(ctx):
                return _approval_unavailable(plan, ask)
            form = plan_form([item["preview"] for item in ask.payload["items"]], lang=session.lang)
            put = await self.asker.put(ctx, session, ask, form, call)
            if not isinstance(put, AskRecord):
                return put  # 2026-07-28: the client asks its user and calls again
            ask = put
        return await self._decide(plan.id, ask)

    def _open(self, session: McpSession, plan: PlanRecord) -> AskRecord:
        """Re-validate the plan against the data as it is now and open its approval ask, bounded in time (a plan
        that no longer fits fails, so the next write starts a fresh plan)."""
        run = self.store.get_run(plan.run_id)
        ask = self.book.plans.open(
            plan,
            executor=self.executor,
            lang=session.lang,
            timeout_s=self.book.host.agent.question_timeout,
            trace_id=run.trace_id,
        )
        self.book.bound(ask)
        return ask

    async def _decide(self, plan_id: str, ask: AskRecord) -> dict[str, Any]:
        """The plan's ask is closed: apply the plan if it was approved, else record it rejected or cancelled."""
        plan = self.store.get_plan(plan_id)
        if plan.status != PlanStatus.pending or plan_id in self._applying:
            return _closed(plan, plan.status.value)
        self._applying.add(plan_id)
        try:
            status, result = await self.book.plans.decide(ask, executor=self.executor)
        finally:
            self._applying.discard(plan_id)
        match status:
            case PlanStatus.applied:
                return {
                    "ok": True,
                    "applied": True,
                    "plan_id": plan_id,
                    "audit_ids": (result or {}).get("audit_ids", []),
                    "summaries": (result or {}).get("summaries", []),
                    "message": "The user approved; the changes are written and audited.",
                }
            case PlanStatus.rejected:
                return {
                    "ok": False,
                    "error_code": "plan_rejected",
                    "message": f"The user rejected plan {plan_id}; nothing was written.",
                    "_hint": "Ask the user what to change before staging anything else.",
                }
            case PlanStatus.cancelled:
                return {
                    "ok": False,
                    "error_code": "plan_cancelled",
                    "message": f"Plan {plan_id} was not approved ({ask.status.value}); nothing was written.",
                    "_hint": "Tell the user nothing was changed.",
                }
            case PlanStatus.failed:
                return result or {"ok": False, "error_code": "apply_failed", "message": f"Plan {plan_id} failed."}
            case PlanStatus.staging | PlanStatus.pending:
                return _closed(plan, status.value)
            case _:
                assert_never(status)


def _closed(plan: PlanRecord, state: str) -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "plan_closed",
        "message": f"Plan {plan.id} is {state}; it cannot be approved again.",
        "result": plan.result,
        "_hint": "Stage new writes for any further change.",
    }


def _approval_unavailable(plan: PlanRecord, ask: AskRecord) -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "approval_unavailable",
        "message": f"This client cannot ask its user to approve plan {plan.id}; nothing was written.",
        "ask_id": ask.id,
        "_hint": f"Tell the user to approve it with `consulta answer {ask.id} approve` (or reject it), then call apply_plan again.",
    }
