"""Every session's uploads are its own (issue 20, item 4): two web sessions (two tokens) and two MCP sessions each
try to list, read, replace and use (a run whose data inspector opens the file by name) the other's upload; every try
fails and nothing of the first session's changes. The machine's own user (terminal, desktop) keeps the app's
default folder, which no session sees either."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from fastmcp import Client

from apps.tutor._folders import session_folders
from apps.tutor.test_mcp import INSPECT
from apps.tutor.test_web import client, home  # noqa: F401 - the tutor served on a temp home, shared with its web tests
from consulta.frontends.mcp import build_server
from frontends.web.conftest import new_session, run_status, settings_for, wait_for

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
ALICE_DATA = b"name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"
BOB_DATA = b"name,age,city\n" + b"".join(b"P%d,%d,Lyon\n" % (i, 20 + i % 30) for i in range(120))
PROMPT = "I uploaded my data, can I start task_2_1?"


def upload(client: TestClient, headers: dict[str, str], data: bytes) -> Any:
    return client.post("/api/tutor/uploads", headers=headers, files={"file": ("student_data.csv", data, "text/csv")})


def listed(client: TestClient, headers: dict[str, str]) -> list[tuple[str, int]]:
    return [(f["name"], f["size"]) for f in client.get("/api/tutor/uploads", headers=headers).json()["files"]]


def inspected(client: TestClient, headers: dict[str, str], prompt: str = PROMPT) -> Any:
    """Start a turn (the data inspector opens student_data.csv for the task) and return what the inspection gave:
    the run's consultations when one was made (code's packet inspects the session's file), else what the scripted
    model's consult_expert call returned (the session has no file)."""
    run = client.post("/api/runs", headers=headers, json={"prompt": prompt}).json()
    run_status(client, headers, run["id"], "finished", "failed")
    store = client.app.state.host.store  # type: ignore[attr-defined]
    kept = store.list_consultations(run_id=run["id"])
    if kept:
        return [c.expert_output for c in kept]
    (call,) = [c for c in store.list_tool_calls(run["id"]) if c.tool_name == "consult_expert"]
    return call.result


def test_web_sessions_cannot_list_read_replace_or_use_each_others_upload(tmp_path: Path, client: TestClient) -> None:
    alice, bob = new_session(client), new_session(client)
    assert upload(client, alice, ALICE_DATA).status_code == 201
    (alice_folder,) = session_folders(tmp_path)
    before = (alice_folder / "student_data.csv").read_bytes()

    assert listed(client, bob) == []  # list: Bob sees none of Alice's files
    # use: Bob's inspector, asked by the model for the file Alice uploaded, looks in Bob's folder alone (with no file
    # of his, "can I start?" is code's packet: no inspection is asked)
    used = inspected(client, bob, "Please inspect student_data.csv for task_2_1.")
    assert used["ok"] is False and used["error_code"] == "file_not_found", used
    alice_runs = client.get("/api/runs", headers=alice).json()
    assert alice_runs == []  # read: Bob's run is not Alice's, and Alice's runs are not Bob's
    assert upload(client, bob, BOB_DATA).status_code == 201  # replace: Bob's file of the same name is Bob's own
    assert listed(client, bob) == [("student_data.csv", len(BOB_DATA))]
    assert "rows: 120" in str(inspected(client, bob))

    assert listed(client, alice) == [("student_data.csv", len(ALICE_DATA))]  # nothing of Alice's changed
    assert (alice_folder / "student_data.csv").read_bytes() == before == ALICE_DATA
    assert "rows: 3" in str(inspected(client, alice))  # Alice's run inspects Alice's file
    assert len(session_folders(tmp_path)) == 2
    assert not (tmp_path / "apps" / "tutor" / "uploads" / "student_data.csv").exists()  # nor the local user's folder


def test_a_resumed_or_handed_over_run_keeps_its_sessions_folder(tmp_path: Path, client: TestClient) -> None:
    """The assistant after the hand-over, and the orchestrator rebuilt from its record, use the session's folder."""
    alice, bob = new_session(client), new_session(client)
    assert upload(client, alice, ALICE_DATA).status_code == 201
    assert "rows: 3" in str(inspected(client, alice))
    host = client.app.state.host  # type: ignore[attr-defined]
    (alice_folder,) = session_folders(tmp_path)
    runs = wait_for(lambda: len(r := client.get("/api/runs", headers=alice).json()) == 2 and r, what="the hand-over")
    assert len(runs) == 2  # the orchestrator's and the assistant's it handed over to
    for run in runs:
        record = host.store.get_run(run["id"])
        assert Path(record.options["uploads"]) == alice_folder
        rebuilt = host.agent_for(record)  # what a resume builds
        assert Path(rebuilt.options["uploads"]) == alice_folder
    assert listed(client, bob) == []


def test_mcp_sessions_cannot_list_replace_or_use_each_others_upload(tmp_path: Path) -> None:
    with resources.as_file(SCRIPT) as script:
        server = build_server(app="tutor", settings=settings_for(tmp_path, Path(script)))

        async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, args, raise_on_error=False)
            assert result.structured_content is not None, result
            return result.structured_content

        async def scenario() -> None:
            # Two sessions where MCP has them: handshake-era connections (a 2026-07-28 connection without a user is
            # the process's one client, see consulta.frontends.mcp._sessions).
            async with Client(server, mode="legacy") as alice, Client(server, mode="legacy") as bob:
                saved = await call(
                    alice, "upload_dataset", {"name": "student_data.csv", "content": ALICE_DATA.decode()}
                )
                assert saved["ok"] is True
                assert (await call(bob, "list_uploads", {}))["files"] == []
                used = await call(bob, "consult_expert", INSPECT)
                assert used["ok"] is False and used["error_code"] == "file_not_found", used
                replaced = await call(bob, "upload_dataset", {"name": "student_data.csv", "content": BOB_DATA.decode()})
                assert replaced["ok"] is True and replaced["file"]["size"] == len(BOB_DATA)
                (mine,) = (await call(alice, "list_uploads", {}))["files"]
                assert mine["size"] == len(ALICE_DATA)
                inspected = await call(alice, "consult_expert", INSPECT)
                assert inspected["expert_output"]["is_suitable"] is False  # Alice's 3 rows, not Bob's 120

        asyncio.run(scenario())
    folders = session_folders(tmp_path)
    assert len(folders) == 2
    assert sorted((f / "student_data.csv").read_bytes() for f in folders) == sorted([ALICE_DATA, BOB_DATA])
