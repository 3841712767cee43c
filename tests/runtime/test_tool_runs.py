"""Tool calls through full runs: unknown tools, invalid arguments, tool errors, the step limit, events, schemas."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from consulta.asks import question_tool
from consulta.runtime import (
    Agent,
    AskClosed,
    AskOpened,
    ConfigError,
    Fallback,
    NotFoundError,
    RunEnded,
    RunStarted,
    RunStatus,
    Timeout,
    ToolCalled,
    ToolError,
    ToolReturned,
    read_tool,
    tool_schemas,
    write_tool,
)

from ._support import (
    CELL_LINE_Q,
    FakeExecutor,
    RecordingModel,
    ask,
    call,
    calls,
    checkpoint_messages,
    lookup,
    results_for,
    run_to_settle,
    say,
    seen_by_model,
    settle,
    tool_returns,
)

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]


@read_tool
def count(n: int, label: str = "tubes") -> dict:
    """Count things.

    Args:
        n: How many.
        label: What they are.
    """
    return {"ok": True, "text": f"{n} {label}"}


@read_tool
def broken(name: str) -> dict:
    """Always fails."""
    raise KeyError(name)


@read_tool
def refuses(box: int) -> dict:
    """Refuses with a ToolError."""
    raise ToolError("box_not_found", f"Box {box} does not exist.", hint="List the boxes first.", field="box")


class Found(BaseModel):
    ok: bool = True
    ids: list[int]
    note: str | None = None


def toy_agent(*tools, **kw) -> Agent:
    return Agent(app="toy", instructions="Be brief.", tools=tools or (lookup, count, question_tool()), **kw)


# ---- unknown tools ---------------------------------------------------------------------------------------------


async def test_unknown_tool_is_reported_in_the_seeds_shape(store, make_runtime):
    model = RecordingModel([calls(call("thaw_everything", {"all": True}, id="u1")), say("Sorry.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert (run.status, run.output) == (RunStatus.finished, "Sorry.")
    assert seen_by_model(model, "thaw_everything") == [
        {
            "ok": False,
            "error_code": "unknown_tool",
            "message": "Unknown tool: thaw_everything",
            "_hint": "Choose action from available tools: lookup, count, question.",
        }
    ]


async def test_unknown_tool_called_many_times_does_not_crash_the_run(store, make_runtime):
    steps = [calls(call("nope", {}, id=f"u{i}")) for i in range(6)] + [say("gave up")]
    model = RecordingModel(steps)
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert (run.status, run.output, run.error) == (RunStatus.finished, "gave up", None)
    seen = seen_by_model(model, "nope")
    assert len(seen) == 6
    assert all(r["error_code"] == "unknown_tool" for r in seen)


async def test_unknown_tool_next_to_a_real_one(store, make_runtime):
    model = RecordingModel([calls(call("nope", {}, id="u1"), call("lookup", {"name": "K562"}, id="r1")), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "lookup") == [{"ok": True, "found": ["K562-a", "K562-b"]}]
    assert seen_by_model(model, "nope")[0]["error_code"] == "unknown_tool"


async def test_unknown_tool_call_is_recorded(store, make_runtime):
    rt = make_runtime(RecordingModel([calls(call("nope", {}, id="u1")), say("ok")]))
    run = await run_to_settle(rt, toy_agent())
    assert [(r.tool_name, r.ok, r.error_code) for r in store.list_tool_calls(run.id)] == [
        ("nope", False, "unknown_tool")
    ]


# ---- invalid arguments -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"n": "many"}, "n", "valid integer"),
        ({"label": "tubes"}, "n", "Field required"),
        ({"n": 3, "colour": "red"}, "colour", "Extra inputs are not permitted"),
        ({"n": 3, "label": 7}, "label", "valid string"),
    ],
)
async def test_invalid_arguments_name_the_field(store, make_runtime, args, field, problem):
    model = RecordingModel([calls(call("count", args, id="c1")), say("fixed")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished
    [seen] = seen_by_model(model, "count")
    assert seen["ok"] is False
    assert seen["error_code"] == "invalid_arguments"
    assert seen["field"] == field
    assert problem in seen["message"]
    assert seen["message"].startswith(f"Invalid arguments for count: {field}:")
    assert "_hint" in seen
    [record] = store.list_tool_calls(run.id)
    assert (record.tool_name, record.tool_call_id, record.ok, record.error_code) == (
        "count",
        "c1",
        False,
        "invalid_arguments",
    )
    assert record.args == args
    assert record.result["field"] == field


async def test_invalid_then_valid_call(store, make_runtime):
    model = RecordingModel(
        [calls(call("count", {"n": "x"}, id="c1")), calls(call("count", {"n": 2}, id="c2")), say("2 tubes")]
    )
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent())
    assert (run.status, run.output) == (RunStatus.finished, "2 tubes")
    assert [(r.ok, r.error_code) for r in store.list_tool_calls(run.id)] == [(False, "invalid_arguments"), (True, None)]
    assert results_for(store, run.id, "count")[-1] == {"ok": True, "text": "2 tubes"}


# ---- tool failures ---------------------------------------------------------------------------------------------


async def test_unexpected_exception_becomes_tool_exception(store, make_runtime):
    model = RecordingModel(
        [
            calls(call("broken", {"name": "K562"}, id="b1")),
            calls(call("lookup", {"name": "x"}, id="r1")),
            say("went on"),
        ]
    )
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(broken, lookup))
    assert (run.status, run.output) == (RunStatus.finished, "went on")
    [seen] = seen_by_model(model, "broken")
    assert seen["ok"] is False
    assert seen["error_code"] == "tool_exception"
    assert seen["message"] == "broken failed: KeyError: 'K562'"
    assert [(r.tool_name, r.ok, r.error_code) for r in store.list_tool_calls(run.id)] == [
        ("broken", False, "tool_exception"),
        ("lookup", True, None),
    ]


async def test_tool_error_reaches_the_model_with_its_code(store, make_runtime):
    model = RecordingModel([calls(call("refuses", {"box": 9}, id="e1")), say("No box 9.")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(refuses))
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "refuses") == [
        {
            "ok": False,
            "error_code": "box_not_found",
            "message": "Box 9 does not exist.",
            "field": "box",
            "_hint": "List the boxes first.",
        }
    ]
    [record] = store.list_tool_calls(run.id)
    assert (record.ok, record.error_code) == (False, "box_not_found")


async def test_policies_apply_inside_a_run(store, make_runtime):
    async def hangs(name: str) -> dict:
        """Hangs."""
        await anyio.sleep(30)
        return {"ok": True}

    slow = read_tool(hangs, name="slow", policies=[Timeout(seconds=0.05)])
    covered = read_tool(
        hangs, name="covered", policies=[Fallback(value={"ok": True, "items": []}), Timeout(seconds=0.05)]
    )
    model = RecordingModel(
        [calls(call("slow", {"name": "a"}, id="s1")), calls(call("covered", {"name": "a"}, id="s2")), say("ok")]
    )
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(slow, covered))
    assert run.status == RunStatus.finished
    assert seen_by_model(model, "slow")[0]["error_code"] == "tool_timeout"
    assert seen_by_model(model, "covered") == [{"ok": True, "items": [], "_fallback": True}]


async def test_pydantic_results_are_dumped_to_json(store, make_runtime):
    def find(name: str) -> Found:
        """Find."""
        return Found(ids=[1, 2])

    model = RecordingModel([calls(call("find", {"name": "x"}, id="f1")), say("ok")])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(read_tool(find)))
    assert run.status == RunStatus.finished, run.error
    assert seen_by_model(model, "find") == [{"ok": True, "ids": [1, 2]}]
    assert store.list_tool_calls(run.id)[0].result == {"ok": True, "ids": [1, 2]}


# ---- the step limit and other failures -------------------------------------------------------------------------


async def test_step_limit_fails_the_run_with_a_readable_error(store, make_runtime):
    model = RecordingModel([calls(call("lookup", {"name": f"n{i}"}, id=f"r{i}")) for i in range(10)])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(max_steps=3))
    assert run.status == RunStatus.failed
    assert run.error.startswith("The run reached its step limit (3)")
    assert len(model.requests) == 3
    assert len(store.list_tool_calls(run.id)) == 3
    assert store.list_events(run.id)[-1].type == "run_ended"
    assert store.list_events(run.id)[-1].data["status"] == "failed"


async def test_step_limit_with_a_model_that_keeps_calling_unknown_tools(store, make_runtime):
    model = RecordingModel([calls(call("nope", {}, id=f"u{i}")) for i in range(10)])
    rt = make_runtime(model)
    run = await run_to_settle(rt, toy_agent(max_steps=3))
    assert run.status == RunStatus.failed
    assert "step limit (3)" in run.error


async def test_a_model_that_raises_fails_the_run_not_the_caller(store, make_runtime):
    def explode(messages, info):
        raise RuntimeError("backend unreachable")

    rt = make_runtime(FunctionModel(explode))
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.failed
    assert run.error == "RuntimeError: backend unreachable"
    ended = store.list_events(run.id)[-1]
    assert (ended.type, ended.data["status"], ended.data["error"]) == (
        "run_ended",
        "failed",
        "RuntimeError: backend unreachable",
    )


async def test_settled_of_an_unknown_run(store, make_runtime):
    rt = make_runtime(RecordingModel([]))
    with pytest.raises(NotFoundError):
        await rt.settled("run_nope")


# ---- events ----------------------------------------------------------------------------------------------------


async def test_events_reach_subscribers_in_order_and_are_stored(store, make_runtime):
    model = RecordingModel([calls(call("lookup", {"name": "K562"}, id="r1")), ask(CELL_LINE_Q), say("Done.")])
    rt = make_runtime(model)
    events: list[Any] = []
    rt.subscribe(events.append)
    run = await run_to_settle(rt, toy_agent())
    pending = store.list_asks(run_id=run.id)[0]
    rt.answer(pending.id, ["K562-dTAG"])
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished

    # The model "thinking": one step_started before each model request (3 here), in order.
    assert [e.step for e in events if e.type == "step_started"] == [1, 2, 3]
    assert [e.type for e in events].index("step_started") == 1  # right after run_started
    # The reply streamed as drafts before it came whole (drafts are heard, never stored).
    types = [e.type for e in events]
    drafts = [e for e in events if e.type == "text_delta"]
    assert "".join(d.text for d in drafts) == "Done." and all(d.seq == 0 for d in drafts)
    assert types.index("text_delta") < types.index("model_text")
    assert "text_delta" not in {r.type for r in store.list_events(run.id)}
    events = [e for e in events if e.type not in ("step_started", "text_delta")]
    types = [e.type for e in events]
    assert types == [
        "run_started",
        "tool_called",
        "tool_returned",
        "tool_called",
        "ask_opened",
        "ask_closed",
        "tool_returned",  # the question call's result: the answer, as the model receives it
        "model_text",
        "run_ended",
    ]
    assert all(e.run_id == run.id for e in events)
    started, called, returned, asked, opened, closed, answered, text, ended = events
    assert isinstance(started, RunStarted) and (started.app, started.prompt) == ("toy", "go")
    assert isinstance(called, ToolCalled) and (called.tool_name, called.tool_call_id, called.args) == (
        "lookup",
        "r1",
        {"name": "K562"},
    )
    assert isinstance(returned, ToolReturned) and (returned.tool_name, returned.ok) == ("lookup", True)
    assert returned.result == {"ok": True, "found": ["K562-a", "K562-b"]}
    assert isinstance(opened, AskOpened) and (opened.ask_id, opened.kind) == (pending.id, "question")
    assert opened.payload["questions"][0]["header"] == "Cell Line"
    assert isinstance(closed, AskClosed) and (closed.ask_id, closed.status, closed.answered_by) == (
        pending.id,
        "answered",
        "user",
    )
    assert isinstance(answered, ToolReturned) and (answered.tool_call_id, answered.tool_name, answered.ok) == (
        asked.tool_call_id,
        "question",
        True,
    )
    assert answered.result["result"]["raw_answers"] == ["K562-dTAG"] and answered.duration_ms >= 0
    assert text.text == "Done."
    assert isinstance(ended, RunEnded) and (ended.status, ended.output) == ("finished", "Done.")

    stored = [e for e in store.list_events(run.id) if e.type != "step_started"]
    assert [e.type for e in stored] == types  # stored in the order they were emitted
    assert stored[4].data["ask_id"] == pending.id
    assert stored[-1].data == {"status": "finished", "output": "Done.", "error": None}


async def test_failed_tool_gives_a_not_ok_tool_returned(store, make_runtime):
    rt = make_runtime(RecordingModel([calls(call("refuses", {"box": 1}, id="e1")), say("ok")]))
    events: list[Any] = []
    rt.subscribe(events.append)
    await run_to_settle(rt, toy_agent(refuses))
    [returned] = [e for e in events if e.type == "tool_returned"]
    assert (returned.ok, returned.result["error_code"]) == (False, "box_not_found")


async def test_unsubscribe(store, make_runtime):
    rt = make_runtime(RecordingModel([say("a"), say("b")]))
    got: list[Any] = []
    unsubscribe = rt.subscribe(got.append)
    await run_to_settle(rt, toy_agent())
    n = len(got)
    assert n > 0
    unsubscribe()
    await run_to_settle(rt, toy_agent())
    assert len(got) == n


# ---- conversations ---------------------------------------------------------------------------------------------


async def test_continue_from_keeps_the_thread_and_the_history(store, make_runtime):
    first_model = RecordingModel([calls(call("lookup", {"name": "K562"}, id="r1")), say("Two found.")])
    rt = make_runtime(first_model)
    first = await run_to_settle(rt, toy_agent(), "find K562")

    def reply(messages, info):
        return ModelResponse(parts=[TextPart(f"{len(messages)} messages so far")])

    rt2 = make_runtime(FunctionModel(reply))
    with anyio.fail_after(10):
        second = await rt2.run(toy_agent(), "and the second?", model="f", continue_from=first.id)
    assert second.thread_id == first.id
    assert second.parent_run_id == first.id
    assert second.status == RunStatus.finished
    # A new turn carries the earlier ones as words only: prompt, answer, new prompt. The tool traffic stays on record.
    assert second.output == "3 messages so far"
    assert tool_returns(checkpoint_messages(store, second.id), "lookup") == []
    assert [r for _, _, r in tool_returns(checkpoint_messages(store, first.id), "lookup")] == [
        {"ok": True, "found": ["K562-a", "K562-b"]}
    ]


# ---- agent definitions and schemas -----------------------------------------------------------------------------


def test_tool_schemas_in_openai_function_format():
    schemas = tool_schemas(toy_agent())
    assert [s["function"]["name"] for s in schemas] == ["lookup", "count", "question"]
    assert [s["x-consulta-kind"] for s in schemas] == ["read", "read", "ask"]
    assert all(s["type"] == "function" for s in schemas)
    count_fn = schemas[1]["function"]
    assert count_fn["description"] == "Count things."
    assert count_fn["parameters"]["type"] == "object"
    assert count_fn["parameters"]["required"] == ["n"]
    assert count_fn["parameters"]["properties"]["n"] == {"description": "How many.", "type": "integer"}
    assert count_fn["parameters"]["properties"]["label"]["default"] == "tubes"
    q = schemas[2]["function"]
    assert q["parameters"]["required"] == ["questions"]
    assert q["parameters"]["properties"]["questions"]["items"]["required"] == ["header", "question"]


async def test_the_model_is_offered_the_same_tools(store, make_runtime):
    model = RecordingModel([say("hi")])
    rt = make_runtime(model)
    await run_to_settle(rt, toy_agent())
    offered = {t.name: t for t in model.infos[0].function_tools}
    assert set(offered) == {"lookup", "count", "question"}
    assert offered["question"].parameters_json_schema["required"] == ["questions"]
    assert "Do not call question in parallel" in offered["question"].description
    assert offered["count"].parameters_json_schema["required"] == ["n"]
    assert model.infos[0].instructions == "Be brief."


def test_agent_rejects_duplicate_tool_names_and_writes_without_executor():
    with pytest.raises(ConfigError, match="duplicate tool names"):
        Agent(app="t", instructions="x", tools=(lookup, lookup))

    @write_tool
    def rename(name: str) -> dict:
        """Rename."""
        return {"op": "rename", "name": name}

    with pytest.raises(ConfigError, match="no plan executor"):
        Agent(app="t", instructions="x", tools=(rename,))
    agent = Agent(app="t", instructions="x", tools=(rename, question_tool()), executor=FakeExecutor())
    assert agent.tool("rename").kind == "write"
    assert agent.tool("nope") is None
    assert agent.ask_kind("question").name == "question"
    with pytest.raises(ConfigError):
        agent.ask_kind("plan")
