"""One run life cycle on record: the agent a run ran, instructions evaluated per run, events numbered 1..n in each
run (listeners hear the numbers the store keeps, across pauses, answers given in other processes and resumes), and
an answer that reads its ask once."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from consulta.asks import question_tool
from consulta.runtime import Agent, AskStatus, ConfigError, ConflictError, Event, RunRecord, RunStatus, Store

from ._support import CELL_LINE_Q, RecordingModel, ask, call, calls, lookup, run_to_settle, say, settle

pytestmark = pytest.mark.anyio


def asking_agent(**kw: Any) -> Agent:
    kw.setdefault("instructions", "Be brief.")
    return Agent(app="toy", tools=(lookup, question_tool()), **kw)


def heard_by(rt) -> list[Event]:  # noqa: ANN001
    heard: list[Event] = []
    rt.subscribe(heard.append)
    return heard


def stored(store: Store, run_id: str) -> list[tuple[int, str]]:
    return [(e.seq, e.type) for e in store.list_events(run_id)]


def numbered(heard: list[Event], run_id: str) -> list[tuple[int, str]]:
    """The run's recorded events as heard (drafts of the reply are heard but neither numbered nor stored)."""
    return [(e.seq, e.type) for e in heard if e.run_id == run_id and e.type != "text_delta"]


# ---- the agent a run ran ---------------------------------------------------------------------------------------


async def test_a_resumed_run_comes_back_as_the_agent_it_recorded(store, make_runtime):
    steps = [ask(CELL_LINE_Q), say("done")]
    first = make_runtime(RecordingModel(steps))
    run = await run_to_settle(first, asking_agent(name="assistant"))
    assert run.status == RunStatus.waiting and run.agent == "assistant"
    await first.aclose()

    second = make_runtime(RecordingModel(steps))
    heard = heard_by(second)
    with pytest.raises(ConfigError, match="assistant"):  # another agent of the app may not take it up
        await second.resume(run.id, asking_agent(name="orchestrator"))
    assert store.get_run(run.id).status == RunStatus.waiting and not second.is_running_here(run.id)
    await second.resume(run.id, asking_agent(name="assistant"))
    (started,) = [e for e in heard if e.type == "run_started"]
    assert started.resumed and started.agent == "assistant"
    second.answer(store.list_asks(run_id=run.id)[0].id, ["K562-dTAG"])
    done = await settle(second, run.id)
    assert (done.status, done.agent) == (RunStatus.finished, "assistant")


# ---- instructions per run --------------------------------------------------------------------------------------


async def test_instructions_are_evaluated_once_per_run_and_the_same_at_every_step(store, make_runtime):
    seen: list[str] = []

    def instructions(run: RunRecord) -> str:
        seen.append(run.id)
        return f"Today is day {len(seen)}. Run {run.id}."

    model = RecordingModel([calls(call("lookup", {"name": "a"})), say("done")])  # each run: a tool step, then the reply
    rt = make_runtime(model)
    agent = Agent(app="toy", instructions=instructions, tools=(lookup,))
    first = await run_to_settle(rt, agent)
    second = await run_to_settle(rt, agent)
    assert (first.output, second.output) == ("done", "done")
    assert seen == [first.id, second.id]  # once per run, not once per step
    told = [info.instructions for info in model.infos]
    assert told == [f"Today is day 1. Run {first.id}."] * 2 + [f"Today is day 2. Run {second.id}."] * 2


async def test_instructions_that_fail_end_the_run_failed_with_the_reason(store, make_runtime):
    def instructions(run: RunRecord) -> str:
        raise KeyError("no date for this run")

    run = await run_to_settle(
        make_runtime(RecordingModel([say("never")])), Agent(app="toy", instructions=instructions, tools=(lookup,))
    )
    assert run.status == RunStatus.failed and "no date for this run" in (run.error or "")
    assert [t for _, t in stored(store, run.id)] == ["run_started", "run_ended"]


# ---- events numbered per run -----------------------------------------------------------------------------------


async def test_events_are_numbered_one_to_n_per_run_and_listeners_hear_the_stored_numbers(store, make_runtime):
    rt = make_runtime(RecordingModel([calls(call("lookup", {"name": "a"})), say("one"), say("two")]))
    heard = heard_by(rt)
    agent = Agent(app="toy", instructions="x", tools=(lookup,))
    first = await run_to_settle(rt, agent)
    second = await run_to_settle(rt, agent)
    for run in (first, second):
        on_record = stored(store, run.id)
        assert [seq for seq, _ in on_record] == list(range(1, len(on_record) + 1))
        assert numbered(heard, run.id) == on_record
        assert on_record[0][1] == "run_started" and on_record[-1][1] == "run_ended"


async def test_numbering_continues_across_a_pause_an_answer_given_elsewhere_and_a_resume(store, make_runtime):
    steps = [calls(call("lookup", {"name": "K562"})), ask(CELL_LINE_Q), ask(CELL_LINE_Q, id="q2"), say("done")]
    first = make_runtime(RecordingModel(steps))
    heard_first = heard_by(first)
    agent = asking_agent()
    run = await run_to_settle(first, agent)
    assert run.status == RunStatus.waiting

    other_store = Store(store.url)  # another process answers the first question; the run here continues
    try:
        elsewhere = make_runtime(RecordingModel([]), on=other_store)
        elsewhere.register(agent)
        elsewhere.answer(store.list_asks(run_id=run.id)[0].id, ["K562-dTAG"])
        with anyio.fail_after(10):
            while len(store.list_asks(status=None, run_id=run.id)) < 2:
                await anyio.sleep(0.02)
    finally:
        other_store.close()
    await settle(first, run.id)
    await first.aclose()  # the first process is gone with the second question pending

    second = make_runtime(RecordingModel(steps[3:]))
    heard_second = heard_by(second)
    await second.resume(run.id, agent)
    second.answer(store.list_asks(run_id=run.id)[0].id, ["K562"])
    assert (await settle(second, run.id)).status == RunStatus.finished

    on_record = stored(store, run.id)
    assert [seq for seq, _ in on_record] == list(range(1, len(on_record) + 1))
    types = [t for _, t in on_record]
    assert types.count("ask_closed") == 2 and types.count("run_started") == 2 and types[-1] == "run_ended"
    # Each process's listeners heard the numbers the store keeps (the first one also the answer given elsewhere).
    assert numbered(heard_first, run.id) == on_record[: len(numbered(heard_first, run.id))]
    assert "ask_closed" in [t for _, t in numbered(heard_first, run.id)]
    assert numbered(heard_second, run.id) == on_record[-len(numbered(heard_second, run.id)) :]


# ---- an answer reads its ask once ------------------------------------------------------------------------------


class CountingStore:
    """The store, counting the runtime's calls of each method (the store's own internal calls are not counted)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not callable(value):
            return value

        def counted(*args: Any, **kw: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return value(*args, **kw)

        return counted


async def test_an_answer_reads_the_ask_once_and_a_closed_ask_is_a_conflict(store, make_runtime):
    counting = CountingStore(store)
    rt = make_runtime(RecordingModel([ask(CELL_LINE_Q), say("done")]), on=counting)
    run = await run_to_settle(rt, asking_agent())
    (pending,) = store.list_asks(run_id=run.id)

    counting.calls.clear()
    rt.answer(pending.id, ["K562-dTAG"])
    assert counting.calls.get("get_ask") == 1 and counting.calls.get("close_ask") == 1

    counting.calls.clear()
    with pytest.raises(ConflictError, match="already answered"):
        rt.answer(pending.id, ["K562"])
    assert counting.calls == {"get_ask": 1}  # read once, nothing written
    with pytest.raises(
        ConflictError
    ):  # given the (stale) record the caller read: no read, the conditional close refuses
        rt.answer(pending, ["K562"])
    assert counting.calls == {"get_ask": 1, "close_ask": 1}
    assert store.get_ask(pending.id).answer == ["K562-dTAG"]
    assert (await settle(rt, run.id)).status == RunStatus.finished
    assert store.get_ask(pending.id).status == AskStatus.answered


async def test_a_run_driven_from_outside_is_recorded_by_the_same_log_numbered_by_the_store(store, make_runtime):
    """An MCP client's session: a run this process does not advance, written by its session and by the runtime's ask
    API alike; every event numbered once, in order, as listeners heard it."""
    rt = make_runtime(RecordingModel([]))
    agent = asking_agent(name="assistant")
    rt.register(agent)
    heard = heard_by(rt)
    log = rt.recorder.create(
        agent="assistant", app="toy", prompt="(MCP session)", model="mcp:client", lang="en", held=False
    )
    log.call_started("c1", "lookup", {"name": "a"})
    log.call_returned(
        step=1,
        tool_call_id="c1",
        tool_name="lookup",
        args={"name": "a"},
        result={"ok": True},
        started_at="t",
        duration_ms=1.0,
    )
    ask = log.open_ask(kind="question", payload={"questions": [CELL_LINE_Q]}, tool_call_id="c2", timeout_s=5)
    rt.cancel_ask(
        ask,
        status=AskStatus.timed_out,
        answered_by="timeout",
        outcome=lambda kind, payload: kind.timeout_result(payload),
    )
    log.end(RunStatus.finished)
    on_record = stored(store, log.run.id)
    assert on_record == list(
        enumerate(["run_started", "tool_called", "tool_returned", "ask_opened", "ask_closed", "run_ended"], start=1)
    )
    assert numbered(heard, log.run.id) == on_record
    run = store.get_run(log.run.id)
    assert (run.status, run.agent) == (RunStatus.finished, "assistant")
    assert store.get_ask(ask.id).outcome["error_code"] == "question_timeout"
    assert [c.tool_call_id for c in store.list_tool_calls(run.id)] == ["c1"]
