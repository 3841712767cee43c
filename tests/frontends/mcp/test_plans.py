"""Writes over MCP are staged into a plan; nothing is written until the client's user approves it by elicitation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult

from consulta.apps.ln2 import RecordThaw, apply_plan, load_inventory, read_audit
from consulta.runtime import AskStatus, PlanStatus, Store

from ._support import MODES, Lab, Person, answer_elsewhere, assert_spec_form, call, client, sha256

THAW = {"record_id": 9, "positions": [1]}


def plans_and_asks(lab: Lab) -> tuple[list[Any], list[Any]]:
    store = Store(lab.settings.database_url)
    try:
        (run,) = store.list_runs()
        return store.list_plans(run_id=run.id), store.list_asks(status=None, run_id=run.id)
    finally:
        store.close()


@pytest.mark.parametrize("mode", MODES)
def test_an_approved_plan_is_applied_and_audited(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person([{"approve": True}])

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], str]:
        async with client(lab.server(), mode, person) as c:
            staged = await call(c, "record_thaw", THAW)
            untouched = sha256(lab.inventory)
            applied = await call(c, "apply_plan", {"plan_id": staged["plan_id"]})
            return staged, applied, untouched

    before = sha256(lab.inventory)
    staged, applied, untouched = asyncio.run(scenario())
    assert staged["ok"] and staged["staged"] and "record 9 (K562-dTAG-BRD4)" in staged["preview"]
    assert untouched == before  # staging wrote nothing

    assert applied["ok"] and applied["applied"] and applied["plan_id"] == staged["plan_id"]
    assert sha256(lab.inventory) != before
    assert 1 not in load_inventory(lab.inventory).record(9).positions
    (entry,) = read_audit(lab.inventory).entries
    assert applied["audit_ids"] == [entry.audit_id] and entry.op == "record_thaw" and entry.plan_id == staged["plan_id"]
    assert entry.actor.startswith("mcp:")

    ((message, schema),) = person.seen
    assert staged["preview"] in message and schema["properties"]["approve"]["type"] == "boolean"
    assert_spec_form(schema)
    (plan,), (ask,) = plans_and_asks(lab)
    assert plan.status == PlanStatus.applied and plan.ask_id == ask.id
    assert ask.kind == "plan" and ask.status == AskStatus.answered and ask.answer is True


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("reply", "plan_status", "code"),
    [
        ("decline", PlanStatus.rejected, "plan_rejected"),
        ({"approve": False}, PlanStatus.rejected, "plan_rejected"),
        ("cancel", PlanStatus.cancelled, "plan_cancelled"),
    ],
)
def test_a_plan_not_approved_writes_nothing(
    tmp_path: Path, mode: str, reply: Any, plan_status: PlanStatus, code: str
) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, Person([reply])) as c:
            staged = await call(c, "record_thaw", THAW)
            return await call(c, "apply_plan", {"plan_id": staged["plan_id"]})

    before = sha256(lab.inventory)
    result = asyncio.run(scenario())
    assert result["ok"] is False and result["error_code"] == code
    assert sha256(lab.inventory) == before and read_audit(lab.inventory).entries == []
    (plan,), (ask,) = plans_and_asks(lab)
    assert plan.status == plan_status


@pytest.mark.parametrize("mode", MODES)
def test_accepting_the_approval_form_as_it_comes_approves_nothing(tmp_path: Path, mode: str) -> None:
    """The form never defaults to approve: a client that accepts a form's defaults rejects the plan."""
    lab = Lab(tmp_path)
    schemas: list[dict[str, Any]] = []

    async def accept_defaults(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        schema = params.requested_schema
        schemas.append(schema)
        return ElicitResult(
            action="accept", content={k: f["default"] for k, f in schema["properties"].items() if "default" in f}
        )

    async def scenario() -> dict[str, Any]:
        async with Client(lab.server(), mode=mode, elicitation_handler=accept_defaults) as c:
            staged = await call(c, "record_thaw", THAW)
            return await call(c, "apply_plan", {"plan_id": staged["plan_id"]})

    before = sha256(lab.inventory)
    result = asyncio.run(scenario())
    (schema,) = schemas
    assert schema["properties"]["approve"]["default"] is False
    assert result["ok"] is False and result["error_code"] == "plan_rejected"
    assert sha256(lab.inventory) == before and read_audit(lab.inventory).entries == []
    (plan,), _ = plans_and_asks(lab)
    assert plan.status == PlanStatus.rejected


@pytest.mark.parametrize("mode", MODES)
def test_several_writes_make_one_plan_and_a_malformed_approval_is_asked_again(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person([{"approve": "perhaps"}, {"approve": True}])

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with client(lab.server(), mode, person) as c:
            first = await call(c, "record_thaw", THAW)
            second = await call(
                c, "add_entry", {"parent_cell_line": "HeLa", "box": 4, "positions": [80, 81], "short_name": "HeLa-test"}
            )
            return first, second, await call(c, "apply_plan", {"plan_id": first["plan_id"]})

    first, second, applied = asyncio.run(scenario())
    assert second["plan_id"] == first["plan_id"] and second["item"] == 2 and len(second["previews"]) == 2
    assert applied["ok"] and len(applied["audit_ids"]) == 2
    assert len(person.seen) == 2 and 'approve" or "reject' in person.seen[1][0]
    assert [e.op for e in read_audit(lab.inventory).entries] == ["record_thaw", "add_entry"]


@pytest.mark.parametrize("mode", MODES)
def test_writes_that_cannot_be_done_and_unknown_plans_change_nothing(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> list[dict[str, Any]]:
        async with client(lab.server(), mode, Person([{"approve": True}])) as c:
            results = [
                await call(c, "record_thaw", {"record_id": 9, "positions": [40]}),  # not a position of record 9
                await call(c, "record_thaw", {"record_id": 999, "positions": [1]}),
                await call(c, "apply_plan", {"plan_id": "plan_nope"}),
            ]
            staged = await call(c, "record_thaw", THAW)
            results.append(await call(c, "apply_plan", {"plan_id": staged["plan_id"]}))
            results.append(await call(c, "apply_plan", {"plan_id": staged["plan_id"]}))  # again
            return results

    before = sha256(lab.inventory)
    wrong_position, unknown_record, unknown_plan, applied, again = asyncio.run(scenario())
    assert wrong_position["ok"] is False and unknown_record["ok"] is False
    assert unknown_plan["error_code"] == "plan_not_found"
    assert applied["ok"] and again["error_code"] == "plan_closed"
    (plan,), _ = plans_and_asks(lab)
    assert [i["op"]["record_id"] for i in plan.items] == [9]  # the refused writes were never staged
    assert sha256(lab.inventory) != before and len(read_audit(lab.inventory).entries) == 1


def test_another_sessions_plan_is_not_found(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    server = lab.server()

    async def scenario() -> dict[str, Any]:
        async with (
            client(server, "legacy", Person([{"approve": True}])) as alice,
            client(server, "legacy", Person([{"approve": True}])) as bob,
        ):
            staged = await call(alice, "record_thaw", THAW)
            return await call(bob, "apply_plan", {"plan_id": staged["plan_id"]})

    before = sha256(lab.inventory)
    assert asyncio.run(scenario())["error_code"] == "plan_not_found"
    assert sha256(lab.inventory) == before


def test_a_plan_the_data_no_longer_fits_fails_and_writes_nothing(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    person = Person([{"approve": True}])

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), "2026-07-28", person) as c:
            staged = await call(c, "record_thaw", THAW)
            # Meanwhile someone takes the same tube out through another front end.
            apply_plan(
                lab.inventory,
                [RecordThaw(op="record_thaw", record_id=9, positions=[1], date="2025-07-01")],
                plan_id="plan_other",
                actor="local",
            )
            return await call(c, "apply_plan", {"plan_id": staged["plan_id"]})

    result = asyncio.run(scenario())
    assert result["ok"] is False and person.seen == []  # nobody is asked to approve a plan that cannot be applied
    assert [e.plan_id for e in read_audit(lab.inventory).entries] == ["plan_other"]
    (plan,), asks = plans_and_asks(lab)
    assert plan.status == PlanStatus.failed and asks == []


def test_a_client_without_elicitation_leaves_the_approval_to_another_front_end(tmp_path: Path) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with client(lab.server(), "2026-07-28") as c:
            staged = await call(c, "record_thaw", THAW)
            unavailable = await call(c, "apply_plan", {"plan_id": staged["plan_id"]})
            answer_elsewhere(lab, unavailable["ask_id"], "approve")  # the person approves in another front end
            return unavailable, await call(c, "apply_plan", {"plan_id": staged["plan_id"]})

    before = sha256(lab.inventory)
    unavailable, applied = asyncio.run(scenario())
    assert (
        unavailable["error_code"] == "approval_unavailable"
        and f"consulta answer {unavailable['ask_id']}" in unavailable["_hint"]
    )
    assert applied["ok"] and applied["applied"]
    assert sha256(lab.inventory) != before and read_audit(lab.inventory).entries[0].actor == "local"
