"""The tutor's MCP server in memory (scripted model): the orchestrator's tools and the tutor's upload tools are
listed with its instructions; a file uploaded by content is inspected by a real consult_expert call (the code's
verdict, the binding rule on record); bad uploads are refused with nothing written."""

from __future__ import annotations

import asyncio
import base64
import io
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, FastMCP

from apps.tutor._folders import session_uploads
from consulta.apps.tutor import MAX_UPLOAD_BYTES
from consulta.config import Settings
from consulta.frontends.mcp import build_server
from consulta.runtime import Store

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
STUDENT_DATA = "name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"
INSPECT = {
    "expert_id": "data_inspector",
    "question": "Is student_data.csv suitable for task_2_1?",
    "context": {"file_name": "student_data.csv", "task_id": "task_2_1"},
    "expected_output_type": "suitability_judgment",
    "scenario_id": "dataset_suitability_check",
    "reasoning": "The student just uploaded this file.",
}


def settings(home: Path) -> Settings:
    with resources.as_file(SCRIPT) as script:
        return Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang="en")


@pytest.fixture
def server(tmp_path: Path) -> FastMCP:
    return build_server(app="tutor", settings=settings(tmp_path))


def uploads(home: Path) -> list[str]:
    folder = session_uploads(home)
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.structured_content is not None, result
    return result.structured_content


async def call_once(server: FastMCP, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    async with Client(server) as client:
        return await call(client, tool, args)


def test_the_tools_and_instructions(server: FastMCP) -> None:
    async def scenario() -> set[str]:
        async with Client(server) as client:
            return {tool.name for tool in await client.list_tools()}

    names, instructions = asyncio.run(scenario()), server.instructions or ""
    assert {"consult_expert", "submit_instruction_packet", "upload_dataset", "list_uploads"} <= names
    assert "upload_dataset" in instructions and "consult_expert" in instructions


def test_upload_by_content_then_consult_expert(server: FastMCP, tmp_path: Path) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with Client(server) as client:
            return [
                await call(client, "upload_dataset", {"name": "student_data.csv", "content": STUDENT_DATA}),
                await call(client, "list_uploads", {}),
                await call(client, "consult_expert", INSPECT),
            ]

    saved, listed, result = asyncio.run(scenario())
    assert saved["ok"] is True and saved["file"]["size"] == len(STUDENT_DATA)
    assert [f["name"] for f in listed["files"]] == ["student_data.csv"]
    assert result["expert_id"] == "data_inspector" and result["consultation_id"].startswith("consult_")
    assert result["expert_output"]["is_suitable"] is False  # the code's verdict over the scripted model's
    assert [r["rule_name"] for r in result["binding_rules_triggered"]] == ["dataset_not_suitable"]
    assert result["instruction_updates"]["blocked_steps"] == ["analysis"]
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    try:
        (kept,) = store.list_consultations()
    finally:
        store.close()
    assert kept.id == result["consultation_id"] and kept.status == "done"


def test_an_excel_file_goes_in_as_base64(server: FastMCP, tmp_path: Path) -> None:
    workbook = io.BytesIO()
    with zipfile.ZipFile(workbook, "w") as parts:  # what the upload checks of a workbook: a zip with xl/workbook.xml
        parts.writestr("xl/workbook.xml", "<workbook/>")
    data = workbook.getvalue()
    args = {"name": "scores.xlsx", "content": base64.b64encode(data).decode(), "encoding": "base64"}
    saved = asyncio.run(call_once(server, "upload_dataset", args))
    assert saved["ok"] is True
    assert (session_uploads(tmp_path) / "scores.xlsx").read_bytes() == data


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": "../escape.csv", "content": STUDENT_DATA}, "path_outside_uploads"),
        ({"name": "notes.md", "content": STUDENT_DATA}, "unsupported_file_type"),
        ({"name": "empty.csv", "content": ""}, "empty_file"),
        ({"name": "big.csv", "content": "x" * (MAX_UPLOAD_BYTES + 1)}, "file_too_large"),
        ({"name": "scores.xlsx", "content": "not base64!", "encoding": "base64"}, "invalid_base64"),
    ],
)
def test_a_bad_upload_is_refused_and_nothing_is_written(
    server: FastMCP, tmp_path: Path, args: dict[str, Any], code: str
) -> None:
    result = asyncio.run(call_once(server, "upload_dataset", args))
    assert result["ok"] is False and result["error_code"] == code, result
    assert uploads(tmp_path) == []
