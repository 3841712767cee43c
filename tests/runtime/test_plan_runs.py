"""Write tools through full runs: staged (not executed), a plan ask at the end, applied only when approved."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from consulta.asks import question_tool
from consulta.runtime import (
    PLAN_ASK,
    Agent,
    AskStatus,
    InvalidAnswerError,
    PlanStatus,
    RunStatus,
    ToolError,
    write_tool,
)

from ._support import (
    CELL_LINE_Q,
    FakeExecutor,
    RecordingModel,
    ask,
    call,
    calls,
    lookup,
    run_to_settle,
    say,
    seen_by_model,
    settle,
    ungrounded,
)

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]


built: list[str] = []


@write_tool
def rename(name: str) -> dict:
    """Rename the thing."""
    built.append(name)
    return {"op": "rename", "name": name}


@pytest.fixture(autouse=True)
def _reset_built():
    built.clear()


def plan_agent(executor: FakeExecutor, **kw) -> Agent:
    return Agent(app="toy", instructions="x", tools=(lookup, rename, question_tool()), executor=executor, **kw)


STAGE_TWO = [
    calls(call("rename", {"name": "alpha"}, id="w1")),
    calls(call("rename", {"name": "beta"}, id="w2")),
    say("Staged two renames."),
]


def only_plan_ask(store, run_id):
    asks = [a for a in store.list_asks(status=None, run_id=run_id) if a.kind == PLAN_ASK]
    assert len(asks) == 1, asks
    return asks[0]


async def staged_run(store, make_runtime, executor, steps=STAGE_TWO, **kw):
    model = RecordingModel(steps)
    rt = make_runtime(model, **kw)
    run = await run_to_settle(rt, plan_agent(executor))
    return rt, model, run


# ---- staging ---------------------------------------------------------------------------------------------------


async def test_write_calls_are_staged_and_a_plan_ask_opens_at_the_end(store, make_runtime):
    executor = FakeExecutor()
    rt, model, run = await staged_run(store, make_runtime, executor)
    assert (run.status, run.output) == (RunStatus.waiting, "Staged two renames.")
    assert executor.apply_calls == []
    assert built == ["alpha", "beta"]  # the tool built its operation; nothing was written

    first, second = seen_by_model(model, "rename")
    [plan] = store.list_plans(run_id=run.id)
    assert first["ok"] is True and first["staged"] is True
    assert (first["plan_id"], first["item"], first["preview"]) == (plan.id, 1, "preview of rename alpha")
    assert (second["item"], second["preview"]) == (2, "preview of rename beta")
    both = [{"op": "rename", "name": "alpha"}, {"op": "rename", "name": "beta"}]
    # each staging validates the plan so far; opening it for approval validates it once more, against the data then
    assert executor.validate_calls == [[{"op": "rename", "name": "alpha"}], both, both]
    assert [g[0:2] for g in executor.grounding_calls] == [
        ("rename", {"op": "rename", "name": "alpha"}),
        ("rename", {"op": "rename", "name": "beta"}),
    ]

    assert plan.status == PlanStatus.pending
    assert [(i["tool_call_id"], i["tool"], i["op"]) for i in plan.items] == [
        ("w1", "rename", {"op": "rename", "name": "alpha"}),
        ("w2", "rename", {"op": "rename", "name": "beta"}),
    ]
    plan_ask = only_plan_ask(store, run.id)
    assert plan.ask_id == plan_ask.id
    assert plan_ask.status == AskStatus.pending
    assert plan_ask.payload == {
        "plan_id": plan.id,
        "items": [
            {"tool": "rename", "op": {"op": "rename", "name": "alpha"}, "preview": "preview of rename alpha"},
            {"tool": "rename", "op": {"op": "rename", "name": "beta"}, "preview": "preview of rename beta"},
        ],
    }
    assert [r.ok for r in store.list_tool_calls(run.id)] == [True, True]
    types = [e.type for e in store.list_events(run.id)]
    assert types[-3:] == ["model_text", "plan_staged", "ask_opened"]


async def test_grounding_sees_the_prompt_and_what_was_read(store, make_runtime):
    executor = FakeExecutor()
    steps = [
        calls(call("lookup", {"name": "K562"}, id="r1")),
        calls(call("rename", {"name": "K562-b"}, id="w1")),
        say("ok"),
    ]
    model = RecordingModel(steps)
    rt = make_runtime(model)
    await run_to_settle(rt, plan_agent(executor), "rename box 12")
    [(_, _, evidence)] = executor.grounding_calls
    assert evidence.said_by_user(12)
    assert evidence.seen_in_data("K562-b")
    assert not evidence.said_by_user("K562-b")


async def test_grounding_counts_a_question_answer(store, make_runtime):
    executor = FakeExecutor()
    steps = [ask(CELL_LINE_Q), calls(call("rename", {"name": "K562-dTAG"}, id="w1")), say("ok")]
    model = RecordingModel(steps)
    rt = make_runtime(model)
    run = await run_to_settle(rt, plan_agent(executor))
    rt.answer(store.list_asks(run_id=run.id)[0].id, ["K562-dTAG"])
    await settle(rt, run.id)
    [(_, _, evidence)] = executor.grounding_calls
    assert evidence.answered("K562-dTAG")
    assert evidence.answers == ("K562-dTAG",)


# ---- approval --------------------------------------------------------------------------------------------------


async def test_approve_applies_the_plan_once(store, make_runtime):
    executor = FakeExecutor()
    rt, model, run = await staged_run(store, make_runtime, executor)
    plan_ask = only_plan_ask(store, run.id)
    closed = rt.answer(plan_ask.id, "approve", answered_by="alice")
    assert (closed.status, closed.answer, closed.outcome) == (AskStatus.answered, True, {"approve": True})
    run = await settle(rt, run.id)
    assert (run.status, run.output) == (RunStatus.finished, "Done: preview of rename alpha; preview of rename beta.")
    [plan] = store.list_plans(run_id=run.id)
    assert executor.apply_calls == [
        {
            "ops": [{"op": "rename", "name": "alpha"}, {"op": "rename", "name": "beta"}],
            "plan_id": plan.id,
            "run_id": run.id,
            "actor": "alice",
        }
    ]
    assert (plan.status, plan.result) == (PlanStatus.applied, {"applied": 2})
    decided = [e for e in store.list_events(run.id) if e.type == "plan_decided"]
    assert [(e.data["status"], e.data["result"]) for e in decided] == [("applied", {"applied": 2})]
    assert store.list_events(run.id)[-1].type == "run_ended"
    assert len(model.requests) == 3  # approving does not call the model again


@pytest.mark.parametrize("answer", ["reject", "no", False, {"approve": False}])
async def test_reject_does_not_apply(store, make_runtime, answer):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, answer)
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert executor.apply_calls == []
    [plan] = store.list_plans(run_id=run.id)
    assert (plan.status, plan.result) == (PlanStatus.rejected, {"applied": False, "reason": "answered"})


@pytest.mark.parametrize("answer", ["APPROVE", "yes", True, {"approve": "approve"}])
async def test_approve_spellings(store, make_runtime, answer):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, answer)
    await settle(rt, run.id)
    assert len(executor.apply_calls) == 1


async def test_a_wrong_plan_answer_keeps_the_ask_pending(store, make_runtime):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    plan_ask = only_plan_ask(store, run.id)
    for wrong in ("maybe", ["approve"], 1, None):
        with pytest.raises(InvalidAnswerError):
            rt.answer(plan_ask.id, wrong)
    assert store.get_ask(plan_ask.id).status == AskStatus.pending
    assert store.list_plans(run_id=run.id)[0].status == PlanStatus.pending


async def test_cancelling_the_plan_ask_cancels_the_plan(store, make_runtime):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.cancel_ask(only_plan_ask(store, run.id).id)
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert executor.apply_calls == []
    [plan] = store.list_plans(run_id=run.id)
    assert (plan.status, plan.result) == (PlanStatus.cancelled, {"applied": False, "reason": "cancelled"})


async def test_fail_policy_declines_the_plan(store, make_runtime):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor, ask_policy="fail")
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert executor.apply_calls == []
    plan_ask = only_plan_ask(store, run.id)
    assert (plan_ask.status, plan_ask.answered_by) == (AskStatus.declined, "policy:fail")
    assert store.list_plans(run_id=run.id)[0].status == PlanStatus.cancelled


async def test_plan_times_out_under_the_wait_policy(store, make_runtime):
    executor = FakeExecutor()
    model = RecordingModel(STAGE_TWO)
    rt = make_runtime(model, ask_policy="wait")
    run = await run_to_settle(rt, plan_agent(executor, question_timeout=0.2))
    assert run.status == RunStatus.finished
    assert executor.apply_calls == []
    assert only_plan_ask(store, run.id).status == AskStatus.timed_out
    [plan] = store.list_plans(run_id=run.id)
    assert (plan.status, plan.result) == (PlanStatus.cancelled, {"applied": False, "reason": "timed_out"})


async def test_stop_while_the_plan_waits_cancels_it(store, make_runtime):
    executor = FakeExecutor()
    rt, _, run = await staged_run(store, make_runtime, executor)
    stopped = await rt.stop(run.id)
    assert stopped.status == RunStatus.cancelled
    plan_ask = only_plan_ask(store, run.id)
    assert (plan_ask.status, plan_ask.answered_by, plan_ask.outcome) == (
        AskStatus.cancelled,
        "stop",
        {"approve": False},
    )
    assert store.list_plans(run_id=run.id)[0].status == PlanStatus.cancelled
    assert executor.apply_calls == []


async def test_apply_refused_with_a_tool_error_fails_the_plan_and_the_run(store, make_runtime):
    executor = FakeExecutor(apply_error=ToolError("conflict", "The data changed since the preview."))
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, "approve")
    run = await settle(rt, run.id)
    assert run.status == RunStatus.failed and "The data changed" in (run.error or "")
    [plan] = store.list_plans(run_id=run.id)
    assert plan.status == PlanStatus.failed
    assert plan.result == {"ok": False, "error_code": "conflict", "message": "The data changed since the preview."}


async def test_apply_crashing_fails_the_run_instead_of_hanging(store, make_runtime):
    executor = FakeExecutor(apply_error=OSError("disk full"))
    rt, _, run = await staged_run(store, make_runtime, executor)
    rt.answer(only_plan_ask(store, run.id).id, "approve")
    with anyio.move_on_after(1):
        await rt.settled(run.id)
    run = store.get_run(run.id)
    assert run.status in (RunStatus.failed, RunStatus.finished)
    assert store.list_plans(run_id=run.id)[0].status == PlanStatus.failed


# ---- refusals: nothing staged ----------------------------------------------------------------------------------


async def test_validate_refusal_reaches_the_model_and_stages_nothing(store, make_runtime):
    executor = FakeExecutor(
        validate_error=ToolError("position_taken", "Position 3 of box 1 is taken.", field="positions")
    )
    model = RecordingModel(
        [calls(call("rename", {"name": "alpha"}, id="w1")), say("Could not stage: position 3 of box 1 is taken.")]
    )
    rt = make_runtime(model)
    run = await run_to_settle(rt, plan_agent(executor))
    assert (run.status, run.output) == (RunStatus.finished, "Could not stage: position 3 of box 1 is taken.")
    assert seen_by_model(model, "rename") == [
        {"ok": False, "error_code": "position_taken", "message": "Position 3 of box 1 is taken.", "field": "positions"}
    ]
    assert all(p.items == [] for p in store.list_plans(run_id=run.id))
    assert store.list_asks(status=None, run_id=run.id) == []
    assert executor.apply_calls == []
    [record] = store.list_tool_calls(run.id)
    assert (record.ok, record.error_code) == (False, "position_taken")


async def test_a_refused_write_keeps_the_earlier_staged_ones(store, make_runtime):
    class RefuseBeta(FakeExecutor):
        def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
            if any(o["name"] == "beta" for o in ops):
                raise ToolError("bad_name", "beta is taken.")
            return super().validate(ops)

    executor = RefuseBeta()
    rt, model, run = await staged_run(store, make_runtime, executor)
    assert run.status == RunStatus.waiting
    [plan] = store.list_plans(run_id=run.id)
    assert [i["op"]["name"] for i in plan.items] == ["alpha"]
    assert [r["ok"] for r in seen_by_model(model, "rename")] == [True, False]
    rt.answer(only_plan_ask(store, run.id).id, "approve")
    await settle(rt, run.id)
    assert executor.apply_calls[0]["ops"] == [{"op": "rename", "name": "alpha"}]


async def test_grounding_refusal_reaches_the_model_and_stages_nothing(store, make_runtime):
    executor = FakeExecutor(grounding_error=ungrounded("name"))
    model = RecordingModel([calls(call("rename", {"name": "guess"}, id="w1")), say("I need to ask.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, plan_agent(executor))
    assert run.status == RunStatus.finished
    [seen] = seen_by_model(model, "rename")
    assert (seen["ok"], seen["error_code"], seen["field"]) == (False, "ungrounded_argument", "name")
    assert seen["_hint"] == "Ask with question."
    assert store.list_plans(run_id=run.id) == []
    assert executor.validate_calls == []
    assert store.list_asks(status=None, run_id=run.id) == []


async def test_grounding_crash_is_a_tool_exception_and_stages_nothing(store, make_runtime):
    executor = FakeExecutor(grounding_error=RuntimeError("bug in the app"))
    model = RecordingModel([calls(call("rename", {"name": "x"}, id="w1")), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, plan_agent(executor))
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "rename")[0]["error_code"] == "tool_exception"
    assert store.list_plans(run_id=run.id) == []


async def test_a_write_tool_with_invalid_arguments_is_not_staged(store, make_runtime):
    executor = FakeExecutor()
    model = RecordingModel([calls(call("rename", {"nom": "x"}, id="w1")), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, plan_agent(executor))
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "rename")[0]["error_code"] == "invalid_arguments"
    assert built == []
    assert executor.grounding_calls == []
    assert store.list_plans(run_id=run.id) == []
