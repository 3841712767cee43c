"""No write without an approved plan: every path that applies operations goes through a plan whose approval ask a
person answered `approve`.

Two halves. The source is read for every place that reaches the application primitives — an app's
`PlanExecutor.apply` and ln2's `apply_plan` — and finds exactly the known ones (a new one fails here until it is
routed through `PlanBook.decide`). Then each way a write is started — the agent's write in a run (web), an MCP
client's `apply_plan`, a person's rollback on the web page and on the desktop (`propose_rollback`, what the desktop's
rollback button calls) — is walked with the executor spied on: at the moment it applies, the plan is pending and its
ask answered `approve` by the run's own principal; rejected, it is never called.
"""

from __future__ import annotations

import ast
import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult

import consulta
from consulta.apps import ln2
from consulta.apps.ln2 import Ln2Plans
from consulta.config import Settings
from consulta.frontends import AppHost
from consulta.frontends.mcp import build_server
from consulta.frontends.web import create_app
from consulta.runtime import AskStatus, PlanStatus, Store

SRC = Path(consulta.__file__).parent
SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
AMBIGUOUS = "帮我取一管K562"

APPLYING = {
    ("runtime/_plan_book.py", "PlanBook.decide", "executor.apply"),  # applies a plan whose ask was answered approve
    ("apps/ln2/_tools.py", "Ln2Plans.apply", "apply_plan"),  # ln2's PlanExecutor.apply
    # The MCP tool named apply_plan (a stub describing it): the tool asks for approval and decides through PlanBook.
    ("frontends/mcp/_frontend.py", "McpFrontEnd.__init__", "apply_plan"),
}
"""Where the source reaches an application primitive: (file, function, what it reaches)."""


# ---- the source -----------------------------------------------------------------------------------------------------


class _Reaches(ast.NodeVisitor):
    """References to `apply_plan` (not its definition or import) and to `<…executor>.apply`, by enclosing function."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.scope: list[str] = []
        self.found: set[tuple[str, str, str]] = set()

    def _enter(self, node: ast.AST, name: str) -> None:
        self.scope.append(name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        self._enter(node, node.name)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802
        self._enter(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:  # noqa: N802
        self._enter(node, node.name)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802
        if node.id == "apply_plan":
            self.found.add((self.file, ".".join(self.scope), "apply_plan"))

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        receiver = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        if node.attr == "apply_plan" or (node.attr == "apply" and receiver.endswith("executor")):
            self.found.add((self.file, ".".join(self.scope), f"{receiver}.{node.attr}"))
        self.generic_visit(node)


def test_the_source_reaches_the_application_primitives_only_through_an_approved_plan() -> None:
    found: set[tuple[str, str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        visitor = _Reaches(path.relative_to(SRC).as_posix())
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        found |= visitor.found
    assert found == APPLYING, "a new path applies operations: stage them as a plan and apply through PlanBook.decide"


def test_plan_book_applies_only_an_approved_ask() -> None:
    source = (SRC / "runtime" / "_plan_book.py").read_text(encoding="utf-8")
    decide = source[source.index("    async def decide(") : source.index("    def decline(")]
    guard = decide.index('if ask.status != AskStatus.answered or not (ask.outcome or {}).get("approve"):')
    assert (
        guard < decide.index("executor.apply")
        and "return self.decline(ask)" in decide[guard : decide.index("executor.apply")]
    )


# ---- the walk -------------------------------------------------------------------------------------------------------


@dataclass
class Applied:
    plan_id: str
    run_id: str
    actor: str


@pytest.fixture
def applied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[Applied]]:
    """Every application of ln2's executor, checked as it happens: its plan pending, its ask answered approve by the
    run's own principal."""
    calls: list[Applied] = []
    original = Ln2Plans.apply

    def spy(self: Ln2Plans, ops: list[dict[str, Any]], *, plan_id: str, run_id: str, actor: str) -> dict[str, Any]:
        store = Store(f"sqlite:///{tmp_path}/consulta.db")
        try:
            plan = store.get_plan(plan_id)
            assert plan.status == PlanStatus.pending and plan.run_id == run_id and plan.ask_id is not None
            ask = store.get_ask(plan.ask_id)
            assert (
                ask.kind == "plan" and ask.status == AskStatus.answered and (ask.outcome or {}).get("approve") is True
            )
            assert ask.answered_by == actor == store.get_run(run_id).principal
            assert [i["op"] for i in plan.items] == ops
        finally:
            store.close()
        calls.append(Applied(plan_id=plan_id, run_id=run_id, actor=actor))
        return original(self, ops, plan_id=plan_id, run_id=run_id, actor=actor)

    monkeypatch.setattr(Ln2Plans, "apply", spy)
    yield calls


def _settings(home: Path, model: str | None = None) -> Settings:
    with resources.as_file(SCRIPT) as script:
        return Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=model or f"scripted:{script}")


def _wait(check: Any, what: str) -> Any:
    for _ in range(500):
        if value := check():
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _pending(client: TestClient, headers: dict[str, str], kind: str) -> dict[str, Any]:
    return _wait(
        lambda: next((a for a in client.get("/api/asks", headers=headers).json() if a["kind"] == kind), None),
        f"a {kind} ask",
    )


def _finished(client: TestClient, headers: dict[str, str], run_id: str) -> None:
    _wait(
        lambda: client.get(f"/api/runs/{run_id}", headers=headers).json()["status"] == "finished",
        f"run {run_id} to finish",
    )


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_web_paths_the_agents_write_and_a_persons_rollback(
    tmp_path: Path, applied: list[Applied], decision: str
) -> None:
    with TestClient(create_app(app="ln2", settings=_settings(tmp_path))) as client:
        token = client.post("/api/sessions").json()["token"]
        alice = {"Authorization": f"Bearer {token}"}
        run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
        question = _pending(client, alice, "question")
        client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=alice)
        plan = _pending(client, alice, "plan")
        assert applied == []
        client.post(f"/api/asks/{plan['id']}/answer", json={"decision": decision}, headers=alice)
        _finished(client, alice, run["id"])
        if decision == "reject":
            assert applied == [] and client.get("/api/ln2/audit", headers=alice).json() == []
            return
        assert [a.plan_id for a in applied] == [plan["payload"]["plan_id"]]

        (entry,) = client.get("/api/ln2/audit", headers=alice).json()
        staged = client.post(f"/api/ln2/audit/{entry['audit_id']}/rollback", headers=alice).json()
        assert len(applied) == 1  # staged: nothing applied
        client.post(f"/api/asks/{staged['ask_id']}/answer", json={"decision": "approve"}, headers=alice)
        _finished(client, alice, staged["run_id"])
        assert [a.plan_id for a in applied] == [plan["payload"]["plan_id"], staged["plan_id"]]


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_desktops_rollback(tmp_path: Path, applied: list[Applied], decision: str) -> None:
    """What the desktop's rollback button does (`propose_rollback` on the window's host); the window's plan panel
    answers the plan's ask through the host like this."""
    seeded = ln2.default_inventory(tmp_path)
    op = ln2.parse_op({"op": "record_thaw", "record_id": 9, "positions": [1], "date": "2026-01-05", "action": "thaw"})
    audit_id = ln2.apply_plan(seeded, [op], plan_id="plan_seed", actor="local").audit_ids[0]
    before = seeded.read_bytes()

    async def scenario() -> None:
        host = AppHost(app="ln2", settings=_settings(tmp_path), options={"inventory": str(seeded)}, ask_policy="wait")
        try:
            proposal = await ln2.propose_rollback(host, audit_id=audit_id, principal="local", lang="en")
            assert seeded.read_bytes() == before and applied == []
            await host.answer(proposal.ask_id, decision, principal="local")
            for _ in range(250):
                if host.store.get_run(proposal.run_id).status.value == "finished":
                    break
                await asyncio.sleep(0.02)
            plan = host.store.get_plan(proposal.plan_id)
            if decision == "approve":
                assert plan.status == PlanStatus.applied and [a.plan_id for a in applied] == [proposal.plan_id]
                assert seeded.read_bytes() != before
            else:
                assert plan.status == PlanStatus.rejected and applied == [] and seeded.read_bytes() == before
        finally:
            await host.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("approve", [True, False])
def test_an_mcp_clients_apply_plan(tmp_path: Path, applied: list[Applied], approve: bool) -> None:
    inventory = ln2.default_inventory(tmp_path)

    async def person(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"approve": approve})

    async def scenario() -> dict[str, Any]:
        server = build_server(app="ln2", settings=_settings(tmp_path, "local"), options={"inventory": str(inventory)})
        async with Client(server, elicitation_handler=person) as c:
            staged = (
                await c.call_tool("record_thaw", {"record_id": 9, "positions": [1]}, raise_on_error=False)
            ).structured_content
            assert staged is not None and applied == []
            result = await c.call_tool("apply_plan", {"plan_id": staged["plan_id"]}, raise_on_error=False)
            assert result.structured_content is not None
            return {"staged": staged, "result": result.structured_content}

    outcome = asyncio.run(scenario())
    if approve:
        assert outcome["result"]["applied"] and [a.plan_id for a in applied] == [outcome["staged"]["plan_id"]]
        assert applied[0].actor.startswith("mcp:")
    else:
        assert outcome["result"]["error_code"] == "plan_rejected" and applied == []
