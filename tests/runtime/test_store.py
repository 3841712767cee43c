"""The store: runs, checkpoints, asks, plans, tool calls and events, each test on a new store of its own, on SQLite
and (slow) on PostgreSQL."""

from __future__ import annotations

import json
import threading

import pytest

from consulta.runtime import AskStatus, ConflictError, NotFoundError, PlanStatus, RunStatus, Store
from consulta.runtime._records import EventRow

pytestmark = pytest.mark.both_backends


def new_run(store: Store, **kw):
    args = {"app": "toy", "prompt": "thaw K562", "model": "scripted", "lang": "en"}
    args.update(kw)
    return store.create_run(**args)


# ---- runs ------------------------------------------------------------------------------------------------------


def test_create_and_get_run(store):
    run = new_run(store, options={"data": "/x"})
    got = store.get_run(run.id)
    assert got == run
    assert run.id.startswith("run_")
    assert run.status == RunStatus.running
    assert (run.app, run.prompt, run.model, run.lang) == ("toy", "thaw K562", "scripted", "en")
    assert run.thread_id == run.id  # a new run starts its own thread
    assert run.parent_run_id is None
    assert run.options == {"data": "/x"}
    assert run.owner == store.owner
    assert len(run.trace_id) == 32
    assert run.output is None and run.error is None
    assert run.agent == ""  # the app's main agent


def test_a_run_records_its_agent(store):
    run = new_run(store, agent="assistant")
    assert run.agent == "assistant"
    assert store.get_run(run.id).agent == "assistant"


def test_run_in_a_thread_keeps_thread_and_parent(store):
    first = new_run(store)
    second = new_run(store, thread_id=first.thread_id, parent_run_id=first.id)
    assert second.thread_id == first.id
    assert second.parent_run_id == first.id


def test_unknown_run_is_not_found_with_a_helpful_message(store):
    with pytest.raises(NotFoundError) as info:
        store.get_run("run_nope")
    assert "run_nope" in str(info.value)
    assert "consulta runs" in str(info.value)
    assert info.value.code == "not_found"


def test_set_run_status_output_error_and_owner_release(store):
    run = new_run(store)
    store.set_run_status(run.id, RunStatus.waiting)
    assert store.get_run(run.id).status == RunStatus.waiting
    assert store.get_run(run.id).owner == store.owner
    store.set_run_status(run.id, RunStatus.failed, error="Boom: x")
    got = store.get_run(run.id)
    assert (got.status, got.error, got.output, got.owner) == (RunStatus.failed, "Boom: x", None, None)


def test_list_runs_filters(store):
    a = new_run(store, app="a")
    b = new_run(store, app="b")
    store.set_run_status(b.id, RunStatus.finished, output="done")
    assert {r.id for r in store.list_runs()} == {a.id, b.id}
    assert [r.id for r in store.list_runs(app="a")] == [a.id]
    assert [r.id for r in store.list_runs(status="finished")] == [b.id]


def _parsed(checkpoint):
    return checkpoint[0], json.loads(checkpoint[1])


def test_request_cancel(store):
    run = new_run(store)
    assert store.cancel_requested() == set()
    store.request_cancel(run.id)
    assert store.cancel_requested() == {run.id}
    assert store.get_run(run.id).cancel_requested is True
    with pytest.raises(NotFoundError):
        store.request_cancel("run_nope")


def test_claim_run_owned_by_this_store(store):
    run = new_run(store)
    assert store.claim_run(run.id) is True
    assert store.run_is_live_elsewhere(run.id) is False


# ---- checkpoints -----------------------------------------------------------------------------------------------


def test_checkpoint_upsert(store):
    run = new_run(store)
    assert store.load_checkpoint(run.id) is None
    store.save_checkpoint(run.id, 1, '["a"]')
    assert _parsed(store.load_checkpoint(run.id)) == (1, ["a"])
    store.save_checkpoint(run.id, 2, '["a", "b"]')
    assert _parsed(store.load_checkpoint(run.id)) == (2, ["a", "b"])
    # A step writes only from the last stored message on; what came before stays.
    store.save_step(run.id, checkpoint=(3, 1, ['"B"', '"c"']))
    assert _parsed(store.load_checkpoint(run.id)) == (3, ["a", "B", "c"])
    # A shorter checkpoint (rewritten from an earlier index) drops the tail.
    store.save_step(run.id, checkpoint=(1, 0, ['"z"']))
    assert _parsed(store.load_checkpoint(run.id)) == (1, ["z"])
    other = new_run(store)
    assert store.load_checkpoint(other.id) is None


# ---- asks ------------------------------------------------------------------------------------------------------


def test_create_get_and_list_asks(store):
    run = new_run(store)
    payload = {"questions": [{"header": "Cell Line", "question": "Which?", "options": ["K562"], "multiple": False}]}
    ask = store.create_ask(
        run_id=run.id, kind="question", payload=payload, tool_call_id="call_1", timeout_s=0.5, trace_id=run.trace_id
    )
    assert ask.id.startswith("ask_")
    assert store.get_ask(ask.id) == ask
    assert (ask.status, ask.payload, ask.tool_call_id, ask.timeout_s) == (AskStatus.pending, payload, "call_1", 0.5)
    assert ask.answer is None and ask.outcome is None and ask.closed_at is None
    assert [a.id for a in store.list_asks()] == [ask.id]
    assert [a.id for a in store.list_asks(run_id=run.id)] == [ask.id]
    assert store.list_asks(run_id="run_other") == []


def test_unknown_ask_is_not_found_with_a_helpful_message(store):
    with pytest.raises(NotFoundError) as info:
        store.get_ask("ask_nope")
    assert "ask_nope" in str(info.value) and "consulta asks" in str(info.value)
    with pytest.raises(NotFoundError):
        store.close_ask("ask_nope", AskStatus.answered, answer=["x"])


def test_close_ask_records_answer_and_refuses_a_second_close(store):
    run = new_run(store)
    ask = store.create_ask(run_id=run.id, kind="question", payload={"questions": []})
    closed = store.close_ask(ask.id, AskStatus.answered, answer=["K562"], outcome={"ok": True}, answered_by="alice")
    assert (closed.status, closed.answer, closed.outcome, closed.answered_by) == (
        AskStatus.answered,
        ["K562"],
        {"ok": True},
        "alice",
    )
    assert closed.closed_at is not None
    with pytest.raises(ConflictError) as info:
        store.close_ask(ask.id, AskStatus.cancelled, answered_by="bob")
    assert "already answered" in str(info.value)
    again = store.get_ask(ask.id)
    assert (again.status, again.answered_by, again.answer) == (AskStatus.answered, "alice", ["K562"])
    assert store.list_asks() == []
    assert [a.id for a in store.list_asks(status=AskStatus.answered)] == [ask.id]
    assert [a.id for a in store.list_asks(status=None)] == [ask.id]


def test_asks_closed_since_is_a_high_water_mark(store):
    run = new_run(store)
    a, b, c = (store.create_ask(run_id=run.id, kind="question", payload={}) for _ in range(3))
    assert store.ask_closed_high_water() == 0
    assert store.asks_closed_since(0) == (0, [])
    store.close_ask(b.id, AskStatus.answered)
    store.close_ask(a.id, AskStatus.timed_out)
    mark, closed = store.asks_closed_since(0)
    assert closed == [(b.id, "answered"), (a.id, "timed_out")]
    assert mark == store.ask_closed_high_water() >= 2
    assert store.asks_closed_since(mark) == (mark, [])
    store.close_ask(c.id, AskStatus.cancelled)
    mark2, closed2 = store.asks_closed_since(mark)
    assert closed2 == [(c.id, "cancelled")]
    assert mark2 > mark
    assert store.ask_closed_high_water() == mark2


def test_a_failed_second_close_does_not_report_the_ask_again(store):
    run = new_run(store)
    ask = store.create_ask(run_id=run.id, kind="question", payload={})
    store.close_ask(ask.id, AskStatus.answered)
    mark, _ = store.asks_closed_since(0)
    with pytest.raises(ConflictError):
        store.close_ask(ask.id, AskStatus.answered)
    assert store.asks_closed_since(mark)[1] == []


def test_close_ask_expects_a_status_and_changes_nothing_otherwise(store):
    run = new_run(store)
    ask = store.create_ask(run_id=run.id, kind="question", payload={})
    mark = store.ask_closed_high_water()
    with pytest.raises(ConflictError) as info:
        store.close_ask(ask.id, AskStatus.cancelled, expect=AskStatus.answered)
    assert "pending, not answered" in str(info.value)
    assert store.get_ask(ask.id).status == AskStatus.pending
    assert store.ask_closed_high_water() == mark  # the failed close took no number
    closed = store.close_ask(ask.id, AskStatus.answered, answer=["x"])
    assert closed == store.get_ask(ask.id)
    assert store.close_ask(ask.id, AskStatus.cancelled, expect=AskStatus.answered).status == AskStatus.cancelled


def test_two_stores_on_one_database_see_each_others_closes(store_url):
    one, two = Store(store_url), Store(store_url)
    try:
        run = new_run(one)
        ask = one.create_ask(run_id=run.id, kind="question", payload={})
        two.close_ask(ask.id, AskStatus.answered, answer=["x"])
        assert one.get_ask(ask.id).status == AskStatus.answered
        assert one.asks_closed_since(0)[1] == [(ask.id, "answered")]
        with pytest.raises(ConflictError):
            one.close_ask(ask.id, AskStatus.answered)
    finally:
        one.close()
        two.close()


# ---- plans -----------------------------------------------------------------------------------------------------


def test_get_or_create_staging_plan_returns_the_same_plan(store):
    run = new_run(store)
    plan = store.get_or_create_staging_plan(run_id=run.id, app="toy")
    assert plan.id.startswith("plan_")
    assert (plan.status, plan.items, plan.ask_id, plan.result) == (PlanStatus.staging, [], None, None)
    again = store.get_or_create_staging_plan(run_id=run.id, app="toy")
    assert again.id == plan.id
    assert [p.id for p in store.list_plans(run_id=run.id)] == [plan.id]


def test_staging_plan_is_per_run_and_a_new_one_after_the_last_left_staging(store):
    run = new_run(store)
    other = new_run(store)
    plan = store.get_or_create_staging_plan(run_id=run.id, app="toy")
    assert store.get_or_create_staging_plan(run_id=other.id, app="toy").id != plan.id
    store.update_plan(plan.id, status=PlanStatus.pending)
    fresh = store.get_or_create_staging_plan(run_id=run.id, app="toy")
    assert fresh.id != plan.id
    assert [p.id for p in store.list_plans(run_id=run.id)] == [plan.id, fresh.id]


def test_update_plan(store):
    run = new_run(store)
    plan = store.get_or_create_staging_plan(run_id=run.id, app="toy")
    items = [{"tool_call_id": "c1", "tool": "rename", "op": {"op": "rename"}, "preview": "p"}]
    store.update_plan(plan.id, items=items)
    ask = store.create_ask(run_id=run.id, kind="plan", payload={"plan_id": plan.id})
    store.update_plan(plan.id, status=PlanStatus.pending, ask_id=ask.id)
    got = store.update_plan(plan.id, status=PlanStatus.applied, result={"applied": 1})
    assert (got.status, got.items, got.ask_id, got.result) == (PlanStatus.applied, items, ask.id, {"applied": 1})
    assert store.get_plan(plan.id) == got
    with pytest.raises(NotFoundError):
        store.get_plan("plan_nope")


# ---- tool calls and events -------------------------------------------------------------------------------------


def test_tool_call_records(store):
    run = new_run(store)
    common = {"run_id": run.id, "started_at": "2025-01-01T00:00:00+00:00", "duration_ms": 1.5}
    store.record_tool_call(
        step=1, tool_call_id="c1", tool_name="lookup", args={"name": "K562"}, result={"ok": True, "n": 2}, **common
    )
    store.record_tool_call(
        step=2,
        tool_call_id="c2",
        tool_name="lookup",
        args={},
        result={"ok": False, "error_code": "invalid_arguments"},
        **common,
    )
    store.record_tool_call(step=3, tool_call_id="c3", tool_name="raw", args={}, result="plain text", **common)
    records = store.list_tool_calls(run.id)
    assert [(r.tool_call_id, r.step, r.ok, r.error_code) for r in records] == [
        ("c1", 1, True, None),
        ("c2", 2, False, "invalid_arguments"),
        ("c3", 3, True, None),
    ]
    assert records[0].args == {"name": "K562"}
    assert records[0].result == {"ok": True, "n": 2}
    assert records[2].result == "plain text"
    assert records[0].duration_ms == 1.5
    assert store.list_tool_calls("run_other") == []


def test_events_in_order_and_after_id(store):
    run = new_run(store)
    first = store.append_event(run.id, "run_started", {"app": "toy"})
    second = store.append_event(run.id, "run_ended", {"status": "finished"})
    events = store.list_events(run.id)
    assert [(e.type, e.data) for e in events] == [
        ("run_started", {"app": "toy"}),
        ("run_ended", {"status": "finished"}),
    ]
    assert [e.id for e in events] == [first.id, second.id]
    assert [e.type for e in store.list_events(run.id, after_id=first.id)] == ["run_ended"]


def test_events_are_numbered_per_run(store):
    run, other = new_run(store), new_run(store)
    assert store.last_event_seq(run.id) == 0
    a = store.append_event(run.id, "run_started", {})
    b = store.append_event(other.id, "run_started", {})
    c = store.append_event(run.id, "step_started", {"step": 1})
    assert (a.seq, b.seq, c.seq) == (1, 1, 2)
    assert store.list_events(run.id) == [a, c]
    assert store.last_event_seq(run.id) == 2 and store.last_event_seq(other.id) == 1
    assert (
        store.last_event_seqs([run.id, other.id, "run_none"]) == {run.id: 2, other.id: 1}
        and store.last_event_seqs([]) == {}
    )
    assert store.list_events(run.id, after_seq=1) == [c]
    assert store.list_events(run.id, after_seq=2) == []


def test_a_step_stores_its_events_under_their_numbers(store):
    run = new_run(store)
    store.append_event(run.id, "run_started", {})
    rows = [EventRow(2, "step_started", {"step": 1}, "t1"), EventRow(3, "tool_called", {"tool": "x"}, "t2")]
    store.save_step(run.id, checkpoint=(1, 0, ['"a"']), events=rows)
    # Events written as (type, data, ts), as callers did before events were numbered, are numbered by the store.
    store.save_step(run.id, checkpoint=None, events=[("tool_returned", {"ok": True}, "t3"), ("model_text", {}, "t4")])
    stored = store.list_events(run.id)
    assert [(e.seq, e.type, e.ts) for e in stored] == [
        (1, "run_started", stored[0].ts),
        (2, "step_started", "t1"),
        (3, "tool_called", "t2"),
        (4, "tool_returned", "t3"),
        (5, "model_text", "t4"),
    ]
    assert store.append_event(run.id, "run_ended", {}, seq=6).seq == 6


def test_an_event_number_taken_already_is_a_conflict_and_writes_nothing(store):
    run = new_run(store)
    store.append_event(run.id, "run_started", {})
    with pytest.raises(ConflictError) as info:
        store.append_event(run.id, "again", {}, seq=1)
    assert "last_event_seq" in str(info.value)
    with pytest.raises(ConflictError):
        store.save_step(run.id, checkpoint=(1, 0, ['"a"']), events=[EventRow(1, "again", {}, "t")])
    assert store.load_checkpoint(run.id) is None  # the step's transaction wrote nothing
    assert [e.type for e in store.list_events(run.id)] == ["run_started"]


def test_two_writers_number_one_runs_events_without_gaps_or_repeats(store_url):
    one, two = Store(store_url), Store(store_url)
    try:
        run = new_run(one)

        def write(store: Store, name: str) -> None:
            for i in range(15):
                store.append_event(run.id, name, {"i": i})

        threads = [threading.Thread(target=write, args=(s, n)) for s, n in ((one, "one"), (two, "two"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        events = one.list_events(run.id)
        assert [e.seq for e in events] == list(range(1, 31))
        assert sorted(e.data["i"] for e in events if e.type == "one") == list(range(15))
    finally:
        one.close()
        two.close()
