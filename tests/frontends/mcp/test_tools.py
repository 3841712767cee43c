"""The MCP server exposes the agent's tools as the agent sees them: names, descriptions, schemas, validation, results."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastmcp.utilities.json_schema import dereference_refs

from consulta.apps import ln2
from consulta.runtime import tool_schemas

from ._support import MODES, Lab, call, client


@pytest.mark.parametrize("mode", MODES)
def test_tools_are_the_agents_own(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    server = lab.server()

    async def scenario() -> None:
        async with client(server, mode) as c:
            listed = {tool.name: tool for tool in await c.list_tools()}
        agent = ln2.build_agent(inventory=lab.inventory)
        for spec in (s["function"] for s in tool_schemas(agent)):
            tool = listed.pop(spec["name"])
            assert tool.description == spec["description"]
            assert tool.input_schema == dereference_refs(spec["parameters"])  # FastMCP inlines $refs for clients
        (apply_plan,) = listed.values()  # the one tool the agent does not have: approving a staged plan
        assert apply_plan.name == "apply_plan"
        assert apply_plan.input_schema["required"] == ["plan_id"]

    asyncio.run(scenario())


def test_read_tools_return_what_the_agent_gets(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    server = lab.server()
    tools = {t.name: t for t in ln2.ln2_tools(lab.inventory)}
    calls = [
        ("query_inventory", {"cell_line": "K562"}),
        ("search_records", {"text": "dTAG BRD4"}),
        ("empty_positions", {"box": 2}),
        ("inventory_stats", {}),
        ("audit_history", {"limit": 3}),
    ]

    async def scenario() -> None:
        async with client(server, "2026-07-28") as c:
            for name, args in calls:
                assert await call(c, name, args) == await tools[name].call(**args), name

    asyncio.run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_tool_errors_and_bad_arguments_come_back_in_the_seed_shape(tmp_path: Path, mode: str) -> None:
    server = Lab(tmp_path).server()

    async def scenario() -> None:
        async with client(server, mode) as c:
            refused = await c.call_tool("empty_positions", {"box": 99}, raise_on_error=False)
            assert refused.is_error
            assert (
                refused.structured_content["ok"] is False and refused.structured_content["error_code"] == "invalid_box"
            )
            assert set(refused.structured_content) >= {"message", "_hint"}

            bad = await call(c, "query_inventory", {"box": "two"})
            assert bad["error_code"] == "invalid_arguments" and bad["field"] == "box"
            extra = await call(c, "record_thaw", {"record_id": 9, "positions": [1], "colour": "red"})
            assert extra["error_code"] == "invalid_arguments" and extra["field"] == "colour"
            missing = await call(c, "apply_plan", {})
            assert missing["error_code"] == "invalid_arguments" and missing["field"] == "plan_id"

    asyncio.run(scenario())
