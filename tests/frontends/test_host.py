"""AppHost: runs and asks are scoped to their principal; answers are validated; a run left by a gone process is
resumed by the host that answers its ask, or (left mid-step, or with its asks closed) adopted by a server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from consulta.config import Settings
from consulta.frontends import AppHost
from consulta.runtime import AskStatus, ConfigError, ConflictError, InvalidAnswerError, NotFoundError, RunStatus, Store

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")


def settings(tmp_path: Path) -> Settings:
    with resources.as_file(SCRIPT) as script:
        return Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}")


def test_principals_see_only_their_own_runs_and_asks(tmp_path: Path) -> None:
    async def scenario() -> None:
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        try:
            run = await host.start("帮我取一管K562", principal="web:alice")
            run = await host.runtime.settled(run.id)
            assert run.status == RunStatus.waiting and run.principal == "web:alice"
            (ask,) = host.asks(principal="web:alice")
            assert host.asks(principal="web:bob") == []
            assert host.runs(principal="web:bob") == []
            with pytest.raises(NotFoundError):
                host.run(run.id, principal="web:bob")
            with pytest.raises(NotFoundError) as foreign:
                await host.answer(ask.id, ["K562-WT"], principal="web:bob")
            with pytest.raises(NotFoundError) as unknown:
                host.ask("ask_nope", principal="web:bob")
            assert str(foreign.value).replace(ask.id, "X") == str(unknown.value).replace(
                "ask_nope", "X"
            )  # nothing leaks
            with pytest.raises(InvalidAnswerError):
                await host.answer(ask.id, [["K562-WT", "K562-dTAG-BRD4"]], principal="web:alice")
            assert host.ask(ask.id, principal="web:alice").status == AskStatus.pending  # errors change nothing

            closed = await host.answer(ask.id, ["K562-dTAG-BRD4"], principal="web:alice")
            assert closed.answered_by == "web:alice"
            with pytest.raises(ConflictError):
                await host.answer(ask.id, ["K562-WT"], principal="web:alice")
            run = await host.runtime.settled(run.id)
            (plan,) = host.asks(principal="web:alice")
            assert plan.kind == "plan"
        finally:
            await host.aclose()

    asyncio.run(scenario())


def test_an_answer_resumes_a_run_whose_process_is_gone(tmp_path: Path) -> None:
    async def first() -> str:
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        run = await host.start("帮我取一管K562", principal="token:lab")
        await host.runtime.settled(run.id)
        await host.aclose()
        return run.id

    async def second(run_id: str) -> None:
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        # The first host is gone (same process here, so it counts as ours: claimable, not live elsewhere).
        assert not host.runtime.is_running_here(run_id)
        try:
            (ask,) = host.asks(principal="token:lab", run_id=run_id)
            await host.answer(ask.id, ["K562-dTAG-BRD4"], principal="token:lab")
            assert host.runtime.is_running_here(run_id)
            run = await host.runtime.settled(run_id)
            assert run.status == RunStatus.waiting
            (plan,) = host.asks(principal="token:lab")
            assert plan.kind == "plan"
            await host.answer(plan.id, "approve", principal="token:lab")
            run = await host.runtime.settled(run_id)
            assert run.status == RunStatus.finished
        finally:
            await host.aclose()

    asyncio.run(second(asyncio.run(first())))


def test_an_answer_to_an_outside_clients_run_is_recorded_and_nothing_resumes_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        try:
            run = host.store.create_run(
                app="ln2", prompt="(MCP session)", model="mcp:inspector", lang="en", principal="mcp:s1"
            )
            assert run.external
            payload = {
                "questions": [{"header": "Cell Line", "question": "Which?", "options": ["K562-WT", "K562-dTAG-BRD4"]}]
            }
            ask = host.store.create_ask(
                run_id=run.id, kind="question", payload=payload, timeout_s=60, trace_id=run.trace_id
            )
            closed = await host.answer(ask.id, ["K562-WT"], principal="mcp:s1")
            assert closed.status == AskStatus.answered
            assert not host.runtime.is_running_here(run.id)
            assert (
                await host.runtime.resume(run.id, host.agent)
            ).status == RunStatus.running  # untouched: the client drives it
        finally:
            await host.aclose()

    asyncio.run(scenario())


ELSEWHERE = "elsewhere:4242:abcdef"
"""A holder on another machine: its pid cannot be checked from here, only its lease's heartbeat."""


def lease(url: str, run_id: str, *, owner: str = ELSEWHERE, age: float = 0.0, status: str | None = None) -> None:
    """Give the run's lease to `owner`, its last heartbeat `age` seconds ago (and set its status, if given)."""
    engine = sqlalchemy.create_engine(url)
    sets = "owner = :owner, heartbeat_at = :at" + (", status = :status" if status else "")
    with engine.begin() as conn:
        conn.execute(
            sqlalchemy.text(f"UPDATE runs SET {sets} WHERE id = :id"),
            {"id": run_id, "owner": owner, "at": time.time() - age, "status": status},
        )
    engine.dispose()


def test_an_answer_while_the_holder_looks_alive_leaves_the_run_to_it_until_its_lease_is_stale(tmp_path: Path) -> None:
    """A holder on another machine that died: the run answered here waits until its lease is stale, then a server
    adopts it; a holder that carries on itself is left alone."""
    url = settings(tmp_path).database_url

    async def waiting_run(host: AppHost) -> str:
        run = await host.start("帮我取一管K562", principal="token:lab")
        await host.runtime.settled(run.id)
        return run.id

    async def scenario() -> None:
        first = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        abandoned, carried = await waiting_run(first), await waiting_run(first)
        await first.aclose()
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        try:
            for run_id in (abandoned, carried):
                lease(url, run_id)  # a fresh heartbeat from another machine
                (ask,) = host.asks(principal="token:lab", run_id=run_id)
                await host.answer(ask.id, ["K562-dTAG-BRD4"], principal="token:lab")
                assert not host.runtime.is_running_here(run_id)  # its holder may carry it on
            lease(url, carried, status="running")  # ... and this one's does
            assert await host.adopt_orphans() == []
            lease(url, abandoned, age=60)  # the holder's heartbeat stopped a minute ago
            assert await host.adopt_orphans() == [abandoned]
            assert (await host.runtime.settled(abandoned)).status == RunStatus.waiting
            assert [a.kind for a in host.asks(principal="token:lab", run_id=abandoned)] == ["plan"]
            assert not host.runtime.is_running_here(carried)
        finally:
            await host.aclose()

    asyncio.run(scenario())


def test_a_server_adopts_runs_whose_holder_died_mid_step_and_leaves_those_waiting_on_an_answer(tmp_path: Path) -> None:
    async def scenario() -> None:
        first = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        mid_step = await first.start("帮我取一管K562", principal="token:lab")
        waiting = await first.start("帮我取一管K562", principal="token:lab")
        for run in (mid_step, waiting):
            await first.runtime.settled(run.id)
        (ask,) = first.asks(principal="token:lab", run_id=mid_step.id)
        await first.aclose()
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        try:
            # The holder (on another machine) closed the ask and died while continuing: running, its lease stale.
            host.runtime.answer(ask.id, ["K562-dTAG-BRD4"])
            lease(host.settings.database_url, mid_step.id, age=60, status="running")
            lease(host.settings.database_url, waiting.id, age=60)  # died while its question waits
            assert await host.adopt_orphans() == [mid_step.id]
            assert (await host.runtime.settled(mid_step.id)).status == RunStatus.waiting
            assert [a.kind for a in host.asks(principal="token:lab", run_id=mid_step.id)] == ["plan"]
            assert not host.runtime.is_running_here(waiting.id)  # it waits on its question: its answer takes it up
            assert await host.adopt_orphans() == []
        finally:
            await host.aclose()

    asyncio.run(scenario())


# ---- an answer reads its ask once ------------------------------------------------------------------------------


@pytest.fixture
def ask_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every read of an ask by id, by anyone in this process (the store's own reads included)."""
    reads: list[str] = []
    read = Store.get_ask

    def counted(self: Store, ask_id: str) -> Any:
        reads.append(ask_id)
        return read(self, ask_id)

    monkeypatch.setattr(Store, "get_ask", counted)
    return reads


def test_an_answer_and_a_cancel_read_the_ask_once(tmp_path: Path, ask_reads: list[str]) -> None:
    async def scenario() -> None:
        host = AppHost(app="ln2", settings=settings(tmp_path), ask_policy="defer")
        try:
            run = await host.start("帮我取一管K562", principal="web:alice")
            await host.runtime.settled(run.id)
            (ask,) = host.asks(principal="web:alice")
            ask_reads.clear()
            await host.answer(ask.id, ["K562-dTAG-BRD4"], principal="web:alice")
            assert ask_reads == [ask.id]
            run = await host.runtime.settled(run.id)
            (plan,) = host.asks(principal="web:alice")
            ask_reads.clear()
            record = host.ask(plan.id, principal="web:alice")  # what the web route reads to check the body
            await host.cancel(record, principal="web:alice")
            assert ask_reads == [plan.id]  # given the record: not read again
            assert host.store.list_asks(run_id=run.id, status="cancelled")[0].id == plan.id
        finally:
            await host.aclose()

    asyncio.run(scenario())


def test_the_web_answer_route_reads_the_ask_once(tmp_path: Path, ask_reads: list[str]) -> None:
    from fastapi.testclient import TestClient

    from consulta.frontends.web import create_app

    from .web.conftest import new_session, pending_ask

    with TestClient(create_app(app="ln2", settings=settings(tmp_path))) as client:
        alice = new_session(client)
        client.post("/api/runs", json={"prompt": "帮我取一管K562"}, headers=alice)
        question = pending_ask(client, alice, kind="question")
        ask_reads.clear()
        answered = client.post(
            f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=alice
        )
        assert answered.status_code == 200 and answered.json()["status"] == "answered"
        assert ask_reads == [question["id"]]
        plan = pending_ask(client, alice, kind="plan")
        ask_reads.clear()
        assert client.post(f"/api/asks/{plan['id']}/cancel", headers=alice).status_code == 200
        assert ask_reads == [plan["id"]]


# ---- traces ----------------------------------------------------------------------------------------------------


def test_the_traces_setting_traces_the_hosts_runs_to_a_file(tmp_path: Path) -> None:
    path = tmp_path / "traces" / "traces.jsonl"
    traced = replace(settings(tmp_path), traces=f"file:{path}")

    async def scenario() -> str:
        host = AppHost(app="ln2", settings=traced, ask_policy="defer")
        try:
            assert host.tracing is not None and host.tracing.destination == str(path)
            run = await host.start("帮我取一管K562", principal="web:alice")
            run = await host.runtime.settled(run.id)
            assert run.status == RunStatus.waiting
            return run.trace_id
        finally:
            await host.aclose()  # shuts the tracing down: the batch is flushed, the waiting run's span ended

    trace_id = asyncio.run(scenario())
    spans = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    names = {s["name"] for s in spans}
    assert {"run ln2", "step 1", "tool question", "ask question"} <= names, names
    assert {s["context"]["trace_id"] for s in spans} == {f"0x{trace_id}"}
    assert Settings.from_env(home=tmp_path).traces == "off"  # off unless set


def test_the_traces_setting_is_read_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONSULTA_TRACES", "console")
    assert Settings.from_env(home=tmp_path).traces == "console"
    monkeypatch.setenv("CONSULTA_TRACES", "loud")
    with pytest.raises(ConfigError, match="is not a traces setting"):
        AppHost(app="ln2", settings=Settings.from_env(home=tmp_path))
    assert not (tmp_path / "consulta.db").exists()  # refused before anything was opened


@pytest.mark.subprocess  # `consulta runs` as a child process
def test_a_bad_traces_setting_is_one_line_from_the_command(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CONSULTA_HOME": str(tmp_path),
        "CONSULTA_TRACES": "file:",
        "CONSULTA_LANG": "en",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        "COLUMNS": "300",
    }
    env.pop("CONSULTA_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "consulta", "runs"], env=env, capture_output=True, text=True, timeout=60
    )
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 2, said
    assert "Traceback" not in said and len(said.splitlines()) == 1 and "CONSULTA_TRACES=file: needs a path" in said
