"""An approved plan whose apply a crash interrupted: the runtime asks the executor to reconcile before it applies,
records the plan applied when its change is already in the data (never applying it twice), and tells a run whose
plan was decided just before the crash what the decision was (never running the model again)."""

from __future__ import annotations

import pytest

from consulta.runtime import AskStatus, PlanStatus, RunStatus

from ._support import FakeExecutor, RecordingModel, settle
from .test_plan_runs import only_plan_ask, plan_agent, staged_run

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]

DONE = "Done: preview of rename alpha; preview of rename beta."


async def test_a_plan_reconcile_finds_applied_is_recorded_applied_and_not_applied_again(store, make_runtime):
    finished = {"audit_ids": ["a_000007", "a_000008"], "summaries": ["alpha", "beta"]}
    executor = FakeExecutor(reconciled=finished)
    rt, _, run = await staged_run(store, make_runtime, executor)
    plan_ask = only_plan_ask(store, run.id)
    rt.answer(plan_ask.id, "approve")
    run = await settle(rt, run.id)
    [plan] = store.list_plans(run_id=run.id)
    assert (plan.status, plan.result) == (PlanStatus.applied, finished)
    assert executor.reconcile_calls == [plan.id] and executor.apply_calls == []
    assert (run.status, run.output) == (RunStatus.finished, DONE)


async def test_a_plan_reconcile_finds_untouched_is_applied_once(store, make_runtime):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, "approve")
    run = await settle(rt, run.id)
    [plan] = store.list_plans(run_id=run.id)
    assert executor.reconcile_calls == [plan.id] and len(executor.apply_calls) == 1
    assert (plan.status, run.status, run.output) == (PlanStatus.applied, RunStatus.finished, DONE)


async def test_a_rejected_plan_is_not_reconciled(store, make_runtime):
    executor = FakeExecutor(reconciled={"audit_ids": ["a_000001"]})
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, "reject")
    run = await settle(rt, run.id)
    assert executor.reconcile_calls == [] and store.list_plans(run_id=run.id)[0].status == PlanStatus.rejected


@pytest.mark.parametrize("decided", [PlanStatus.applied, PlanStatus.failed])
async def test_a_run_whose_plan_was_decided_before_a_crash_is_told_the_decision(store, make_runtime, decided):
    executor = FakeExecutor()
    first, _, run = await staged_run(store, make_runtime, executor)
    plan_ask = only_plan_ask(store, run.id)
    await first.aclose()
    # The process that took the approval up died just after recording the plan's decision, before ending the run.
    store.close_ask(plan_ask.id, AskStatus.answered, answer="approve", outcome={"approve": True}, answered_by="user")
    [plan] = store.list_plans(run_id=run.id)
    result = (
        {"audit_ids": ["a_000001"]}
        if decided == PlanStatus.applied
        else {"ok": False, "error_code": "conflict", "message": "It changed"}
    )
    store.update_plan(plan.id, status=decided, result=result)

    model = RecordingModel([])  # nothing is left to ask the model
    second = make_runtime(model)
    await second.resume(run.id, plan_agent(executor))
    run = await settle(second, run.id)
    assert executor.apply_calls == [] and executor.reconcile_calls == []
    assert store.list_plans(run_id=run.id)[0].status == decided
    if decided == PlanStatus.applied:
        assert (run.status, run.output) == (RunStatus.finished, DONE)
    else:
        assert run.status == RunStatus.failed and run.output == "Not applied: It changed. Nothing was changed."
        assert run.error == f"Plan {plan.id} was not applied: It changed"
    assert model.requests == []
