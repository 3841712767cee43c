"""Stop reaches every member of the team: a live team (the scripted model double, one member's answer held as long as
a slow model's) is stopped through the host every front end uses, and through the page's API; the stop answers within
seconds, no member starts after it, and no run of the Director or of its members is left `running` in the store."""

from __future__ import annotations

import asyncio
import shutil
import threading
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
def slow_member(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The scripted model double with one member's request held (until cancelled); the event is set when it is."""
    reached = threading.Event()
    request = ScriptedModel.request

    async def held_request(self: ScriptedModel, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        if HELD in str(messages):
            reached.set()
            await asyncio.sleep(300)  # a slow model at work: only a cancellation ends it
        return await request(self, messages, *args, **kwargs)

    monkeypatch.setattr(ScriptedModel, "request", held_request)
    return reached


def test_stop_reaches_the_member_at_work_and_no_run_stays_running(tmp_path: Path, slow_member: threading.Event) -> None:
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
            assert await asyncio.to_thread(slow_member.wait, 60)  # the team is at work: a member's request is live
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
    _members_stopped(members, later)


def _members_stopped(members: list[Any], later: list[Any]) -> None:
    """The members' runs in the store at the stop and a moment later: none started after it, none `running`, the one
    at work cancelled, those before it finished."""
    assert {m.agent for m in members} >= {"reader", "researcher", "modeler", "data_engineer"}
    assert [m.id for m in later] == [m.id for m in members]  # no member started after the stop
    assert [m.status for m in later if m.status == RunStatus.running] == []
    (held,) = [m for m in later if m.agent == "data_engineer"]
    assert held.status == RunStatus.cancelled
    assert all(m.status == RunStatus.finished for m in later if m.agent != "data_engineer")


def test_the_pages_stop_answers_at_once_and_the_store_holds_no_running_run(
    tmp_path: Path, slow_member: threading.Event
) -> None:
    from fastapi.testclient import TestClient

    from consulta.frontends.web import create_app
    from consulta.runtime import Store

    problem = tmp_path / "problem"
    shutil.copytree(SAMPLES / "electricity_demand", problem)
    script = write_script(tmp_path / "team.json")
    settings = Settings(
        home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang="en"
    )
    with TestClient(create_app(app="modeling", settings=settings, options={"problem": str(problem)})) as client:
        token = client.post("/api/sessions").json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        started = client.post("/api/runs", json={"prompt": "start"}, headers=headers)
        assert started.status_code == 201, started.text
        run_id = started.json()["id"]
        assert slow_member.wait(60)
        clock = time.perf_counter()
        stopped = client.post(f"/api/runs/{run_id}/stop", headers=headers)
        took = time.perf_counter() - clock
        assert stopped.status_code == 200 and stopped.json()["status"] == "cancelled", stopped.text
        assert took < 5, f"the stop took {took:.1f} s"
        store = Store(settings.database_url)
        members = [r for r in store.list_runs(app="modeling", limit=200) if r.parent_run_id == run_id]
        time.sleep(0.5)
        later = [r for r in store.list_runs(app="modeling", limit=200) if r.parent_run_id == run_id]
    _members_stopped(members, later)
    assert store.get_run(run_id).status == RunStatus.cancelled
