"""The Director resumes from its run's durable steps (no memo read back): a Director whose work broke off and one
started again over the same run replay what was recorded — no agent asked twice, the consultation's number kept,
its record written once — and no run is left `running`. (The kill-anywhere flow in a subprocess: test_app.py.)"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.modeling import Director, TeamConfig
from consulta.models import ScriptedModel
from consulta.runtime import RunRecorder, RunStatus, Store, ToolCallContext

from .team_script import scripted, workspace

BROKEN = "@researcher/answer"
"""The member whose first answer breaks off (the model process dies), as a kill would end it."""


class ModelDied(Exception):
    """The test double's stand-in for a model process that died mid-answer."""


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scripted model double, counting each request by the member and mode it answers (`@agent/mode`); the
    first request of `BROKEN` fails."""
    seen: list[str] = []
    request = ScriptedModel.request

    async def counted(self: ScriptedModel, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        found = re.search(r"@[a-z_]+/[a-z+]+", str(messages))
        seen.append(found.group(0) if found else "?")
        if seen[-1] == BROKEN and seen.count(BROKEN) == 1:
            raise ModelDied("the model process died")
        return await request(self, messages, *args, **kwargs)

    monkeypatch.setattr(ScriptedModel, "request", counted)
    return seen


def _team(ws: Path, problem: Any, store: Store, call: ToolCallContext) -> Director:
    model = scripted(consults={"modeler": "researcher"})
    return Director(workspace=ws, problem=problem, model=model, store=store, call=call, config=TeamConfig())


def test_a_director_started_again_replays_its_recorded_steps_and_asks_only_the_rest(
    tmp_path: Path, asked: list[str]
) -> None:
    ws, problem = workspace(tmp_path)
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    parent = RunRecorder(store).create(agent="director", app="modeling", prompt="开始", model="scripted", lang="zh-CN")
    call = ToolCallContext(run_id=parent.run.id, tool_call_id="call_1", tool_name="run_team", log=parent)

    async def turn(team: Director) -> Any:
        return await team.turn("modeler", "work", step="modeler", task="给出模型。", prompt="题目")

    with pytest.raises(ModelDied):
        asyncio.run(turn(_team(ws, problem, store, call)))
    assert asked == ["@modeler/work", BROKEN]
    reserved = sorted(p.name for p in (ws / "consultation").glob("*.md"))
    assert reserved == []  # numbered (a step on record), not yet written: the colleague had not answered

    again = _team(ws, problem, store, call)  # the run resumed: a new Director over the same run's steps
    answer = asyncio.run(turn(again))
    assert answer.used_reply == "modeler 采纳了回复。"
    # the modeler's first answer and the consultation's number came from the steps: only the rest was asked
    assert asked == ["@modeler/work", BROKEN, BROKEN, "@modeler/work+reply"]
    assert sorted(p.name for p in (ws / "consultation").glob("*.md")) == ["modeler_researcher_1.md"]
    record = (ws / "consultation" / "modeler_researcher_1.md").read_bytes()

    third = _team(ws, problem, store, call)  # once more: everything is on record, nothing is asked
    asyncio.run(turn(third))
    assert len(asked) == 4 and (ws / "consultation" / "modeler_researcher_1.md").read_bytes() == record
    assert third.counts() == {"answers": 3, "consultations": 1, "refused": 0, "reworks": 0}
    assert third.memo["pairs"] == {"modeler_researcher": 1}

    members = [r for r in store.list_runs(app="modeling", limit=50) if r.parent_run_id == parent.run.id]
    assert sorted((m.agent, m.status) for m in members) == [
        ("modeler", RunStatus.finished),
        ("modeler", RunStatus.finished),
        ("researcher", RunStatus.failed),  # the broken answer's run ended `failed`, not left `running`
        ("researcher", RunStatus.finished),
    ]
    rows = store.list_consultations(run_id=parent.run.id)
    assert [(c.status, c.request["context"]["record"]) for c in rows] == [
        ("done", "consultation/modeler_researcher_1.md")
    ]
    assert (ws / "state" / "director.json").is_file()  # the view for readers
    store.close()


def test_outside_any_run_the_steps_last_as_long_as_the_director(tmp_path: Path, asked: list[str]) -> None:
    ws, problem = workspace(tmp_path)
    team = Director(workspace=ws, problem=problem, model=scripted())
    asyncio.run(team.turn("reader", "work", step="reader", task="读题。", prompt="题目"))
    team._counters.clear()  # the same step asked again of the same Director: replayed
    asyncio.run(team.turn("reader", "work", step="reader", task="读题。", prompt="题目"))
    assert asked == ["@reader/work"]
    other = Director(workspace=ws, problem=problem, model=scripted())
    asyncio.run(other.turn("reader", "work", step="reader", task="读题。", prompt="题目"))
    assert asked == ["@reader/work", "@reader/work"]  # a new Director outside a run has nothing to resume
