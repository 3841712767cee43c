"""A run's reply once its plan is decided is said by code from the plan's outcome, in the reply's language — never
the reply written while the plan waited ("staged, waiting for your approval")."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from pydantic_ai.messages import ModelResponse

from consulta.asks import question_tool
from consulta.i18n import t
from consulta.runtime import PLAN_ASK, Agent, PlanStatus, RunStatus, ToolError, write_tool
from consulta.runtime._engine import carry_over, load_messages

from ._support import FakeExecutor, RecordingModel, call, calls, run_to_settle, say, settle

pytestmark = [pytest.mark.anyio, pytest.mark.both_backends]

WAITING = "Staged, waiting for your approval: two renames."
WAITING_ZH = "已暂存两项重命名，等待您批准。"


def waiting(prompt: str) -> str:
    """The scripted model's reply after staging, in the prompt's language (another is refused: `check_claims`)."""
    return WAITING_ZH if re.search(r"[\u4e00-\u9fff]", prompt) else WAITING


@write_tool
def rename(name: str) -> dict:
    """Rename the thing."""
    return {"op": "rename", "name": name}


class Bilingual(FakeExecutor):
    """Previews in the language asked for, as an app's executor renders them."""

    def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
        previews = super().validate(ops, lang=lang)
        return [f"重命名为 {o['name']}" for o in ops] if lang == "zh-CN" else previews


async def staged(make_runtime, executor: FakeExecutor, prompt: str = "rename them", **kw: Any):
    model = RecordingModel(
        [
            calls(call("rename", {"name": "alpha"}, id="w1")),
            calls(call("rename", {"name": "beta"}, id="w2")),
            say(waiting(prompt)),
        ]
    )
    rt = make_runtime(model, **kw)
    timeout = {"question_timeout": 0.2} if kw.get("ask_policy") == "wait" else {}
    agent = Agent(app="toy", instructions="x", tools=(rename, question_tool()), executor=executor, **timeout)
    run = await run_to_settle(rt, agent, prompt)
    return rt, run


def plan_ask_id(store, run_id: str) -> str:
    [ask] = [a for a in store.list_asks(status=None, run_id=run_id) if a.kind == PLAN_ASK]
    return ask.id


def told(store, run_id: str) -> list[str]:
    return [e.data["text"] for e in store.list_events(run_id) if e.type == "model_text"]


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("rename them", "Done: preview of rename alpha; preview of rename beta."),
        ("把它们重命名", "已完成：重命名为 alpha；重命名为 beta。"),
    ],
)
async def test_approved_the_run_ends_saying_what_was_applied(store, make_runtime, prompt, expected):
    rt, run = await staged(make_runtime, Bilingual(), prompt)
    assert (run.status, run.output) == (RunStatus.waiting, waiting(prompt))
    rt.answer(plan_ask_id(store, run.id), "approve")
    run = await settle(rt, run.id)
    assert store.list_plans(run_id=run.id)[0].status == PlanStatus.applied
    assert (run.status, run.output) == (RunStatus.finished, expected)
    assert told(store, run.id) == [waiting(prompt), expected]  # front ends show the outcome as the run's last reply
    events = store.list_events(run.id)
    assert [e.type for e in events[-2:]] == ["model_text", "run_ended"] and events[-1].data["output"] == expected
    # the thread's next turn carries the outcome over as the agent's last reply
    _, checkpoint = store.load_checkpoint(run.id)
    assert [
        p.content for m in carry_over(load_messages(checkpoint)) if isinstance(m, ModelResponse) for p in m.parts
    ] == [waiting(prompt), expected]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
async def test_rejected_the_run_ends_saying_nothing_was_applied(store, make_runtime, lang):
    rt, run = await staged(make_runtime, Bilingual(), "rename them" if lang == "en" else "把它们重命名")
    rt.answer(plan_ask_id(store, run.id), "reject")
    run = await settle(rt, run.id)
    assert (run.status, run.output) == (RunStatus.finished, t("claims.plan_rejected", lang))
    assert run.output.startswith("Not applied: you rejected the plan" if lang == "en" else "未执行：您拒绝了该计划")
    assert told(store, run.id)[-1] == run.output


async def test_cancelled_the_run_ends_saying_nothing_was_applied(store, make_runtime):
    rt, run = await staged(make_runtime, FakeExecutor())
    rt.cancel_ask(plan_ask_id(store, run.id))
    run = await settle(rt, run.id)
    assert (run.status, run.output) == (RunStatus.finished, "Not applied: the plan was cancelled; nothing was changed.")
    assert told(store, run.id)[-1] == run.output


async def test_timed_out_the_run_ends_saying_nothing_was_applied(store, make_runtime):
    rt, run = await staged(make_runtime, FakeExecutor(), ask_policy="wait")
    assert (run.status, run.output) == (RunStatus.finished, t("claims.plan_timed_out", "en"))
    assert run.output.startswith("Not applied:")


async def test_a_plan_the_data_no_longer_fits_ends_saying_why(store, make_runtime):
    executor = FakeExecutor(apply_error=ToolError("conflict", "The data changed since the preview."))
    rt, run = await staged(make_runtime, executor)
    rt.answer(plan_ask_id(store, run.id), "approve")
    run = await settle(rt, run.id)
    # The approved change was refused: the run failed (not "finished"), and says why.
    assert (run.status, run.output) == (
        RunStatus.failed,
        "Not applied: The data changed since the preview. Nothing was changed.",
    )
    assert (
        run.error
        == f"Plan {store.list_plans(run_id=run.id)[0].id} was not applied: The data changed since the preview."
    )
    assert told(store, run.id)[-1] == run.output


async def test_a_failed_apply_still_fails_the_run(store, make_runtime):
    rt, run = await staged(make_runtime, FakeExecutor(apply_error=OSError("disk full")))
    rt.answer(plan_ask_id(store, run.id), "approve")
    with anyio.fail_after(5):
        run = await rt.settled(run.id)
    assert run.status == RunStatus.failed and "disk full" in (run.error or "")
    assert run.output == WAITING and told(store, run.id) == [WAITING]  # nothing claims it was done
