"""Any app is served by every front end without an edit under frontends/: the test-only `probe` app (tests/frontends/
probe) gets its web page, route and assets, an MCP server with its instructions and extra tool, terminal chat with
its flag and welcome line, and the host's hand-over from its planner to its speaker everywhere. And no code under
frontends/ names an app."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from consulta.apps import app_names, get_app, register_app
from consulta.config import Settings
from consulta.frontends import AppHost, PersonView
from consulta.frontends.cli import app as cli
from consulta.frontends.mcp import build_server
from consulta.frontends.web import create_app
from consulta.i18n import catalog
from consulta.runtime import RunRecord, RunStatus, Store

from .mcp._support import call, client
from .probe import PROBE, write_script
from .web.conftest import new_session, run_status

FRONTENDS = Path(__file__).resolve().parents[2] / "src" / "consulta" / "frontends"
APP_WORDS = ("inventory", "uploads", "thaw", "cryo", "pandas", "orchestrator", "assistant", "student")
"""Words of one app or another (besides the apps' names): a front end that says them serves a particular app."""


def settings(home: Path) -> Settings:
    return Settings(
        home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{write_script(home)}", lang="en"
    )


def runs_of(home: Path) -> list[RunRecord]:
    store = Store(f"sqlite:///{home}/consulta.db")
    try:
        return list(reversed(store.list_runs(app="probe")))
    finally:
        store.close()


def test_no_code_under_frontends_names_an_app() -> None:
    names = [n for n in app_names() if n != "probe"]
    assert {"ln2", "tutor"} <= set(names)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, [*names, *APP_WORDS])) + r")\b", re.IGNORECASE)
    files = [p for p in FRONTENDS.rglob("*") if p.is_file() and p.suffix in (".py", ".js", ".html", ".css")]
    assert len(files) > 30, "the front ends' files were not found: the scan is broken"
    found = [
        f"{p.relative_to(FRONTENDS)}:{n}: {m.group(0)}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in pattern.finditer(line)
    ]
    assert found == []


def test_the_scan_would_catch_an_app_name() -> None:
    pattern = re.compile(r"\b(ln2|inventory)\b", re.IGNORECASE)
    assert pattern.search('if app_def.name == "ln2":') and pattern.search("options['inventory']")


def test_the_web_front_end_serves_the_probe_page_route_assets_and_hand_over(tmp_path: Path) -> None:
    with TestClient(create_app(app=PROBE, settings=settings(tmp_path), options={"motto": "onwards"})) as http:
        page = http.get("/")
        assert page.status_code == 200
        assert '<p id="probe-motto"></p>' in page.text and 'data-app="probe"' in page.text
        assert (
            'data-app-script="/apps/probe/static/app.js"' in page.text
            and 'href="/apps/probe/static/app.css"' in page.text
        )
        assert "mount" in http.get("/apps/probe/static/app.js").text
        http.cookies.clear()  # the page's session cookie
        assert http.get("/api/probe/motto").status_code == 401
        alice = new_session(http)
        assert http.get("/api/probe/motto", headers=alice).json() == {
            "motto": "onwards",
            "data": "onwards",
        }  # the app's route has the front end's sessions
        assert http.get("/api/app").json()["app"] == "probe"

        run = http.post("/api/runs", json={"prompt": "hello"}, headers=alice).json()
        first = run_status(http, alice, run["id"], "finished")
        assert first["output"] == "planned"
        events = _events(http, alice, run["id"])
        (handed,) = [e for e in events if e["type"] == "handed_over"]  # right after the run's end (the page follows it)
        assert handed["agent"] == "speaker" and [e["type"] for e in events][-2:] == ["run_ended", "handed_over"]
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        second = run_status(http, alice, handed["next_run_id"], "finished")
        assert second["output"] == "Spoken!"
        listed = [r["id"] for r in http.get("/api/runs", headers=alice).json()]
        assert set(listed) == {run["id"], second["id"]}  # the speaker's run is the same person's


def _events(http: Any, headers: dict[str, str], run_id: str) -> list[dict[str, Any]]:
    """The run's recorded events, from its stream's replay."""
    body = http.get(f"/api/runs/{run_id}/events", params={"follow": "false"}, headers=headers).text
    frames = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    return [f for f in frames if "type" in f]


def test_the_host_hands_over_and_records_each_agent_with_its_options(tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        heard: list[Any] = []
        host = AppHost(app=PROBE, settings=settings(tmp_path), options={"motto": "onwards"}, ask_policy="defer")
        host.subscribe(heard.append)
        try:
            run = await host.start("hello", principal="p")
            assert (await host.settled(run.id, principal="p")).status == RunStatus.finished
            follow = await host.handed_over(run.id)
            assert follow is not None
            done = await host.settled(follow.id, principal="p")
            assert done.output == "Spoken!" and done.principal == "p"
            assert done.options["tone"] == "loud" and done.options["motto"] == "onwards"  # its own options
            assert host.store.get_run(run.id).options["tone"] is None
            if hasattr(done, "agent"):  # RunRecord.agent (the store's part of issue 9)
                assert (host.store.get_run(run.id).agent, done.agent) == ("planner", "speaker")
                assert host.agent_for(done).name == "speaker"  # a resumed speaker comes back as the speaker
            return heard
        finally:
            await host.aclose()

    heard = asyncio.run(scenario())
    types = [e.type for e in heard]
    # The first run's end is told once the next run has started, and its hand-over with it: a front end that sees
    # it end knows what follows.
    first_end = types.index("run_ended")
    assert types.index("handed_over") == first_end + 1 and types[:first_end].count("run_started") == 2
    handed = heard[first_end + 1]
    assert handed.seq == heard[first_end].seq + 1  # numbered by the store, after the run's end


def test_a_person_reads_their_message_and_the_reply_of_the_agent_that_speaks_to_them(tmp_path: Path) -> None:
    """Through `PersonView` (the desktop's and the terminal's reading of the host's events): the speaker's run,
    started by the hand-over, shows no prompt as the person's; the planner's run, which handed over, shows no reply;
    its tool call shows; the speaker's reply shows, before its run's end."""

    async def scenario() -> tuple[list[Any], list[Any], str, str]:
        shown: list[Any] = []
        heard: list[Any] = []
        host = AppHost(app=PROBE, settings=settings(tmp_path), ask_policy="defer")
        host.subscribe(heard.append)
        host.subscribe(PersonView(host, shown.append))
        try:
            run = await host.start("hello", principal="p")
            await host.settled(run.id, principal="p")
            follow = await host.handed_over(run.id)
            assert follow is not None
            await host.settled(follow.id, principal="p")
            assert (host.handed_from(follow.id), host.handed_to(run.id)) == (run.id, follow.id)
            assert host.handed_from(run.id) is None and host.handed_to(follow.id) is None
            return shown, heard, run.id, follow.id
        finally:
            await host.aclose()

    shown, heard, first, second = asyncio.run(scenario())
    assert [e.type for e in heard if e.type == "model_text"] == ["model_text", "model_text"]  # both replies were told
    prompts = [e.prompt for e in shown if e.type == "run_started"]
    replies = [(e.run_id, e.text) for e in shown if e.type == "model_text"]
    assert prompts == ["hello"] and replies == [(second, "Spoken!")]
    assert [e.tool_name for e in shown if e.type == "tool_called"] == ["note"]
    assert sorted(e.run_id for e in shown if e.type == "run_ended") == sorted([first, second])
    assert not [e for e in shown if e.type == "handed_over"]
    ended = [i for i, e in enumerate(shown) if e.type == "run_ended" and e.run_id == second][0]
    assert shown.index(next(e for e in shown if e.type == "model_text")) < ended  # the reply before its run's end


def test_an_options_model_refuses_bad_options_clearly(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="nonsense"):
        create_app(app=PROBE, settings=settings(tmp_path), options={"nonsense": 1})
    assert PROBE.recorded_options({"motto": "x", "database_url": "old"}).motto == "x"  # what old runs recorded is read


def test_the_mcp_server_serves_the_probes_instructions_and_extra_tool(tmp_path: Path) -> None:
    server = build_server(app=PROBE, settings=settings(tmp_path), options={"motto": "onwards"})
    assert "Probe over MCP" in (server.instructions or "") and "You are the probe planner." in (
        server.instructions or ""
    )

    async def scenario() -> None:
        async with client(server, "legacy") as c:
            names = {t.name for t in await c.list_tools()}
            assert names == {"note", "motto"}  # no writes: no apply_plan
            assert (await call(c, "motto", {}))["motto"] == "onwards"
            assert (await call(c, "note", {"text": "hi"}))["noted"] == "hi"

    asyncio.run(scenario())


def test_a_run_driven_from_outside_is_not_handed_over(tmp_path: Path) -> None:
    """An MCP session's run: its client's model speaks next, not the app's next agent."""

    async def scenario() -> None:
        host = AppHost(app=PROBE, settings=settings(tmp_path), ask_policy="defer")
        try:
            run = host.store.create_run(
                app="probe", prompt="(MCP session)", model="mcp:client", lang="en", principal="mcp:s1"
            )
            host.store.set_run_status(run.id, RunStatus.finished)
            assert await host.follow_up(run.id) is None
            assert [r.id for r in runs_of(tmp_path)] == [run.id]
        finally:
            await host.aclose()

    asyncio.run(scenario())


def test_terminal_chat_takes_the_probes_flag_and_follows_the_hand_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONSULTA_HOME", str(tmp_path))
    monkeypatch.setenv("CONSULTA_LANG", "en")
    monkeypatch.delenv("CONSULTA_DATABASE_URL", raising=False)
    register_app(PROBE)
    assert get_app("probe") is PROBE and "probe" in app_names()
    runner = CliRunner()
    result = runner.invoke(
        cli, ["chat", "probe", "--motto", "onwards", "--model", f"scripted:{write_script(tmp_path)}", "-p", "hello"]
    )
    assert result.exit_code == 0, result.output
    assert f"probedata{tmp_path / 'apps' / 'probe' / 'probe.txt'}" in "".join(result.output.split())  # the welcome line
    assert (
        "Spoken!" in result.output and "planned" not in result.output
    )  # the planner's reply is its note to the speaker
    assert "Say what the planner said" not in result.output  # and the speaker's prompt is not the person's
    assert catalog("en")["web.step.generic"] in result.output and "note(" not in result.output  # the planner's step
    planner, speaker = runs_of(tmp_path)
    assert planner.options["motto"] == speaker.options["motto"] == "onwards" and speaker.output == "Spoken!"
    bad = runner.invoke(cli, ["chat", "probe", "--inventory", "x.yaml", "-p", "hello"])
    # An unknown flag: the app's flags are listed (a UsageError, which `main` prints as one line).
    assert bad.exit_code != 0 and "--motto" in bad.output + str(bad.exception)
    listed = runner.invoke(cli, ["apps"])
    assert "probe" in listed.output and "a test-only app" in listed.output
