"""The ln2 agent end to end with the scripted model: ambiguous request → question → answer → staged thaw → approve →
YAML changed and audited → rollback restores the original bytes; invalid and ungrounded writes change nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from consulta.apps import ln2
from consulta.models import ScriptedModel
from consulta.runtime import AskStatus, PlanStatus, RunStatus, Runtime, Store
from consulta.runtime._engine import load_messages

SAMPLE = resources.files("consulta.apps.ln2").joinpath("data", "sample_inventory.yaml")


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.yaml"
    with resources.as_file(SAMPLE) as sample:
        shutil.copyfile(sample, path)
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def audit_lines(path: Path) -> list[dict[str, Any]]:
    log = path.with_name(path.name + ".audit.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def tool_results(store: Store, run_id: str) -> dict[str, Any]:
    """tool_call_id → result the model saw, from the checkpoint."""
    checkpoint = store.load_checkpoint(run_id)
    assert checkpoint is not None
    out = {}
    for message in load_messages(checkpoint[1]):
        for part in getattr(message, "parts", []):
            if part.part_kind == "tool-return":
                out[part.tool_call_id] = part.content
    return out


class Harness:
    def __init__(self, tmp_path: Path, inventory: Path, steps: Any, policy: str = "defer") -> None:
        self.store = Store(f"sqlite:///{tmp_path}/consulta.db")
        self.model = ScriptedModel(steps)
        self.agent = ln2.build_agent(inventory=inventory)
        self.runtime = Runtime(store=self.store, resolve_model=lambda spec: self.model, ask_policy=policy)  # type: ignore[arg-type]

    async def run(self, prompt: str, **kw: Any):
        return await self.runtime.run(self.agent, prompt, model="scripted", **kw)

    def pending(self):
        asks = self.store.list_asks()
        assert len(asks) == 1, asks
        return asks[0]


QUESTION = {
    "name": "question",
    "args": {
        "questions": [
            {
                "header": "Cell Line",
                "question": "库存中有 K562、K562-dTAG、K562-RTCB 三种，你需要哪个？",
                "options": ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"],
            }
        ]
    },
}


def test_ambiguous_request_question_thaw_approve_rollback(tmp_path: Path, inventory: Path) -> None:
    original = inventory.read_bytes()
    steps = {
        "turns": [
            [
                {"tool_calls": [{"name": "query_inventory", "args": {"cell_line": "K562"}}]},
                {"tool_calls": [QUESTION]},
                {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 9, "positions": [1]}}]},
                {"text": "已暂存：记录 9 取出 1 管。"},
            ],
            [  # "undo that" → audit_history → rollback → reply
                {"tool_calls": [{"name": "audit_history", "args": {}}]},
                {"tool_calls": [{"name": "rollback", "args": {"audit_id": "a_000001"}}]},
                {"text": "已暂存回滚。"},
            ],
        ]
    }
    h = Harness(tmp_path, inventory, steps)

    async def scenario() -> None:
        run = await h.run("帮我取一管K562")
        assert run.status == RunStatus.waiting
        ask = h.pending()
        assert ask.kind == "question"
        assert ask.payload["questions"][0]["options"] == ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"]
        query = tool_results(h.store, run.id)["call_0_0"]
        lines = query["records"]
        assert any(
            line.startswith("id 9: K562-dTAG-BRD4 (K562-dTAG)") and "box 2 positions 1,2,3" in line for line in lines
        )
        assert any(line.startswith("id 1: K562-WT (K562)") for line in lines)

        h.runtime.answer(ask.id, ["K562-dTAG-BRD4"])
        run = await h.runtime.settled(run.id)
        assert run.status == RunStatus.waiting  # now on the plan
        results = tool_results(h.store, run.id)
        assert results["call_1_0"] == {
            "ok": True,
            "result": {"answers": ["Cell Line: K562-dTAG-BRD4"], "raw_answers": ["K562-dTAG-BRD4"]},
            "message": "User answered: Cell Line: K562-dTAG-BRD4",
        }
        assert results["call_2_0"]["staged"] is True
        assert inventory.read_bytes() == original  # staged, not written
        plan_ask = h.pending()
        assert plan_ask.kind == "plan" and "record 9" in plan_ask.payload["items"][0]["preview"]

        h.runtime.answer(plan_ask.id, "approve")
        run = await h.runtime.settled(run.id)
        assert run.status == RunStatus.finished
        assert run.output.startswith("已完成：") and "记录 9" in run.output, (
            run.output
        )  # said by code, from the plan applied
        (plan,) = h.store.list_plans(run_id=run.id)
        assert plan.status == PlanStatus.applied
        lines = audit_lines(inventory)
        assert len(lines) == 1 and lines[0]["op"] == "record_thaw" and lines[0]["audit_id"] == "a_000001"
        record = ln2.load_inventory(inventory).records[8]
        assert record.id == 9 and record.positions == [2, 3]
        assert record.thaw_events[-1].positions == [1]
        changed = inventory.read_bytes()
        assert changed != original
        # comments survive the edit
        assert b"# LN2 tank 2" in changed

        run2 = await h.run("撤销刚才的操作", continue_from=run.id)
        assert run2.status == RunStatus.waiting
        h.runtime.answer(h.pending().id, "approve")
        run2 = await h.runtime.settled(run2.id)
        assert run2.status == RunStatus.finished
        assert inventory.read_bytes() == original  # byte for byte
        assert [line["op"] for line in audit_lines(inventory)] == ["record_thaw", "rollback"]
        await h.runtime.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("prompt", ["Thaw one K562 tube", "帮我取一管K562"])
def test_ungrounded_write_becomes_the_runtimes_question(tmp_path: Path, inventory: Path, prompt: str) -> None:
    steps = [
        {"tool_calls": [{"name": "query_inventory", "args": {"cell_line": "K562"}}]},
        {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 9, "positions": [1]}}]},  # guessed K562-dTAG
        {"text": "Staged, waiting for your approval."},
    ]
    h = Harness(tmp_path, inventory, steps)
    before = sha(inventory)

    async def scenario() -> None:
        run = await h.run(prompt)
        assert run.status == RunStatus.waiting
        assert "call_1_0" not in tool_results(h.store, run.id)  # the model never sees the refusal
        ask = h.pending()
        assert ask.kind == "question" and ask.tool_call_id == "call_1_0"
        (question,) = ask.payload["questions"]
        # asked in the words' language, nothing meant for the model ("record 9 … was not named by the user")
        assert question["question"] == ("Which tube do you mean?" if prompt.isascii() else "您指的是哪一管？")
        options = question["options"]
        assert any(o.startswith(("K562-WT,", "K562-WT，")) for o in options)
        assert any(o.startswith(("K562-Cas9,", "K562-Cas9，")) for o in options)
        assert h.store.list_plans(run_id=run.id) == []  # nothing staged before the answer

        wt = next(o for o in options if o.startswith(("K562-WT,", "K562-WT，")))
        h.runtime.answer(ask.id, [wt])
        run = await h.runtime.settled(run.id)
        assert tool_results(h.store, run.id)["call_1_0"]["staged"] is True
        (plan,) = h.store.list_plans(run_id=run.id)
        assert plan.items[0]["op"]["record_id"] == ask.payload["rerun"]["args_for_option"][wt]["record_id"]
        await h.runtime.aclose()

    asyncio.run(scenario())
    assert sha(inventory) == before and audit_lines(inventory) == []


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"record_id": 9, "positions": [5]}, "position_not_held"),
        ({"record_id": 999, "positions": [1]}, "unknown_record"),
        ({"record_id": 13, "positions": [1]}, "record_consumed"),
        ({"record_id": 9, "positions": [1], "date": "2999-01-01"}, "invalid_date"),
    ],
)
def test_invalid_write_is_rejected_with_structured_error_and_file_unchanged(
    tmp_path: Path, inventory: Path, args: dict[str, Any], code: str
) -> None:
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": args}]},
        {"text": "That did not work."},
    ]
    h = Harness(tmp_path, inventory, steps)
    before = sha(inventory)

    async def scenario() -> None:
        # The user names the record explicitly, so grounding passes and validation decides.
        run = await h.run("Thaw record 9, record 999 and record 13 on 2999-01-01")
        assert run.status == RunStatus.finished
        result = tool_results(h.store, run.id)["call_0_0"]
        assert result["ok"] is False, result
        assert result["error_code"] == code, result
        assert result["message"] and result.get("_hint")
        assert h.store.list_asks(status=None) == []  # no plan to approve
        await h.runtime.aclose()

    asyncio.run(scenario())
    assert sha(inventory) == before
    assert audit_lines(inventory) == []


def test_add_entry_with_invented_box_is_refused(tmp_path: Path, inventory: Path) -> None:
    steps = [
        {"tool_calls": [{"name": "add_entry", "args": {"parent_cell_line": "HeLa", "box": 4, "positions": [80]}}]},
        {"text": "Which box?"},
    ]
    h = Harness(tmp_path, inventory, steps)

    async def scenario() -> None:
        run = await h.run("Add a new HeLa tube")
        result = tool_results(h.store, run.id)["call_0_0"]
        assert result["error_code"] == "ungrounded_argument" and result["field"] == "box"
        await h.runtime.aclose()

    asyncio.run(scenario())


def test_rejected_plan_changes_nothing(tmp_path: Path, inventory: Path) -> None:
    steps = [
        {"tool_calls": [{"name": "add_entry", "args": {"parent_cell_line": "HeLa", "box": 4, "positions": [80]}}]},
        {"text": "Staged."},
    ]
    h = Harness(tmp_path, inventory, steps)
    before = sha(inventory)

    async def scenario() -> None:
        run = await h.run("Add a new HeLa tube in box 4 position 80")
        assert run.status == RunStatus.waiting
        plan_ask = h.pending()
        h.runtime.answer(plan_ask.id, "reject")
        run = await h.runtime.settled(run.id)
        assert run.status == RunStatus.finished
        assert h.store.get_ask(plan_ask.id).status == AskStatus.answered
        assert h.store.list_plans(run_id=run.id)[0].status == PlanStatus.rejected
        await h.runtime.aclose()

    asyncio.run(scenario())
    assert sha(inventory) == before and audit_lines(inventory) == []


def test_wrong_record_after_an_answer_is_refused_with_the_right_id(tmp_path: Path, inventory: Path) -> None:
    steps = [
        {
            "tool_calls": [
                {
                    "name": "question",
                    "args": {
                        "questions": [{"header": "Line", "question": "Which?", "options": ["K562-GFP", "K562-WT"]}]
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 2, "positions": [10]}}]},  # K562-Cas9: wrong
        {"text": "Retrying."},
    ]
    h = Harness(tmp_path, inventory, steps)

    async def scenario() -> None:
        run = await h.run("帮我取一管K562")
        h.runtime.answer(h.pending().id, ["K562-GFP"])
        run = await h.runtime.settled(run.id)
        result = tool_results(h.store, run.id)["call_1_0"]
        assert result["error_code"] == "ungrounded_argument"
        assert "record_id 39 = K562-GFP, box 5, positions 73,74" in result["_hint"]
        await h.runtime.aclose()

    asyncio.run(scenario())


def test_plan_previews_are_in_the_runs_language_and_english_for_the_model(tmp_path: Path, inventory: Path) -> None:
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 9, "positions": [1]}}]},
        {"text": "已暂存。"},
    ]
    h = Harness(tmp_path, inventory, steps)

    async def scenario() -> None:
        run = await h.run("从记录 9 的 1 号位取一管复苏", lang="zh-CN")
        plan_ask = h.pending()
        (item,) = plan_ask.payload["items"]
        assert "记录 9（K562-dTAG-BRD4），2 号盒 1 (A1)" in item["preview"]
        assert "复苏" in item["preview"]
        staged = tool_results(h.store, run.id)["call_0_0"]
        assert (
            staged["preview"].startswith("Thaw on ")
            and "record 9 (K562-dTAG-BRD4), box 2 at 1 (A1)" in staged["preview"]
        )
        h.runtime.answer(plan_ask.id, "approve")
        await h.runtime.settled(run.id)
        assert audit_lines(inventory)[0]["summary"].startswith("Thaw on ")  # the record stays in one language

    asyncio.run(scenario())


def test_audit_entries_carry_their_summary_in_every_language(tmp_path: Path, inventory: Path) -> None:
    ln2.apply_plan(
        inventory, [ln2.RecordThaw(record_id=9, positions=[1], date="2026-01-05")], plan_id="p1", actor="test"
    )
    (entry,) = ln2.read_audit(inventory).entries
    assert entry.summary.startswith("Thaw on 2026-01-05: record 9")
    assert entry.translations["en"] == entry.summary and entry.translations["zh-CN"].startswith(
        "2026-01-05 复苏：记录 9"
    )
    assert ln2.audit_entries(inventory, lang="zh-CN")[0]["summary"] == entry.translations["zh-CN"]
    assert ln2.audit_entries(inventory)[0]["summary"] == entry.summary
    (zh,) = ln2.preview(
        ln2.load_inventory(inventory), [ln2.Rollback(audit_id=entry.audit_id)], path=inventory, lang="zh-CN"
    )
    assert zh.startswith(f"回滚 {entry.audit_id}（2026-01-05 复苏：记录 9") and "。）" not in zh


def test_instructions_tell_each_run_the_day_it_started(tmp_path: Path, inventory: Path) -> None:
    """A server running past midnight: each run is told its own day (read from the run), not the process's."""
    agent = ln2.build_agent(inventory=inventory)
    assert callable(agent.instructions)
    store = Store(f"sqlite:///{tmp_path}/day.db")
    run = store.create_run(app="ln2", prompt="p", model="m", lang="en")
    later = replace(run, created_at="2031-02-03T00:00:01+00:00")
    assert "Today is 2031-02-03." in agent.instructions(later)
    assert f"Today is {run.created_at[:10]}." in agent.instructions(run)


def test_a_turn_after_one_code_answered_is_read_as_its_own_words(tmp_path: Path, inventory: Path) -> None:
    """Thirteenth held-out set: "what did I log last?" (answered by code from the audit log), then "undo that, grabbed
    the wrong vial" was answered as the first question again: code's reply was not on record, so the two turns' words
    ran together into one request and the first was read. The second turn is its own: a rollback is staged."""
    turns = [
        [
            {"tool_calls": [{"name": "record_thaw", "args": {"box": 1, "positions": [28], "action": "thaw"}}]},
            {"text": "Staged."},
        ],
        [],  # "what did I log last?": code answers, the model is not asked
        [{"tool_calls": [{"name": "rollback", "args": {"audit_id": "a_000001"}}]}, {"text": "Staged the undo."}],
    ]
    h = Harness(tmp_path, inventory, {"turns": turns})

    async def scenario() -> None:
        setup = await h.run("Thaw the HeLa in box 1 position 28")
        h.runtime.answer(h.pending().id, "approve")
        setup = await h.runtime.settled(setup.id)
        assert setup.status == RunStatus.finished and len(audit_lines(inventory)) == 1
        first = await h.run("what did I log last?", continue_from=setup.id)
        assert first.status == RunStatus.finished and "a_000001" in first.output  # code's reply, no model asked
        again = await h.run("undo that, grabbed the wrong vial", continue_from=first.id)
        assert again.status == RunStatus.waiting  # the rollback, staged
        assert h.pending().kind == "plan"
        await h.runtime.aclose()

    asyncio.run(scenario())
