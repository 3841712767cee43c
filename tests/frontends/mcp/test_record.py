"""Everything an MCP client does is on record: its session is a run with its tool calls, events, asks and plans,
visible to `consulta runs` / `consulta asks` and answerable from the other front ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult, Implementation, InputRequiredResult
from typer.testing import CliRunner

from consulta.frontends.cli import app as cli
from consulta.i18n import t
from consulta.runtime import AskStatus, RunStatus, Store

from ._support import Lab, Person, answer_elsewhere, call

QUESTION = {"questions": [{"header": "Cell Line", "question": "Which one?", "options": ["K562-WT", "K562-dTAG-BRD4"]}]}


def store_of(lab: Lab) -> Store:
    return Store(lab.settings.database_url)


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_session_is_a_run_with_its_calls_events_asks_and_plans(tmp_path: Path, lang: str) -> None:
    lab = Lab(tmp_path, lang=lang)
    person = Person([{"q1": "K562-dTAG-BRD4"}, {"approve": True}])
    me = Implementation(name="lab-assistant", version="1.0")

    async def scenario() -> None:
        async with Client(lab.server(), mode="2026-07-28", elicitation_handler=person, client_info=me) as c:
            await call(c, "query_inventory", {"cell_line": "K562"})
            await call(c, "empty_positions", {"box": 99})
            await call(c, "question", QUESTION)
            staged = await call(c, "record_thaw", {"record_id": 9, "positions": [1]})
            await call(c, "apply_plan", {"plan_id": staged["plan_id"]})

    asyncio.run(scenario())
    store = store_of(lab)
    (run,) = store.list_runs()
    assert run.app == "ln2" and run.model == "mcp:lab-assistant" and run.principal.startswith("mcp:")
    assert run.prompt == t("mcp.run.prompt", lang, client="lab-assistant") and run.lang == lang
    assert run.status == RunStatus.finished  # the server stopped with the client
    calls = store.list_tool_calls(run.id)
    assert [(c.tool_name, c.ok, c.error_code) for c in calls] == [
        ("query_inventory", True, None),
        ("empty_positions", False, "invalid_box"),
        ("question", True, None),
        ("record_thaw", True, None),
        ("apply_plan", True, None),
    ]
    assert [c.step for c in calls] == [1, 2, 3, 4, 5]
    question, plan = store.list_asks(status=None, run_id=run.id)
    assert question.tool_call_id == calls[2].tool_call_id and question.answered_by == run.principal
    assert plan.kind == "plan" and store.list_plans(run_id=run.id)[0].status == "applied"
    types = [e.type for e in store.list_events(run.id)]
    assert types[0] == "run_started" and types[-1] == "run_ended"
    assert types.count("tool_called") == types.count("tool_returned") == 5
    assert {"ask_opened", "ask_closed", "plan_staged", "plan_decided"} <= set(types)
    store.close()

    runner = CliRunner()
    env = {"CONSULTA_HOME": str(lab.home), "COLUMNS": "250"}
    listed = runner.invoke(cli, ["runs"], env=env)
    assert listed.exit_code == 0 and run.id in listed.output
    asked = runner.invoke(cli, ["asks", "--all"], env=env)
    assert asked.exit_code == 0 and question.id in asked.output and plan.id in asked.output


def test_each_handshake_era_session_is_its_own_run(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    server = lab.server()

    async def scenario() -> None:
        for _ in range(2):
            async with Client(server, mode="legacy") as c:
                await call(c, "inventory_stats", {})

    asyncio.run(scenario())
    store = store_of(lab)
    runs = store.list_runs()
    assert len(runs) == 2 and len({r.principal for r in runs}) == 2
    assert all(r.status == RunStatus.finished for r in runs)
    store.close()


def test_a_question_left_unanswered_is_cancelled_when_the_server_stops(tmp_path: Path) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> Any:
        async with Client(lab.server(), mode="2026-07-28", elicitation_handler=Person()) as c:
            return await c.session.call_tool("question", QUESTION, allow_input_required=True)

    assert isinstance(asyncio.run(scenario()), InputRequiredResult)  # the client walked away with the form
    store = store_of(lab)
    (ask,) = store.list_asks(status=None)
    assert ask.status == AskStatus.cancelled and ask.outcome["error_code"] == "question_cancelled"
    assert store.get_run(ask.run_id).status == RunStatus.finished
    store.close()


def test_a_question_answered_from_another_front_end_between_rounds(tmp_path: Path) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> dict[str, Any]:
        async with Client(lab.server(), mode="2026-07-28", elicitation_handler=Person()) as c:
            first = await c.session.call_tool("question", QUESTION, allow_input_required=True)
            assert isinstance(first, InputRequiredResult)
            store = store_of(lab)
            (ask,) = store.list_asks()
            store.close()
            answer_elsewhere(lab, ask.id, ["K562-WT"])
            reply = {"reply": ElicitResult(action="accept", content={"q1": "K562-dTAG-BRD4"})}
            done = await c.session.call_tool(
                "question", QUESTION, input_responses=reply, request_state=first.request_state
            )
            return done.structured_content

    result = asyncio.run(scenario())
    assert result["result"]["raw_answers"] == ["K562-WT"]  # the first answer wins; the late one changes nothing


def test_a_tampered_request_state_is_refused(tmp_path: Path) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> None:
        async with Client(lab.server(), mode="2026-07-28", elicitation_handler=Person()) as c:
            first = await c.session.call_tool("question", QUESTION, allow_input_required=True)
            forged = first.request_state[:-4] + "AAAA"
            reply = {"reply": ElicitResult(action="accept", content={"q1": "K562-WT"})}
            with pytest.raises(
                MCPError, match="requestState"
            ):  # FastMCP seals the state: a forged one never reaches the tool
                await c.session.call_tool("question", QUESTION, input_responses=reply, request_state=forged)

    asyncio.run(scenario())
    store = store_of(lab)
    (ask,) = store.list_asks(status=None)
    assert ask.answer is None
    store.close()


def test_consulta_stop_ends_a_sessions_run(tmp_path: Path) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> tuple[str, str]:
        async with Client(lab.server(), mode="2026-07-28", elicitation_handler=Person()) as c:
            await call(c, "inventory_stats", {})
            store = store_of(lab)
            (stopped,) = store.list_runs()
            store.request_cancel(stopped.id)  # what `consulta stop` does for a run another process carries
            for _ in range(200):  # bounded: the session notices within a few heartbeats
                if store.get_run(stopped.id).status == RunStatus.cancelled:
                    break
                await asyncio.sleep(0.05)
            await call(c, "inventory_stats", {})  # the next call starts a new run
            runs = {r.id: r for r in store.list_runs()}
            store.close()
            (fresh,) = set(runs) - {stopped.id}
            return stopped.id, fresh

    stopped, fresh = asyncio.run(scenario())
    store = store_of(lab)
    assert store.get_run(stopped).status == RunStatus.cancelled
    assert store.get_run(fresh).status == RunStatus.finished
    store.close()
