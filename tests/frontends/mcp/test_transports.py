"""Real clients over real transports: the official `mcp` client starting `consulta mcp ln2` over stdio, and a client
over streamable HTTP to the server on a free port — the seed's ambiguous request, answered and approved through
elicitation, ending in a changed inventory file."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastmcp import Client as FastMCPClient
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from consulta.apps.ln2 import load_inventory, read_audit
from consulta.runtime import RunStatus, Store

from ._support import SCRIPT, Lab, sha256

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

CONSULTA = Path(sys.executable).with_name("consulta")
CHOICE = "K562-dTAG-BRD4"  # the person's answer the script's next step (record 9) stands for


def script_calls() -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of the ambiguous-request script, in order (the same script the scripted model plays)."""
    steps = yaml.safe_load(SCRIPT.read_text(encoding="utf-8"))["steps"]
    return [(c["name"], c["args"]) for step in steps for c in step.get("tool_calls", [])]


class ThePerson:
    """Answers the question with CHOICE and approves the plan; keeps what it was shown."""

    def __init__(self) -> None:
        self.seen: list[ElicitRequestFormParams] = []

    def reply(self, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams)
        self.seen.append(params)
        fields = params.requested_schema["properties"]
        if "approve" in fields:
            return ElicitResult(action="accept", content={"approve": True})
        assert CHOICE in fields["q1"]["enum"]
        return ElicitResult(action="accept", content={"q1": CHOICE})

    async def mcp_callback(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return self.reply(params)

    async def fastmcp_handler(
        self, message: str, response_type: Any, params: ElicitRequestParams, context: Any
    ) -> ElicitResult:
        return self.reply(params)


async def play_script(call: Any) -> dict[str, Any]:
    """Make the script's calls with `call(name, args) -> JSON result`; approve the plan; return what each gave."""
    results: dict[str, Any] = {}
    for name, args in script_calls():
        results[name] = await call(name, args)
        assert results[name].get("ok") is not False, results[name]
    results["apply_plan"] = await call("apply_plan", {"plan_id": results["record_thaw"]["plan_id"]})
    return results


def check_outcome(lab: Lab, results: dict[str, Any], before: str) -> None:
    assert results["question"]["result"]["raw_answers"] == [CHOICE]
    assert results["apply_plan"]["applied"] is True
    assert sha256(lab.inventory) != before
    assert 1 not in load_inventory(lab.inventory).record(9).positions
    (entry,) = read_audit(lab.inventory).entries
    assert results["apply_plan"]["audit_ids"] == [entry.audit_id]


def env_for(lab: Lab) -> dict[str, str]:
    return {"CONSULTA_HOME": str(lab.home), "CONSULTA_LANG": lab.lang, "PYTHONUNBUFFERED": "1"}


def session_runs(lab: Lab) -> list[Any]:
    store = Store(lab.settings.database_url)
    try:
        return store.list_runs()
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_client_over_stdio(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = ThePerson()
    params = StdioServerParameters(
        command=str(CONSULTA), args=["mcp", "ln2", "--inventory", str(lab.inventory)], env=env_for(lab)
    )

    async def scenario() -> tuple[str, dict[str, Any]]:
        async with Client(
            params, mode=mode, elicitation_callback=person.mcp_callback, read_timeout_seconds=60
        ) as client:

            async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                result = await client.call_tool(name, args)
                assert result.structured_content is not None
                return result.structured_content

            return client.protocol_version, await play_script(call)

    before = sha256(lab.inventory)
    protocol, results = asyncio.run(scenario())
    assert (protocol == "2026-07-28") == (mode == "auto")  # both elicitation patterns, over a real pipe
    check_outcome(lab, results, before)
    assert len(person.seen) == 2
    (run,) = session_runs(lab)
    assert run.status == RunStatus.finished and run.principal.startswith("mcp:")


def test_stdout_carries_only_the_protocol(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "inventory_stats", "arguments": {}}},
    ]
    server = subprocess.Popen(
        [str(CONSULTA), "mcp", "ln2", "--inventory", str(lab.inventory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env_for(lab)},
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    replies = []
    for message in messages:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        if "id" in message:
            replies.append(json.loads(server.stdout.readline()))
    server.stdin.close()  # the client is done: the server ends
    assert server.wait(timeout=60) == 0
    rest = server.stdout.read()
    assert [r["id"] for r in replies] == [1, 2, 3] and all(r["jsonrpc"] == "2.0" and "result" in r for r in replies)
    assert rest.strip() == ""  # nothing but protocol replies on stdout
    assert json.loads(replies[2]["result"]["content"][0]["text"])["boxes"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, server: subprocess.Popen[str], *, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert server.poll() is None, server.communicate()[1]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"the server did not listen on port {port} within {within} s")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_over_streamable_http(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path, lang="zh-CN")
    person = ThePerson()
    port = free_port()
    server = subprocess.Popen(
        [str(CONSULTA), "mcp", "ln2", "--transport", "http", "--port", str(port), "--inventory", str(lab.inventory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env_for(lab)},
        text=True,
    )
    try:
        wait_for_port(port, server)

        async def scenario() -> dict[str, Any]:
            async with FastMCPClient(
                f"http://127.0.0.1:{port}/mcp", mode=mode, elicitation_handler=person.fastmcp_handler, timeout=60
            ) as client:

                async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
                    result = await client.call_tool(name, args)
                    assert result.structured_content is not None
                    return result.structured_content

                return await play_script(call)

        before = sha256(lab.inventory)
        results = asyncio.run(scenario())
        check_outcome(lab, results, before)
        assert person.seen[0].message.startswith("Agent 正在向您提问")  # the server's language
        (run,) = session_runs(lab)
        assert run.status == RunStatus.running  # the session's run lasts as long as the server
    finally:
        server.send_signal(signal.SIGINT)
        _, errors = server.communicate(timeout=60)
    assert server.returncode == 0, errors
    (run,) = session_runs(lab)
    assert run.status == RunStatus.finished
