"""A write tool's ToolError carrying a Choice: the runtime opens seed 001's question itself (no model step in
between), runs the same call again with the chosen option's arguments, and counts the answer as the user's words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from consulta.asks import question_tool
from consulta.runtime import Agent, AskStatus, Choice, Evidence, RunStatus, Store, ToolError, write_tool

from ._support import (
    FakeExecutor,
    RecordingModel,
    call,
    calls,
    lookup,
    results_for,
    run_to_settle,
    say,
    seen_by_model,
    settle,
)

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]

OPTIONS = ["Alpha (a1)", "Beta (b2)"]
CHOICE = Choice(
    header="Which one",
    question="'thing' fits two. Which one?",
    options=OPTIONS,
    args_for_option={"Alpha (a1)": {"name": "a1"}, "Beta (b2)": {"name": "b2"}},
)


@write_tool
def rename(name: str, note: str = "") -> dict:
    """Rename the thing."""
    return {"op": "rename", "name": name, "note": note}


@dataclass
class ChoosyExecutor(FakeExecutor):
    """Refuses (with a Choice) a rename whose name the user did not say or answer."""

    seen: list[Evidence] = field(default_factory=list)

    def check_grounding(self, tool_name: str, op: dict[str, Any], evidence: Evidence) -> None:
        self.seen.append(evidence)
        if not evidence.said_by_user(op["name"]):
            raise ToolError("ungrounded_argument", f"name={op['name']!r} is a guess.", field="name", choice=CHOICE)


def agent(executor: FakeExecutor, *, asks: bool = True) -> Agent:
    tools = (lookup, rename, question_tool()) if asks else (lookup, rename)
    return Agent(app="toy", instructions="x", tools=tools, executor=executor)


def model() -> RecordingModel:
    return RecordingModel([calls(call("rename", {"name": "thing", "note": "kept"}, id="w1")), say("Staged.")])


async def test_choice_opens_a_question_and_the_answer_reruns_the_call(store: Store, make_runtime):
    executor, m = ChoosyExecutor(), model()
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(executor))
    assert run.status == RunStatus.waiting
    (ask,) = store.list_asks(run_id=run.id)
    assert (ask.kind, ask.tool_call_id) == ("question", "w1")
    assert ask.payload["questions"] == [
        {"header": "Which one", "question": "'thing' fits two. Which one?", "options": OPTIONS, "multiple": False}
    ]
    assert ask.payload["rerun"]["args"] == {"name": "thing", "note": "kept"}
    assert len(m.requests) == 1  # no model step between the call and the question
    assert store.list_plans(run_id=run.id) == []  # nothing staged before the answer

    rt.answer(ask.id, ["Beta (b2)"])
    run = await settle(rt, run.id)
    (plan,) = store.list_plans(run_id=run.id)
    assert plan.items[0]["op"] == {"op": "rename", "name": "b2", "note": "kept"}  # the option's args merged in
    assert "Beta (b2)" in executor.seen[-1].answers  # the answer is the user's words
    (staged,) = seen_by_model(m, "rename")
    assert staged["staged"] is True  # the model's next step sees the staged result, never the refusal


async def test_free_text_answer_returns_the_refusal_with_the_answer(store: Store, make_runtime):
    m = model()
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(ChoosyExecutor()))
    (ask,) = store.list_asks(run_id=run.id)
    rt.answer(ask.id, ["neither"])
    run = await settle(rt, run.id)
    (result,) = seen_by_model(m, "rename")
    assert (result["error_code"], result["user_answer"]) == ("ungrounded_argument", "neither")
    assert len(store.list_asks(status=None, run_id=run.id)) == 1  # asked once, not again
    assert store.list_plans(run_id=run.id) == []


async def test_free_text_that_grounds_the_call_stages_it(store: Store, make_runtime):
    m = model()
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(ChoosyExecutor()))
    (ask,) = store.list_asks(run_id=run.id)
    rt.answer(ask.id, ["thing, the one I said"])  # free text: the call runs again with its own args, the text as words
    run = await settle(rt, run.id)
    (plan,) = store.list_plans(run_id=run.id)
    assert plan.items[0]["op"]["name"] == "thing"


async def test_cancelled_question_is_the_calls_result(store: Store, make_runtime):
    m = model()
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(ChoosyExecutor()))
    (ask,) = store.list_asks(run_id=run.id)
    await rt.stop(run.id)
    assert store.get_ask(ask.id).status == AskStatus.cancelled
    assert store.list_plans(run_id=run.id) == []


async def test_without_a_question_tool_the_model_gets_the_error(store: Store, make_runtime):
    m = model()
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(ChoosyExecutor(), asks=False))
    assert run.status == RunStatus.finished
    assert store.list_asks(status=None, run_id=run.id) == []
    (result,) = results_for(store, run.id, "rename")
    assert result["error_code"] == "ungrounded_argument"


async def test_after_the_person_cancels_a_question_the_runtime_asks_none_of_its_own(store: Store, make_runtime):
    """A question the person cancelled this turn: the guessed write's refusal goes to the model, no second question."""
    m = RecordingModel(
        [
            calls(
                call(
                    "question",
                    {"questions": [{"header": "Which", "question": "Which thing?", "options": OPTIONS}]},
                    id="q1",
                )
            ),
            calls(call("rename", {"name": "thing"}, id="w1")),
            say("You did not choose, so nothing was staged."),
        ]
    )
    rt = make_runtime(m)
    run = await run_to_settle(rt, agent(ChoosyExecutor()))
    (question,) = store.list_asks(run_id=run.id)
    rt.cancel_ask(question.id)
    run = await settle(rt, run.id)
    assert [a.id for a in store.list_asks(status=None, run_id=run.id)] == [question.id]  # no question of the runtime's
    (result,) = seen_by_model(m, "rename")
    assert result["error_code"] == "ungrounded_argument"
    assert store.list_plans(run_id=run.id) == [] and run.status == RunStatus.finished
