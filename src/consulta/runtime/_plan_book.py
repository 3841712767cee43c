"""The life of a plan on record — staged, opened for approval, decided — in one place, for whoever drives the run:
the runtime (Consulta's engine runs the model) and front ends whose model lives elsewhere (an MCP client's).

Every method writes the store and reports what happened through `emit` (the caller's event path); none waits on
a person: approval is an Ask like any other, answered through the runtime's ask API.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, assert_never

from ..i18n import t
from ._claims import TurnFacts, compose_reply
from ._crash_points import crash_point
from ._errors import ToolError
from ._events import AskOpened, Event, PlanDecided, PlanStaged
from ._plans import PlanExecutor
from ._records import AskRecord, AskStatus, PlanRecord, PlanStatus
from ._store import Store

__all__ = ["PLAN_ASK", "PlanBook", "PlanOutcome", "decided_reply", "staged_result"]

PLAN_ASK = "plan"
"""The ask kind of a plan waiting for approval."""

PlanOutcome = tuple[PlanStatus, dict[str, Any] | None]
"""How a decided plan ended, and its result (audit ids and summaries, or the failure)."""


def staged_result(plan: PlanRecord, previews: list[str], *, next_step: str) -> dict[str, Any]:
    """What a write tool returns to the model once its operation is staged: the plan, the operation's preview,
    and what to do next (which depends on who drives the run)."""
    return {
        "ok": True,
        "staged": True,
        "plan_id": plan.id,
        "item": len(previews),
        "preview": previews[-1],
        "message": f"Staged; nothing is written until the user approves the plan. {next_step}",
    }


def decided_reply(outcome: PlanOutcome, *, previews: Sequence[str], lang: str) -> str:
    """What a decided plan did, said by code in `lang`: the run's reply once its plan is decided (never the reply
    written while it waited). Applied: done, with `previews` (its items); else not applied, and why."""
    status, result = outcome
    match status:
        case PlanStatus.applied:
            return compose_reply(TurnFacts(lang=lang, applied=tuple(previews)))
        case PlanStatus.rejected:
            return t("claims.plan_rejected", lang)
        case PlanStatus.failed:
            reason = str((result or {}).get("message") or (result or {}).get("error_code") or "").rstrip(".。 ")
            return t("claims.plan_failed", lang, reason=reason)
        case PlanStatus.cancelled:
            match (result or {}).get("reason"):
                case AskStatus.timed_out.value:
                    return t("claims.plan_timed_out", lang)
                case AskStatus.declined.value:
                    return t("claims.plan_declined", lang)
                case _:
                    return t("claims.plan_cancelled", lang)
        case PlanStatus.staging | PlanStatus.pending:
            raise ValueError(f"A plan still {status.value} has no outcome to tell: decide it first (PlanBook.decide).")
        case _:
            assert_never(status)


class PlanBook:
    """Stage, open and decide the plans of runs in `store`, telling `emit` each step."""

    def __init__(self, store: Store, emit: Callable[[Event], None]) -> None:
        self.store = store
        self.emit = emit

    def stage(
        self, *, run_id: str, app: str, executor: PlanExecutor, tool_call_id: str, tool_name: str, op: dict[str, Any]
    ) -> tuple[PlanRecord, list[str]]:
        """Add write `op` to the run's staging plan, after validating the whole plan against the data as it is
        (ToolError: nothing is staged). Returns the plan and one English preview per item (the last is `op`'s)."""
        staged = next((p for p in self.store.list_plans(run_id=run_id) if p.status == PlanStatus.staging), None)
        # Keyed by tool call id, so a call run again after a restart replaces its item instead of adding one.
        items = [i for i in (staged.items if staged else []) if i["tool_call_id"] != tool_call_id]
        items.append({"tool_call_id": tool_call_id, "tool": tool_name, "op": op})
        previews = executor.validate([i["op"] for i in items])
        for item, preview in zip(items, previews, strict=True):
            item["preview"] = preview
        plan = staged or self.store.get_or_create_staging_plan(run_id=run_id, app=app)
        self.store.update_plan(plan.id, items=items)
        return self.store.get_plan(plan.id), previews

    def open(
        self, plan: PlanRecord, *, executor: PlanExecutor, lang: str, timeout_s: float | None, trace_id: str | None
    ) -> AskRecord:
        """Re-validate the staged plan against the data as it is now, with previews in the person's language, and
        open its approval ask. A plan the data no longer fits is marked failed and its ToolError raised."""
        try:
            previews = executor.validate([i["op"] for i in plan.items], lang=lang)
        except ToolError as error:
            self._record(plan, PlanStatus.failed, error.to_result())
            raise
        items = [{"tool": i["tool"], "op": i["op"], "preview": p} for i, p in zip(plan.items, previews, strict=True)]
        payload = {"plan_id": plan.id, "items": items}
        ask = self.store.create_ask(
            run_id=plan.run_id, kind=PLAN_ASK, payload=payload, timeout_s=timeout_s, trace_id=trace_id
        )
        self.store.update_plan(plan.id, status=PlanStatus.pending, ask_id=ask.id)
        self.emit(PlanStaged(run_id=plan.run_id, plan_id=plan.id, items=items))
        self.emit(AskOpened(run_id=plan.run_id, ask_id=ask.id, kind=PLAN_ASK, payload=payload))
        return ask

    def previews(self, ask: AskRecord, *, executor: PlanExecutor, lang: str) -> list[str]:
        """The items of the plan `ask` asks approval for, previewed in `lang` against the data as it is (call it
        before the plan is applied); as the ask shows them when the data no longer fits."""
        items = ask.payload["items"]
        try:
            return executor.validate([i["op"] for i in items], lang=lang)
        except ToolError:
            return [str(i.get("preview") or i.get("tool") or "") for i in items]

    async def decide(self, ask: AskRecord, *, executor: PlanExecutor) -> PlanOutcome:
        """The plan's ask is closed: apply the plan atomically if it was approved (off the event loop), else record
        it rejected (the person said no) or cancelled (cancelled, timed out, stopped). A plan already decided is
        left as it is.

        An approved plan is first reconciled (`PlanExecutor.reconcile`): when a crash interrupted an earlier apply
        of it after its change reached the data, it is recorded applied from what the executor finished, and not
        applied again."""
        plan = self.store.get_plan(ask.payload["plan_id"])
        if plan.status != PlanStatus.pending:
            return plan.status, plan.result
        if ask.status != AskStatus.answered or not (ask.outcome or {}).get("approve"):
            return self.decline(ask)
        ops = [i["op"] for i in plan.items]
        try:
            result = await asyncio.to_thread(executor.reconcile, plan.id)
            if result is None:
                result = await asyncio.to_thread(
                    executor.apply, ops, plan_id=plan.id, run_id=plan.run_id, actor=ask.answered_by or "user"
                )
        except ToolError as error:
            return self._record(plan, PlanStatus.failed, error.to_result())
        except Exception as error:  # a bug or an I/O failure in the app: the plan fails, nothing was written
            return self._record(
                plan,
                PlanStatus.failed,
                {"ok": False, "error_code": "apply_failed", "message": f"{type(error).__name__}: {error}"},
            )
        outcome = self._record(plan, PlanStatus.applied, result)
        crash_point("after_plan_status")
        return outcome

    def decline(self, ask: AskRecord) -> PlanOutcome:
        """The plan's ask closed without approval: record the plan rejected (the person said no) or cancelled
        (cancelled, timed out, stopped). Nothing is written. A plan already decided is left as it is."""
        plan = self.store.get_plan(ask.payload["plan_id"])
        if plan.status != PlanStatus.pending:
            return plan.status, plan.result
        status = PlanStatus.rejected if ask.status == AskStatus.answered else PlanStatus.cancelled
        return self._record(plan, status, {"applied": False, "reason": ask.status.value})

    def cancel_open(self, run_id: str) -> None:
        """The run ends: its plans not yet decided are cancelled (nothing of them is written)."""
        for plan in self.store.list_plans(run_id=run_id):
            if plan.status in (PlanStatus.staging, PlanStatus.pending):
                self.store.update_plan(plan.id, status=PlanStatus.cancelled)
                self.emit(PlanDecided(run_id=run_id, plan_id=plan.id, status=PlanStatus.cancelled.value))

    def _record(self, plan: PlanRecord, status: PlanStatus, result: dict[str, Any] | None) -> PlanOutcome:
        self.store.update_plan(plan.id, status=status, result=result)
        decided = {"result": result} if status in (PlanStatus.applied, PlanStatus.failed) else {}
        self.emit(PlanDecided(run_id=plan.run_id, plan_id=plan.id, status=status.value, **decided))
        return status, result
