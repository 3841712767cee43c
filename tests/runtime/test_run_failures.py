"""A failure inside a run's step fails the run, never hangs it: a store that raises (on a checkpoint, on opening an
ask, on a status, on the end), a listener that raises. `Runtime.run` returns (bounded: a liveness check, not a
timing one) with the run `failed` and the reason, and the next run on the same runtime works."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from pydantic_ai import (
    ModelAuthenticationError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.asks import question_tool
from consulta.runtime import Agent, AskStatus, ConfigError, ListenerError, RunStatus, Runtime, Store
from consulta.runtime._events import Event

from ._support import CELL_LINE_Q, SETTLE_LIMIT, RecordingModel, ask, call, calls, lookup, say

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]

TOOL_STEP = [calls(call("lookup", {"name": "K562"})), say("Found it.")]


class DiskFull(Exception):
    """What the failing store raises."""


def _failing(method: str) -> Any:
    """`Store.<method>`, raising first while the store has failures of it in store."""

    def call(self: FailingStore, *args: Any, **kwargs: Any) -> Any:
        if self.failures[method] > 0:
            self.failures[method] -= 1
            raise DiskFull(f"{method}: the disk is full")
        return getattr(Store, method)(self, *args, **kwargs)

    return call


class FailingStore(Store):
    """A store whose named methods raise `DiskFull` the next `times` calls (then work again)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.failures: Counter[str] = Counter()

    def fail(self, method: str, times: int = 1) -> None:
        self.failures[method] += times

    save_step = _failing("save_step")
    create_ask = _failing("create_ask")
    set_run_status = _failing("set_run_status")
    close_ask = _failing("close_ask")


@pytest.fixture
def failing(store_url: str):
    s = FailingStore(store_url)
    yield s
    s.close()


def toy_agent(**kw: Any) -> Agent:
    return Agent(app="toy", instructions="Be brief.", tools=(lookup, question_tool()), **kw)


async def run_bounded(runtime, agent: Agent, prompt: str = "go"):
    return await asyncio.wait_for(runtime.run(agent, prompt, model="scripted"), SETTLE_LIMIT)


async def test_a_store_error_on_a_step_checkpoint_fails_the_run_and_the_next_run_works(make_runtime, failing):
    runtime = make_runtime(RecordingModel(TOOL_STEP), on=failing)
    failing.fail("save_step")
    run = await run_bounded(runtime, toy_agent())
    assert run.status == RunStatus.failed
    assert "DiskFull" in run.error and "the disk is full" in run.error
    assert failing.get_run(run.id).status == RunStatus.failed
    assert [e.type for e in failing.list_events(run.id)][-1] == "run_ended"
    assert not runtime.is_running_here(run.id)

    again = await run_bounded(runtime, toy_agent())
    assert (again.status, again.output) == (RunStatus.finished, "Found it.")


async def test_a_store_error_at_the_end_of_a_run_fails_it(make_runtime, failing):
    """A run with no tool step writes its first checkpoint with its end: that write fails, the end is written failed."""
    runtime = make_runtime(RecordingModel([say("Hello.")]), on=failing)
    failing.fail("save_step")
    run = await run_bounded(runtime, toy_agent())
    assert run.status == RunStatus.failed and "the disk is full" in run.error
    stored = failing.get_run(run.id)
    assert (stored.status, stored.error, stored.owner) == (RunStatus.failed, run.error, None)
    ended = [e for e in failing.list_events(run.id) if e.type == "run_ended"]
    assert len(ended) == 1 and ended[0].data["status"] == "failed"

    again = await run_bounded(runtime, toy_agent())
    assert (again.status, again.output) == (RunStatus.finished, "Hello.")


async def test_a_store_error_on_opening_an_ask_fails_the_run(make_runtime, failing):
    runtime = make_runtime(RecordingModel([ask(CELL_LINE_Q)]), on=failing)
    failing.fail("create_ask")
    run = await run_bounded(runtime, toy_agent())
    assert run.status == RunStatus.failed and "create_ask: the disk is full" in run.error
    assert failing.list_asks(status=None, run_id=run.id) == []

    again = await run_bounded(runtime, toy_agent())
    assert again.status == RunStatus.waiting
    [pending] = failing.list_asks(status=AskStatus.pending, run_id=again.id)
    assert pending.kind == "question"


async def test_a_store_error_on_the_waiting_status_fails_the_run_and_cancels_its_ask(make_runtime, failing):
    runtime = make_runtime(RecordingModel([ask(CELL_LINE_Q)]), on=failing)
    failing.fail("set_run_status")
    run = await run_bounded(runtime, toy_agent())
    assert run.status == RunStatus.failed and "set_run_status: the disk is full" in run.error
    [opened] = failing.list_asks(status=None, run_id=run.id)
    assert opened.status == AskStatus.cancelled  # nobody is left asked a question of a failed run

    again = await run_bounded(runtime, toy_agent())
    assert again.status == RunStatus.waiting


async def test_a_store_error_when_an_answer_continues_the_run_fails_it(make_runtime, failing):
    runtime = make_runtime(RecordingModel([ask(CELL_LINE_Q), say("K562 it is.")]), on=failing)
    run = await run_bounded(runtime, toy_agent())
    [pending] = failing.list_asks(status=AskStatus.pending, run_id=run.id)
    failing.fail("set_run_status")
    runtime.answer(pending.id, ["K562"])  # the answer stands; continuing the run meets the error
    settled = await asyncio.wait_for(runtime.settled(run.id), SETTLE_LIMIT)
    assert settled.status == RunStatus.failed and "the disk is full" in settled.error
    assert failing.get_ask(pending.id).status == AskStatus.answered


async def test_a_store_error_when_an_ask_times_out_fails_the_run_waiting_on_it(make_runtime, failing):
    runtime = make_runtime(RecordingModel([ask(CELL_LINE_Q), say("Never mind.")]), on=failing, ask_policy="wait")
    failing.fail("close_ask")  # the timeout's closing fails; the run must not wait on the ask for ever
    run = await run_bounded(runtime, toy_agent(question_timeout=0.1))
    assert run.status == RunStatus.failed and "close_ask: the disk is full" in run.error
    [opened] = failing.list_asks(status=None, run_id=run.id)
    assert opened.status == AskStatus.cancelled


async def test_when_the_store_cannot_even_record_the_failure_the_waiters_get_its_error(make_runtime, failing):
    runtime = make_runtime(RecordingModel(TOOL_STEP), on=failing)
    failing.fail("save_step", times=3)  # the step, its end as failed, and nothing else to try
    with pytest.raises(DiskFull):
        await run_bounded(runtime, toy_agent())
    [run] = failing.list_runs()
    assert not runtime.is_running_here(run.id)
    assert failing.get_run(run.id).status == RunStatus.running  # as it stands: a restart takes it up

    again = await run_bounded(runtime, toy_agent())
    assert again.status == RunStatus.finished


async def test_a_listener_that_raises_fails_the_run_and_the_next_run_works(make_runtime, store):
    runtime = make_runtime(RecordingModel(TOOL_STEP))
    heard: list[str] = []
    bugs = Counter(tool_called=1)

    def listener(event: Event) -> None:
        heard.append(event.type)
        if bugs[event.type] > 0:
            bugs[event.type] -= 1
            raise RuntimeError("the listener's bug")

    def second(event: Event) -> None:
        heard.append(f"second:{event.type}")

    runtime.subscribe(listener)
    runtime.subscribe(second)
    run = await run_bounded(runtime, toy_agent())
    assert run.status == RunStatus.failed
    assert (
        "A listener of the runtime's events" in run.error
        and "the listener's bug" in run.error
        and "tool_called" in run.error
    )
    assert "second:tool_called" in heard  # the other listeners heard the event all the same
    assert heard[-1] == "second:run_ended"
    assert store.get_run(run.id).status == RunStatus.failed

    heard.clear()
    again = await run_bounded(runtime, toy_agent())
    assert (again.status, again.output) == (RunStatus.finished, "Found it.")


async def test_a_listener_that_raises_on_every_event_fails_the_start_and_the_run(make_runtime, store):
    runtime = make_runtime(RecordingModel(TOOL_STEP))

    def listener(event: Event) -> None:
        raise RuntimeError("always")

    unsubscribe = runtime.subscribe(listener)
    with pytest.raises(ListenerError, match="run_started"):
        await run_bounded(runtime, toy_agent())
    [run] = store.list_runs()
    assert (run.status, run.owner) == (RunStatus.failed, None)
    assert "always" in run.error

    unsubscribe()
    again = await run_bounded(runtime, toy_agent())
    assert again.status == RunStatus.finished


async def test_a_listener_that_raises_on_an_answer_does_not_stop_the_run(make_runtime, store):
    runtime = make_runtime(RecordingModel([ask(CELL_LINE_Q), say("K562 it is.")]))
    run = await run_bounded(runtime, toy_agent())
    [pending] = store.list_asks(status=AskStatus.pending, run_id=run.id)

    def listener(event: Event) -> None:
        if event.type == "ask_closed":
            raise RuntimeError("the listener's bug")

    runtime.subscribe(listener)
    runtime.answer(pending.id, ["K562"])  # recorded: the answerer is not told of a listener's bug
    settled = await asyncio.wait_for(runtime.settled(run.id), SETTLE_LIMIT)
    assert (settled.status, settled.output) == (RunStatus.finished, "K562 it is.")


@pytest.mark.parametrize(
    ("category", "status", "prompt", "says"),
    [
        # seen through llama-cpp-python's server (heldout16 smoke, stop 41): the run ended with the provider's raw error
        (ModelContextWindowExceededError, 400, "Where are the K562 tubes?", "--n_ctx"),
        (ModelContextWindowExceededError, 400, "K562在哪里？", "上下文窗口"),
        (ModelAuthenticationError, 401, "Where are the K562 tubes?", "OPENAI_API_KEY"),
        (ModelRateLimitError, 429, "Where are the K562 tubes?", "rate limit"),
        (ModelServerError, 500, "K562在哪里？", "500"),
    ],
)
async def test_a_model_servers_failure_fails_the_run_with_one_readable_line(
    store: Store, category: Any, status: int, prompt: str, says: str
) -> None:
    """The model API's failures (pydantic-ai's categories) end the run with what went wrong and what to do, in the
    person's language: no exception's name, no provider body."""

    def refuse(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        body = {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}
        raise ModelHTTPError.for_category(category, status_code=status, model_name="embedded", body=body)

    runtime = Runtime(store=store, resolve_model=lambda _: FunctionModel(refuse))
    try:
        run = await runtime.run(Agent(app="t", instructions="Answer.", tools=()), prompt, model="scripted")
    finally:
        await runtime.aclose()
    assert run.status == RunStatus.failed and run.error is not None
    assert says in run.error and "embedded" in run.error and "\n" not in run.error
    assert "Error" not in run.error and "8192" not in run.error


async def test_a_model_servers_missing_feature_fails_the_run_with_the_backends_own_line(store: Store) -> None:
    """The OpenAI-compatible backend's line for what a server lacks (a `ConfigError`) is the run's reason as it is,
    without an exception's name before it."""
    said = "Cannot reach the model server at http://127.0.0.1:9/v1 (refused). Start it, or set OPENAI_BASE_URL."

    def unreachable(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConfigError(said)

    runtime = Runtime(store=store, resolve_model=lambda _: FunctionModel(unreachable))
    try:
        run = await runtime.run(Agent(app="t", instructions="Answer.", tools=()), "Any K562?", model="scripted")
    finally:
        await runtime.aclose()
    assert run.status == RunStatus.failed and run.error == said
