"""Stop reaches every member of the team: a live team (the scripted model double, one member's answer held as long as
a slow model's) is stopped through the host every front end uses; the stop answers within seconds, no member starts
after it, and no run of the Director or of its members is left `running` in the store."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from consulta.config import Settings
from consulta.frontends import AppHost
from consulta.models import ScriptedModel
from consulta.runtime import RunStatus

from .team_script import SAMPLES, write_script

PRINCIPAL = "local"
HELD = "@data_engineer/work"
"""The member whose answer takes as long as a slow model's (the test double waits on it until it is cancelled)."""


@pytest.fixture
def slow_member(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The scripted model double with one member's request held (until cancelled); the event is set when it is."""
    reached = asyncio.Event()
    request = ScriptedModel.request

    async def held_request(self: ScriptedModel, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        if HELD in str(messages):
            reached.set()
            await asyncio.sleep(300)  # a slow model at work: only a cancellation ends it
        return await request(self, messages, *args, **kwargs)

    monkeypatch.setattr(ScriptedModel, "request", held_request)
    return reached


def test_stop_reaches_the_member_at_work_and_no_run_stays_running(tmp_path: Path, slow_member: asyncio.Event) -> None:
    problem = tmp_path / "problem"
    shutil.copytree(SAMPLES / "electricity_demand", problem)
    script = write_script(tmp_path / "team.json")
    settings = Settings(
        home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang="zh-CN"
    )

    async def scenario() -> tuple[Any, float, list[Any], list[Any]]:
        host = AppHost(app="modeling", settings=settings, options={"problem": str(problem)})
        try:
            run = await host.start("开始", principal=PRINCIPAL)
            await asyncio.wait_for(slow_member.wait(), 60)  # the team is at work: a member's model request is live
            started = time.perf_counter()
            stopped = await host.stop(run.id, principal=PRINCIPAL)
            took = time.perf_counter() - started
            members = [r for r in host.store.list_runs(app="modeling", limit=200) if r.parent_run_id == run.id]
            await asyncio.sleep(0.5)  # nothing of the team goes on after the stop
            later = [r for r in host.store.list_runs(app="modeling", limit=200) if r.parent_run_id == run.id]
            return stopped, took, members, later
        finally:
            await host.aclose()

    stopped, took, members, later = asyncio.run(scenario())
    assert stopped.status == RunStatus.cancelled
    assert took < 5, f"the stop took {took:.1f} s"
    assert {m.agent for m in members} >= {"reader", "researcher", "modeler", "data_engineer"}
    assert [m.id for m in later] == [m.id for m in members]  # no member started after the stop
    assert [m.status for m in later if m.status == RunStatus.running] == []
    (held,) = [m for m in later if m.agent == "data_engineer"]
    assert held.status == RunStatus.cancelled
    assert all(m.status == RunStatus.finished for m in later if m.agent != "data_engineer")
