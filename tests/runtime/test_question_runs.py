"""The question tool through full runs: pause, answer, resume; the seed's error codes; ask policies; stop."""

from __future__ import annotations

import anyio
import pytest

from consulta.asks import question_tool
from consulta.runtime import (
    Agent,
    AskStatus,
    ConfigError,
    ConflictError,
    InvalidAnswerError,
    NotFoundError,
    PlanStatus,
    RunStatus,
    Store,
    read_tool,
    write_tool,
)

from ._support import (
    CELL_LINE_Q,
    SEED_ANSWERED,
    FakeExecutor,
    RecordingModel,
    ask,
    call,
    calls,
    results_for,
    run_to_settle,
    say,
    seen_by_model,
    settle,
)

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]

LOOKED_UP = {"ok": True, "found": ["K562-a", "K562-b"]}
PAYLOAD = {
    "questions": [
        {
            "header": "Cell Line",
            "question": "Which one?",
            "options": ["K562", "K562-dTAG", "K562-RTCB"],
            "multiple": False,
        }
    ]
}


@read_tool
def lookup(name: str) -> dict:
    """Look a name up."""
    return {"ok": True, "found": [f"{name}-a", f"{name}-b"]}


@write_tool
def rename(name: str) -> dict:
    """Rename the thing."""
    return {"op": "rename", "name": name}


def toy_agent(**kw) -> Agent:
    return Agent(app="toy", instructions="Be brief.", tools=(lookup, question_tool()), **kw)


def only_ask(store: Store, run_id: str):
    asks = store.list_asks(status=None, run_id=run_id)
    assert len(asks) == 1, asks
    return asks[0]


async def wait_for_ask(store: Store, run_id: str):
    """Wait until the run has a pending ask (for runs started with `start` under the `wait` policy)."""
    with anyio.fail_after(10):
        while not store.list_asks(run_id=run_id):
            await anyio.sleep(0.01)
    return store.list_asks(run_id=run_id)[0]


# ---- pause and answer ------------------------------------------------------------------------------------------


async def test_question_pauses_the_run_and_the_answer_resumes_it(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("You chose K562-dTAG.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.waiting
    pending = only_ask(store, run.id)
    assert (pending.status, pending.kind, pending.tool_call_id) == (AskStatus.pending, "question", "q1")
    assert pending.payload == PAYLOAD
    assert pending.timeout_s == 300.0
    assert pending.trace_id == run.trace_id
    assert len(model.requests) == 1

    closed = rt.answer(pending.id, ["K562-dTAG"])
    assert (closed.status, closed.answer, closed.answered_by) == (AskStatus.answered, ["K562-dTAG"], "user")
    assert closed.outcome == SEED_ANSWERED

    run = await settle(rt, run.id)
    assert (run.status, run.output, run.error) == (RunStatus.finished, "You chose K562-dTAG.", None)
    assert seen_by_model(model, "question") == [SEED_ANSWERED]
    assert results_for(store, run.id, "question") == [SEED_ANSWERED]
    assert len(model.requests) == 2


async def test_answer_with_several_questions_and_multiple_choice(store, make_runtime):
    positions = {"header": "Positions", "question": "Which tubes?", "options": ["1", "2", "3"], "multiple": True}
    model = RecordingModel([ask(CELL_LINE_Q, positions), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    rt.answer(only_ask(store, run.id).id, ["K562", ["1", "3"]], answered_by="alice")
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "question") == [
        {
            "ok": True,
            "result": {"answers": ["Cell Line: K562", "Positions: 1, 3"], "raw_answers": ["K562", ["1", "3"]]},
            "message": "User answered: Cell Line: K562; Positions: 1, 3",
        }
    ]
    assert only_ask(store, run.id).answered_by == "alice"


async def test_two_questions_in_a_row(store, make_runtime):
    box = {"header": "Box", "question": "Which box?"}
    model = RecordingModel([ask(CELL_LINE_Q, id="q1"), ask(box, id="q2"), say("done")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    rt.answer(store.list_asks(run_id=run.id)[0].id, ["K562"])
    run = await settle(rt, run.id)
    assert run.status == RunStatus.waiting
    second = store.list_asks(run_id=run.id)
    assert [a.tool_call_id for a in second] == ["q2"]
    rt.answer(second[0].id, [["Box 3"]])
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert [r["message"] for r in seen_by_model(model, "question")] == [
        "User answered: Cell Line: K562",
        "User answered: Box: Box 3",
    ]


async def test_run_ends_with_the_answer_in_the_checkpoint_and_a_read_after_it(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), calls(call("lookup", {"name": "K562-dTAG"}, id="r1")), say("found")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    rt.answer(only_ask(store, run.id).id, ["K562-dTAG"])
    run = await settle(rt, run.id)
    assert (run.status, run.output) == (RunStatus.finished, "found")
    assert results_for(store, run.id, "lookup") == [{"ok": True, "found": ["K562-dTAG-a", "K562-dTAG-b"]}]
    records = store.list_tool_calls(run.id)
    assert [(r.tool_name, r.ok, r.args) for r in records] == [("lookup", True, {"name": "K562-dTAG"})]


# ---- the seed's error codes through real runs ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"questions": []}, "no_questions"),
        ({"questions": "Which cell line?"}, "no_questions"),
        ({}, "no_questions"),
        ({"questions": ["Which cell line?"]}, "invalid_question_format"),
        ({"questions": [{"header": "Cell Line"}]}, "missing_required_field"),
        ({"questions": [{"question": "Which?"}]}, "missing_required_field"),
    ],
)
async def test_invalid_question_arguments_reach_the_model_and_ask_nothing(store, make_runtime, args, code):
    model = RecordingModel([calls(call("question", args, id="q1")), say("I will guess.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert (run.status, run.output) == (RunStatus.finished, "I will guess.")
    [seen] = seen_by_model(model, "question")
    assert seen["ok"] is False
    assert seen["error_code"] == code
    assert store.list_asks(status=None, run_id=run.id) == []
    [record] = store.list_tool_calls(run.id)
    assert (record.tool_name, record.ok, record.error_code) == ("question", False, code)
    assert [e.type for e in store.list_events(run.id)].count("ask_opened") == 0


async def test_question_not_alone_runs_the_other_tool_and_asks_nothing(store, make_runtime):
    model = RecordingModel(
        [
            calls(call("lookup", {"name": "K562"}, id="r1"), call("question", {"questions": [CELL_LINE_Q]}, id="q1")),
            say("ok"),
        ]
    )
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "lookup") == [LOOKED_UP]
    assert seen_by_model(model, "question") == [
        {
            "ok": False,
            "error_code": "question_not_alone",
            "message": "question tool must be called alone, not with other tools.",
            "_hint": "Call question separately, then use other tools after getting the answer.",
        }
    ]
    assert store.list_asks(status=None, run_id=run.id) == []
    assert {(r.tool_name, r.ok, r.error_code) for r in store.list_tool_calls(run.id)} == {
        ("lookup", True, None),
        ("question", False, "question_not_alone"),
    }


async def test_two_questions_in_one_step_are_both_not_alone(store, make_runtime):
    q = {"questions": [CELL_LINE_Q]}
    model = RecordingModel([calls(call("question", q, id="q1"), call("question", q, id="q2")), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished
    assert [r["error_code"] for r in seen_by_model(model, "question")] == ["question_not_alone", "question_not_alone"]
    assert store.list_asks(status=None, run_id=run.id) == []


# ---- policies: wait (timeout, answer from a thread), fail -------------------------------------------------------


async def test_wait_policy_times_out_and_the_run_finishes(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("No answer; stopping.")])
    rt = make_runtime(model, ask_policy="wait")
    run = await run_to_settle(rt, toy_agent(question_timeout=0.2))
    assert (run.status, run.output) == (RunStatus.finished, "No answer; stopping.")
    timed_out = only_ask(store, run.id)
    assert (timed_out.status, timed_out.answered_by, timed_out.timeout_s) == (AskStatus.timed_out, "timeout", 0.2)
    expected = {"ok": False, "error_code": "question_timeout", "message": "User did not answer within timeout."}
    assert timed_out.outcome == expected
    assert seen_by_model(model, "question") == [expected]
    with pytest.raises(ConflictError):
        rt.answer(timed_out.id, ["K562"])


async def test_wait_policy_answer_from_another_thread(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("done")])
    rt = make_runtime(model, ask_policy="wait")
    started = await rt.start(toy_agent(), "thaw", model="scripted")
    pending = await wait_for_ask(store, started.id)
    assert store.get_run(started.id).status == RunStatus.waiting
    await anyio.to_thread.run_sync(rt.answer, pending.id, ["K562-dTAG"])
    run = await settle(rt, started.id)
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "question") == [SEED_ANSWERED]
    assert only_ask(store, run.id).status == AskStatus.answered


async def test_fail_policy_gives_question_unavailable(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("I cannot ask, so here is what I know.")])
    rt = make_runtime(model, ask_policy="fail")
    run = await run_to_settle(rt, toy_agent())
    assert (run.status, run.output) == (RunStatus.finished, "I cannot ask, so here is what I know.")
    declined = only_ask(store, run.id)
    assert (declined.status, declined.answered_by) == (AskStatus.declined, "policy:fail")
    [seen] = seen_by_model(model, "question")
    assert (seen["ok"], seen["error_code"]) == (False, "question_unavailable")
    assert declined.outcome == seen


# ---- cancel ----------------------------------------------------------------------------------------------------


async def test_cancel_ask_tells_the_model_and_the_run_continues(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), calls(call("lookup", {"name": "K562"}, id="r1")), say("Listed both.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    cancelled = rt.cancel_ask(only_ask(store, run.id).id)
    assert (cancelled.status, cancelled.answered_by) == (AskStatus.cancelled, "user")
    run = await settle(rt, run.id)
    assert (run.status, run.output) == (RunStatus.finished, "Listed both.")
    assert results_for(store, run.id, "question") == [
        {"ok": False, "error_code": "question_cancelled", "message": "User cancelled the question."}
    ]
    assert results_for(store, run.id, "lookup") == [LOOKED_UP]
    with pytest.raises(ConflictError):
        rt.cancel_ask(cancelled.id)


# ---- answering: errors -----------------------------------------------------------------------------------------


async def test_answer_errors_leave_the_ask_pending(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("done")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    pending = only_ask(store, run.id)

    with pytest.raises(NotFoundError, match="ask_nope"):
        rt.answer("ask_nope", ["K562"])
    for wrong in (["K562", "K562-dTAG"], [], "K562", [["K562", "K562-dTAG"]], [3]):
        with pytest.raises(InvalidAnswerError):
            rt.answer(pending.id, wrong)
    assert store.get_ask(pending.id).status == AskStatus.pending
    assert store.get_run(run.id).status == RunStatus.waiting
    assert len(model.requests) == 1

    rt.answer(pending.id, ["K562-dTAG"])
    with pytest.raises(ConflictError, match="already answered"):
        rt.answer(pending.id, ["K562"])
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished
    assert store.get_ask(pending.id).answer == ["K562-dTAG"]


# ---- defer: another process answers and resumes -----------------------------------------------------------------


async def test_defer_then_a_new_runtime_answers_and_resumes(store, make_runtime, tmp_path):
    steps = [calls(call("lookup", {"name": "K562"}, id="r1")), ask(CELL_LINE_Q), say("You chose K562-dTAG.")]
    first_model = RecordingModel(steps)
    first = make_runtime(first_model)
    run = await run_to_settle(first, toy_agent())
    assert run.status == RunStatus.waiting
    pending = only_ask(store, run.id)
    await first.aclose()  # the first process is gone

    other_store = Store(store.url)  # another process: its own connection to the same database
    try:
        second_model = RecordingModel(steps)
        second = make_runtime(second_model, on=other_store)
        agent = toy_agent()
        with pytest.raises(ConfigError):  # the question kind is unknown until the agent is registered
            second.answer(pending.id, ["K562-dTAG"])
        assert other_store.get_ask(pending.id).status == AskStatus.pending
        second.register(agent)
        second.answer(pending.id, ["K562-dTAG"])
        resumed = await second.resume(run.id, agent)
        assert resumed.id == run.id
        run = await settle(second, run.id)
        assert (run.status, run.output) == (RunStatus.finished, "You chose K562-dTAG.")
        assert len(second_model.requests) == 1  # continued from the checkpoint, not replayed
        assert seen_by_model(second_model, "question") == [SEED_ANSWERED]
        assert seen_by_model(second_model, "lookup") == [LOOKED_UP]
        assert len(first_model.requests) == 2
        assert [r.tool_name for r in store.list_tool_calls(run.id)] == ["lookup"]  # the read was not run again
        types = [e.type for e in store.list_events(run.id)]
        assert types.count("run_started") == 2
        assert types[-1] == "run_ended"
    finally:
        other_store.close()


async def test_resume_while_the_ask_is_still_pending_then_answer_here(store, make_runtime):
    steps = [ask(CELL_LINE_Q), say("done")]
    first = make_runtime(RecordingModel(steps))
    run = await run_to_settle(first, toy_agent())
    await first.aclose()
    second_model = RecordingModel(steps)
    second = make_runtime(second_model)
    agent = toy_agent()
    await second.resume(run.id, agent)
    run = await settle(second, run.id)
    assert run.status != RunStatus.finished
    assert only_ask(store, run.id).status == AskStatus.pending
    assert second_model.requests == []
    second.answer(only_ask(store, run.id).id, ["K562-dTAG"])
    run = await settle(second, run.id)
    assert run.status == RunStatus.finished
    assert seen_by_model(second_model, "question") == [SEED_ANSWERED]


async def test_resume_while_the_ask_is_still_pending_leaves_the_run_waiting(store, make_runtime):
    steps = [ask(CELL_LINE_Q), say("done")]
    first = make_runtime(RecordingModel(steps))
    run = await run_to_settle(first, toy_agent())
    assert run.status == RunStatus.waiting
    await first.aclose()
    second = make_runtime(RecordingModel(steps))
    await second.resume(run.id, toy_agent())
    run = await settle(second, run.id)
    assert run.status == RunStatus.waiting


async def _answer_from_another_process(store, make_runtime):
    """A run waits on a question here; another process (its own Store) answers it; the live run here finishes."""
    model = RecordingModel([ask(CELL_LINE_Q), say("done")])
    rt = make_runtime(model)
    agent = toy_agent()
    run = await run_to_settle(rt, agent)
    other_store = Store(store.url)
    try:
        elsewhere = make_runtime(RecordingModel([]), on=other_store)
        elsewhere.register(agent)
        elsewhere.answer(only_ask(store, run.id).id, ["K562-dTAG"])  # not attached to a loop: only the store changes
        with anyio.fail_after(10):
            while store.get_run(run.id).status != RunStatus.finished:
                await anyio.sleep(0.02)
    finally:
        other_store.close()
    return model, run


async def test_a_live_runtime_notices_an_answer_given_by_another_process(store, make_runtime):
    model, run = await _answer_from_another_process(store, make_runtime)
    assert seen_by_model(model, "question") == [SEED_ANSWERED]
    assert "ask_closed" in [e.type for e in store.list_events(run.id)]


async def test_an_ask_answered_elsewhere_is_closed_once_in_the_event_log(store, make_runtime):
    _, run = await _answer_from_another_process(store, make_runtime)
    assert [e.type for e in store.list_events(run.id)].count("ask_closed") == 1


async def test_resume_of_a_finished_run_returns_it(store, make_runtime):
    rt = make_runtime(RecordingModel([say("hi")]))
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished
    again = await rt.resume(run.id, toy_agent())
    assert (again.status, again.output) == (RunStatus.finished, "hi")


# ---- stop ------------------------------------------------------------------------------------------------------


async def test_stop_while_waiting_cancels_asks_and_staged_plans(store, make_runtime):
    executor = FakeExecutor()
    agent = Agent(app="toy", instructions="x", tools=(lookup, rename, question_tool()), executor=executor)
    model = RecordingModel([calls(call("rename", {"name": "new"}, id="w1")), ask(CELL_LINE_Q), say("never")])
    rt = make_runtime(model)
    events = []
    rt.subscribe(events.append)
    run = await run_to_settle(rt, agent)
    assert run.status == RunStatus.waiting
    [plan] = store.list_plans(run_id=run.id)
    assert plan.status == PlanStatus.staging and len(plan.items) == 1

    stopped = await rt.stop(run.id)
    assert stopped.status == RunStatus.cancelled
    ask_ = only_ask(store, run.id)
    assert (ask_.status, ask_.answered_by) == (AskStatus.cancelled, "stop")
    assert ask_.outcome == {"ok": False, "error_code": "question_cancelled", "message": "User cancelled the question."}
    assert store.get_plan(plan.id).status == PlanStatus.cancelled
    assert executor.apply_calls == []
    assert len(model.requests) == 2
    assert (await settle(rt, run.id)).status == RunStatus.cancelled
    assert [e.type for e in events][-3:] == [
        "ask_closed",
        "plan_decided",
        "run_ended",
    ]  # the staged plan is cancelled too
    assert events[-1].status == "cancelled"
    with pytest.raises(ConflictError):
        rt.answer(ask_.id, ["K562"])
    assert (await rt.stop(run.id)).status == RunStatus.cancelled  # stopping again changes nothing


async def test_stop_under_the_wait_policy(store, make_runtime):
    model = RecordingModel([ask(CELL_LINE_Q), say("never")])
    rt = make_runtime(model, ask_policy="wait")
    started = await rt.start(toy_agent(), "thaw", model="scripted")
    pending = await wait_for_ask(store, started.id)
    stopped = await rt.stop(started.id)
    assert stopped.status == RunStatus.cancelled
    assert store.get_ask(pending.id).status == AskStatus.cancelled
    assert (await settle(rt, started.id)).status == RunStatus.cancelled
    assert len(model.requests) == 1


async def test_a_question_not_in_the_chinese_persons_language_is_refused(store, make_runtime):
    """Seen on the embedded model: "What is the audit id of the '0' change?" asked of a person writing Chinese. The
    runtime refuses it (the seed's `invalid_question_format`) and the model asks again, in Chinese."""
    zh = {"questions": [{"header": "细胞系", "question": "哪一个？", "options": ["K562", "HeLa"], "multiple": False}]}
    model = RecordingModel([calls(call("question", PAYLOAD, id="q1")), calls(call("question", zh, id="q2"))])
    rt = make_runtime(model)
    with anyio.fail_after(10):
        run = await rt.run(toy_agent(), "查一下那管细胞", model="scripted")
    (refused,) = seen_by_model(model, "question")
    assert refused["error_code"] == "invalid_question_format" and "Chinese" in refused["message"]
    assert only_ask(store, run.id).payload["questions"][0]["question"] == "哪一个？"
