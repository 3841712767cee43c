"""Traces: runs, steps, tool calls, asks and consultations as OpenTelemetry spans in the run's own trace, built from
the runtime's events (an in-memory exporter stands in for the collector); the `CONSULTA_TRACES` setting."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from consulta.asks import CONSULT_EXPERT_TOOL_NAME, Consultant, Expert, RuleBook, consult_expert_tool, question_tool
from consulta.models import ScriptedModel
from consulta.runtime import (
    PLAN_ASK,
    Agent,
    AskStatus,
    ConfigError,
    RunEnded,
    RunStarted,
    RunStatus,
    Store,
    ToolCalled,
    ToolError,
    ToolReturned,
    Tracing,
    read_tool,
    tracing_from_setting,
    write_tool,
)
from consulta.runtime._tracing._provider import CONSULTATION_TOOL

from ._support import CELL_LINE_Q, FakeExecutor, RecordingModel, ask, call, calls, lookup, run_to_settle, say, settle

pytestmark = pytest.mark.anyio


@read_tool
def find_box(label: str) -> dict:
    """Find a box by its label."""
    raise ToolError("box_not_found", f"No box labelled {label}.", hint="List the boxes first.")


@write_tool
def rename(name: str) -> dict:
    """Rename the thing."""
    return {"op": "rename", "name": name}


def toy_agent() -> Agent:
    return Agent(app="toy", instructions="Be brief.", tools=(lookup, find_box, question_tool()))


@pytest.fixture
def exported() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracing(exported: InMemorySpanExporter) -> Iterator[Tracing]:
    traced = Tracing(exporter=exported, batch=False)
    yield traced
    traced.shutdown()


class Tree:
    """The finished spans, with their parents."""

    def __init__(self, spans: tuple[ReadableSpan, ...]) -> None:
        self.spans = list(spans)
        self._by_id = {s.context.span_id: s for s in self.spans}

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans]
        return found[0]

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        return self._by_id.get(span.parent.span_id) if span.parent is not None else None

    def trace_ids(self) -> set[str]:
        return {f"{s.context.trace_id:032x}" for s in self.spans}


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


# ---- one run, one trace ----------------------------------------------------------------------------------------


async def test_a_run_is_one_trace_of_run_step_tool_and_ask_spans(store, make_runtime, tracing, exported) -> None:
    model = RecordingModel(
        [
            calls(call("lookup", {"name": "K562"}, id="r1"), call("find_box", {"label": "B7"}, id="r2")),
            ask(CELL_LINE_Q),
            say("You chose K562."),
        ]
    )
    rt = make_runtime(model)
    tracing.install(rt, store)
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.waiting
    assert not Tree(exported.get_finished_spans()).named("run toy")  # open while it waits on the person
    (pending,) = store.list_asks(run_id=run.id)
    rt.answer(pending.id, ["K562"], answered_by="alice")
    run = await settle(rt, run.id)
    assert run.status == RunStatus.finished

    tree = Tree(exported.get_finished_spans())
    assert tree.trace_ids() == {run.trace_id}  # the trace id IS the run's
    root = tree.one("run toy")
    assert root.parent is not None and root.parent.is_remote and root.parent.trace_id == int(run.trace_id, 16)
    assert attrs(root) == {
        "consulta.run_id": run.id,
        "consulta.app": "toy",
        "consulta.resumed": False,
        "consulta.model": "scripted",
        "consulta.run.status": "finished",
    }
    steps = {attrs(s)["consulta.step"]: s for s in tree.spans if s.name.startswith("step ")}
    assert sorted(steps) == [1, 2, 3] and all(tree.parent(s) is root for s in steps.values())

    looked_up, not_found, asked = tree.one("tool lookup"), tree.one("tool find_box"), tree.one("tool question")
    assert tree.parent(looked_up) is steps[1] and tree.parent(not_found) is steps[1] and tree.parent(asked) is steps[2]
    assert attrs(looked_up) == {
        "consulta.run_id": run.id,
        "consulta.app": "toy",
        "consulta.tool.name": "lookup",
        "consulta.tool_call_id": "r1",
        "consulta.tool.ok": True,
    }
    assert (attrs(not_found)["consulta.tool.ok"], attrs(not_found)["consulta.tool.error_code"]) == (
        False,
        "box_not_found",
    )
    assert not_found.status.status_code == StatusCode.ERROR

    question = tree.one("ask question")
    assert tree.parent(question) is asked  # the ask hangs under the call it paused
    assert attrs(question) == {
        "consulta.run_id": run.id,
        "consulta.app": "toy",
        "consulta.ask_id": pending.id,
        "consulta.ask.kind": "question",
        "consulta.ask.status": "answered",
        "consulta.ask.answered_by": "alice",
    }
    assert asked.start_time <= question.start_time and question.end_time <= asked.end_time <= root.end_time


async def test_a_failed_run_is_an_error_span(store, make_runtime, tracing, exported) -> None:
    rt = make_runtime(RecordingModel([calls(call("lookup", {"name": "a"}))] * 5))
    tracing.install(rt, store)
    run = await run_to_settle(rt, Agent(app="toy", instructions="x", tools=(lookup,), max_steps=2))
    assert run.status == RunStatus.failed
    root = Tree(exported.get_finished_spans()).one("run toy")
    assert attrs(root)["consulta.run.status"] == "failed"
    assert root.status.status_code == StatusCode.ERROR and "step limit" in (root.status.description or "")


async def test_plan_events_are_events_of_the_run_span(store, make_runtime, tracing, exported) -> None:
    agent = Agent(app="toy", instructions="x", tools=(rename,), executor=FakeExecutor())
    rt = make_runtime(RecordingModel([calls(call("rename", {"name": "alpha"}, id="w1")), say("Staged.")]))
    tracing.install(rt, store)
    run = await run_to_settle(rt, agent)
    (plan_ask,) = [a for a in store.list_asks(run_id=run.id) if a.kind == PLAN_ASK]
    rt.answer(plan_ask.id, "approve")
    assert (await settle(rt, run.id)).status == RunStatus.finished

    tree = Tree(exported.get_finished_spans())
    root = tree.one("run toy")
    assert [(e.name, dict(e.attributes or {}).get("consulta.plan.status")) for e in root.events] == [
        ("plan_staged", None),
        ("plan_decided", "applied"),
    ]
    assert tree.parent(tree.one("ask plan")) is root  # a plan's approval pauses no tool call


# ---- pydantic-ai's own spans -----------------------------------------------------------------------------------


async def test_pydantic_ai_spans_join_the_runs_trace_under_the_run_span(store, make_runtime, tracing, exported) -> None:
    rt = make_runtime(
        RecordingModel([calls(call("lookup", {"name": "K562"})), say("Found it.")]), tracing=tracing
    )  # engine instrumented too
    run = await run_to_settle(rt, toy_agent())
    assert run.status == RunStatus.finished

    tree = Tree(exported.get_finished_spans())
    assert tree.trace_ids() == {run.trace_id}
    root = tree.one("run toy")
    requests = [s for s in tree.spans if s.name.startswith("chat ")]
    assert len(requests) == 2
    for request in requests:
        ancestor = tree.parent(request)
        while ancestor is not None and ancestor is not root:
            ancestor = tree.parent(ancestor)
        assert ancestor is root, request.name


# ---- consultations and nested runs -----------------------------------------------------------------------------

CONSULT = {
    "expert_id": "concept_explainer",
    "question": "What does merge do?",
    "context": {"task_id": "task_2_1"},
    "expected_output_type": "concept_explanation",
    "scenario_id": "concept_clarification",
    "reasoning": "The student asked what merge means.",
}
EXPLAINED = {
    "concept_name": "merge",
    "definition": "Joins two tables on a key.",
    "simple_example": "a.merge(b, on='id')",
}


async def test_a_consultation_is_a_span_with_the_experts_run_in_the_same_trace(
    store, make_runtime, tracing, exported, tmp_path: Path
) -> None:
    model = ScriptedModel(
        {
            "agents": [
                {
                    "when": "You explain pandas concepts.",
                    "turns": [[{"tool_calls": [{"name": "final_result", "args": EXPLAINED}]}]],
                },
                {
                    "when": "Plan the session.",
                    "turns": [
                        [
                            {"tool_calls": [{"name": "consult_expert", "args": CONSULT, "id": "c1"}]},
                            {"text": "Packet ready."},
                        ]
                    ],
                },
            ]
        }
    )
    consultant = Consultant(
        store=store,
        experts=[
            Expert(
                expert_id="concept_explainer",
                role="You explain pandas concepts.",
                output_types=("concept_explanation",),
            )
        ],
        rules=RuleBook([]),
        resolve_model=lambda spec: model,
        model="scripted",
    )
    rt = make_runtime(model)
    tracing.install(rt, store)
    run = await run_to_settle(
        rt, Agent(app="tutor", instructions="Plan the session.", tools=(consult_expert_tool(consultant),))
    )
    assert run.status == RunStatus.finished, run.error
    (kept,) = store.list_consultations(run_id=run.id)

    tree = Tree(exported.get_finished_spans())
    assert tree.trace_ids() == {run.trace_id}  # the expert's run is in the orchestrator's trace
    consultation = tree.one("consultation concept_explainer")
    assert tree.parent(consultation) is tree.one("step 1")
    assert {
        k: attrs(consultation)[k]
        for k in (
            "consulta.consultation",
            "consulta.expert_id",
            "consulta.consultation_id",
            "consulta.expert_run_id",
            "consulta.tool.ok",
        )
    } == {
        "consulta.consultation": True,
        "consulta.expert_id": "concept_explainer",
        "consulta.consultation_id": kept.id,
        "consulta.expert_run_id": kept.expert_run_id,
        "consulta.tool.ok": True,
    }
    expert_run = tree.one("run expert:concept_explainer")
    assert tree.parent(expert_run) is consultation
    assert (attrs(expert_run)["consulta.run_id"], attrs(expert_run)["consulta.parent_run_id"]) == (
        kept.expert_run_id,
        run.id,
    )
    assert attrs(expert_run)["consulta.run.status"] == "finished"


def test_the_consultation_tool_is_the_asks_packages() -> None:
    assert CONSULTATION_TOOL == CONSULT_EXPERT_TOOL_NAME


class _Events:
    """A stand-in runtime for feeding events straight to the installed listener."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def subscribe(self, listener: Any) -> Any:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event: Any) -> None:
        for listener in list(self.listeners):
            listener(event)


def test_a_nested_run_told_by_its_events_hangs_under_its_parents_tool_call(store: Store, tracing, exported) -> None:
    """A nested run recorded like every run (its own RunStarted … RunEnded) hangs under the call that made it, once."""
    parent = store.create_run(app="tutor", prompt="go", model="m", lang="en")
    nested = store.create_run(
        app="expert:x", prompt="q", model="m", lang="en", parent_run_id=parent.id, trace_id=parent.trace_id
    )
    kept = store.record_consultation(
        status="done",
        started_at=nested.created_at,
        duration_ms=1.0,
        attempts=1,
        expert_id="x",
        request=CONSULT,
        run_id=parent.id,
        tool_call_id="c1",
        expert_run_id=nested.id,
        expert_output=EXPLAINED,
        binding_rules=[],
        instruction_updates={},
    )
    events = _Events()
    tracing.install(events, store)
    events.emit(RunStarted(run_id=parent.id, app="tutor", prompt="go"))
    events.emit(ToolCalled(run_id=parent.id, tool_call_id="c1", tool_name="consult_expert", args={"expert_id": "x"}))
    events.emit(RunStarted(run_id=nested.id, app="expert:x", prompt="q"))
    events.emit(RunEnded(run_id=nested.id, status="finished"))
    events.emit(
        ToolReturned(
            run_id=parent.id,
            tool_call_id="c1",
            tool_name="consult_expert",
            ok=True,
            result={"consultation_id": kept.id},
            duration_ms=3.0,
        )
    )
    events.emit(RunEnded(run_id=parent.id, status="finished"))

    tree = Tree(exported.get_finished_spans())
    assert tree.trace_ids() == {parent.trace_id}
    (expert_run,) = tree.named("run expert:x")  # drawn from its events, not again from the ledger
    assert tree.parent(expert_run) is tree.one("consultation x")
    assert "consulta.from_record" not in attrs(expert_run)


def test_a_continued_conversation_names_its_previous_run_but_keeps_its_own_trace(
    store: Store, tracing, exported
) -> None:
    first = store.create_run(app="toy", prompt="go", model="m", lang="en")
    second = store.create_run(
        app="toy", prompt="and then?", model="m", lang="en", parent_run_id=first.id, thread_id=first.thread_id
    )
    events = _Events()
    tracing.install(events, store)
    events.emit(RunStarted(run_id=first.id, app="toy", prompt="go"))
    events.emit(ToolCalled(run_id=first.id, tool_call_id="t1", tool_name="lookup", args={}))
    events.emit(RunStarted(run_id=second.id, app="toy", prompt="and then?"))
    events.emit(RunEnded(run_id=second.id, status="finished"))
    (span,) = Tree(exported.get_finished_spans()).spans
    assert f"{span.context.trace_id:032x}" == second.trace_id != first.trace_id
    assert span.parent is not None and span.parent.is_remote


# ---- resumed runs ----------------------------------------------------------------------------------------------


async def test_a_resumed_run_is_a_new_span_in_the_same_trace(store, make_runtime) -> None:
    """The first process stops while the run waits (its spans end, marked unfinished); another takes the run up."""
    first_exported, second_exported = InMemorySpanExporter(), InMemorySpanExporter()
    first_tracing, second_tracing = (
        Tracing(exporter=first_exported, batch=False),
        Tracing(exporter=second_exported, batch=False),
    )
    model = RecordingModel([ask(CELL_LINE_Q), say("You chose K562.")])
    first = make_runtime(model)
    first_tracing.install(first, store)
    run = await run_to_settle(first, toy_agent())
    await first.aclose()
    first_tracing.shutdown()

    second = make_runtime(model)
    second_tracing.install(second, store)
    await second.resume(run.id, toy_agent())
    (pending,) = store.list_asks(run_id=run.id)
    second.answer(pending.id, ["K562"])
    assert (await settle(second, run.id)).status == RunStatus.finished
    second_tracing.shutdown()

    tree = Tree(first_exported.get_finished_spans() + second_exported.get_finished_spans())
    assert tree.trace_ids() == {run.trace_id}
    before, after = sorted(tree.named("run toy"), key=lambda s: s.start_time)
    assert (attrs(before)["consulta.resumed"], attrs(before)["consulta.unfinished"]) == (False, True)
    assert attrs(after)["consulta.resumed"] is True and attrs(after)["consulta.run.status"] == "finished"
    assert before.parent == after.parent  # side by side in the run's trace
    questions = tree.named("ask question")
    assert [attrs(q).get("consulta.ask.status") for q in questions] == [
        None,
        "answered",
    ]  # cut at the stop; then drawn from its record
    assert tree.parent(questions[1]) is after


# ---- tracing off, and failures of tracing -----------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "off", " OFF "])
def test_off_is_the_default_and_installs_nothing(value: str | None) -> None:
    assert tracing_from_setting(value) is None


async def test_tracing_leaves_the_global_provider_alone(store, make_runtime, tracing) -> None:
    tracing.install(make_runtime(RecordingModel([say("hi")])), store)
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)


async def test_a_failure_in_tracing_never_reaches_the_run(
    store, make_runtime, tracing, exported, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = Store(f"sqlite:///{tmp_path}/other.db")  # knows none of the runs: every lookup fails
    rt = make_runtime(RecordingModel([calls(call("lookup", {"name": "a"})), say("done")]))
    tracing.install(rt, elsewhere)
    run = await run_to_settle(rt, toy_agent())
    elsewhere.close()
    assert run.status == RunStatus.finished and not exported.get_finished_spans()
    assert f"Could not trace run_started of run {run.id}" in caplog.text  # said, not raised


async def test_shutdown_stops_listening(store, make_runtime, tracing, exported) -> None:
    rt = make_runtime(RecordingModel([say("hi")]))
    tracing.install(rt, store)
    tracing.shutdown()
    await run_to_settle(rt, toy_agent())
    assert not exported.get_finished_spans()


# ---- the setting -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("loud", "is not a traces setting"),
        ("console:x", "is not a traces setting"),
        ("off:", "is not a traces setting"),
        ("file:", "needs a path"),
        ("file:   ", "needs a path"),
        ("otlp:ftp://host:4318", "must be an http(s) URL"),
        ("otlp:localhost:4318", "must be an http(s) URL"),
        ("otlp:", "must be an http(s) URL"),
    ],
)
def test_a_bad_setting_is_a_config_error_naming_the_accepted_forms(value: str, says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        tracing_from_setting(value)
    assert says in str(refused.value)
    if "not a traces setting" in says:
        assert all(
            form in str(refused.value)
            for form in ("off", "console", "file:/path/traces.jsonl", "otlp", "otlp:http://host:4318")
        )


def test_a_file_that_cannot_be_written_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot be written"):
        tracing_from_setting(f"file:{tmp_path}/taken/traces.jsonl")


def test_otlp_goes_to_the_standard_endpoint_or_the_given_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    made = [tracing_from_setting("otlp")]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4318/")
    made += [
        tracing_from_setting("otlp"),
        tracing_from_setting("otlp:http://host:4318"),
        tracing_from_setting("OTLP:http://host:4318/v1/traces"),
    ]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces.example/ingest")
    made.append(tracing_from_setting("otlp"))
    assert [t.destination for t in made if t is not None] == [
        "http://localhost:4318/v1/traces",
        "https://collector.example:4318/v1/traces",
        "http://host:4318/v1/traces",
        "http://host:4318/v1/traces",
        "http://traces.example/ingest",
    ]
    for t in made:
        assert t is not None
        t.shutdown()  # nothing was traced: nothing is sent
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318")
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http"):
        tracing_from_setting("otlp")


async def test_console_writes_spans_to_stderr(store, make_runtime, capsys: pytest.CaptureFixture[str]) -> None:
    console = tracing_from_setting("console")
    assert console is not None and console.destination == "stderr"
    rt = make_runtime(RecordingModel([say("hi")]))
    console.install(rt, store)
    run = await run_to_settle(rt, toy_agent())
    console.shutdown()
    out, err = capsys.readouterr()
    assert out == "" and run.trace_id in err and '"run toy"' in err


async def test_the_file_setting_writes_one_json_span_a_line(store, make_runtime, tmp_path: Path) -> None:
    path = tmp_path / "traces" / "traces.jsonl"
    traced = tracing_from_setting(f"file:{path}")
    assert traced is not None and traced.destination == str(path)
    rt = make_runtime(RecordingModel([calls(call("lookup", {"name": "a"})), say("done")]))
    traced.install(rt, store)
    run = await run_to_settle(rt, toy_agent())
    traced.shutdown()  # flushes the batch
    lines = path.read_text(encoding="utf-8").splitlines()
    spans = [json.loads(line) for line in lines]
    assert sorted(s["name"] for s in spans) == ["run toy", "step 1", "step 2", "tool lookup"]
    assert {s["context"]["trace_id"] for s in spans} == {f"0x{run.trace_id}"}
    assert all(s["attributes"]["consulta.run_id"] == run.id for s in spans)


async def test_an_answer_from_another_thread_is_traced(store, make_runtime, tracing, exported) -> None:
    rt = make_runtime(RecordingModel([ask(CELL_LINE_Q), say("ok")]))
    tracing.install(rt, store)
    run = await run_to_settle(rt, toy_agent())
    (pending,) = store.list_asks(run_id=run.id)
    await asyncio.to_thread(rt.answer, pending.id, ["K562"])
    assert (await settle(rt, run.id)).status == RunStatus.finished
    assert (
        attrs(Tree(exported.get_finished_spans()).one("ask question"))["consulta.ask.status"]
        == AskStatus.answered.value
    )


async def test_the_run_context_of_a_run_not_traced_here_is_its_trace(tracing, store) -> None:
    """A run carried here before tracing began still gets its engine's spans into its own trace; an unknown run
    changes nothing (and breaks nothing)."""
    tracing.install(_Events(), store)
    run = store.create_run(app="toy", prompt="go", model="m", lang="en")
    before = trace.get_current_span()
    with tracing.run_context(run.id):
        current = trace.get_current_span().get_span_context()
        assert (f"{current.trace_id:032x}", current.is_remote) == (run.trace_id, True)
    assert trace.get_current_span() is before
    with tracing.run_context("run_nowhere"):
        assert trace.get_current_span() is before
