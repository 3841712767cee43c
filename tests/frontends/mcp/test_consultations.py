"""An MCP client's `consult_expert` call is a tool call of its session's run, as inside the runtime: the consultation
is kept on that run, the expert's run nests under it (in its trace), and the per-task budget applies; asking again
for the inspection of an unchanged file is answered from the one on record."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

from fastmcp import Client

from consulta.config import Settings
from consulta.frontends.mcp import build_server
from consulta.models import load_script
from consulta.runtime import Store

from ._support import call

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")


def scripted_consultation(script: Path) -> dict[str, Any]:
    """The consult_expert request the tutor's script has its orchestrator make (a data inspection of an upload)."""
    agents = load_script(script)["agents"]  # type: ignore[call-overload]
    return next(
        c["args"]
        for a in agents
        for step in a.get("steps", [])
        for c in step.get("tool_calls", [])
        if c["name"] == "consult_expert"
    )


def test_consult_expert_over_mcp_is_kept_on_the_sessions_run_within_its_budget(tmp_path: Path) -> None:
    with resources.as_file(SCRIPT) as script:
        settings = Settings(
            home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang="en"
        )
        request = scripted_consultation(Path(script))
    server = build_server(app="tutor", settings=settings)
    names = ["a.csv", "b.csv", "c.csv", "d.csv"]
    content = "name,score\n" + "".join(f"s{i},{i}\n" for i in range(5))

    def inspection(name: str) -> dict[str, Any]:
        return {**request, "context": {**request["context"], "file_name": name}}

    async def scenario() -> list[dict[str, Any]]:
        async with Client(server) as client:
            for name in names:
                assert (await call(client, "upload_dataset", {"name": name, "content": content}))["ok"] is True
            asked = [await call(client, "consult_expert", inspection(name)) for name in names]
            return [*asked, await call(client, "consult_expert", inspection("a.csv"))]

    *done, refused, again = asyncio.run(scenario())
    assert all(r["consultation_id"].startswith("consult_") for r in done)
    assert (
        refused["ok"] is False and refused["error_code"] == "consultation_budget_exceeded"
    )  # the tutor allows 3 per task
    assert again == done[0]  # the unchanged file's standing inspection answers again: no fourth consultation
    store = Store(settings.database_url)
    try:
        (session,) = [r for r in store.list_runs(app="tutor") if r.external]
        kept = store.list_consultations(run_id=session.id)
        assert sorted(c.id for c in kept) == sorted(r["consultation_id"] for r in done)
        calls = {c.tool_call_id: c for c in store.list_tool_calls(session.id)}
        for consultation in kept:
            assert consultation.tool_call_id in calls and calls[consultation.tool_call_id].tool_name == "consult_expert"
            expert = store.get_run(consultation.expert_run_id)
            assert (expert.parent_run_id, expert.trace_id, expert.principal) == (
                session.id,
                session.trace_id,
                session.principal,
            )
    finally:
        store.close()
