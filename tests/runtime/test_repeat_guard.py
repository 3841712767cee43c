"""A read call repeated with the same arguments in one turn is answered with `repeated_call` (small models loop)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from consulta.models import ScriptedModel
from consulta.runtime import Agent, Runtime, Store, read_tool
from consulta.runtime._engine import load_messages


def test_repeated_read_call_in_one_turn_is_refused_but_not_across_turns(tmp_path: Path) -> None:
    calls: list[str] = []

    @read_tool
    def lookup(name: str, exact: bool = False) -> dict:
        """Look up."""
        calls.append(name)
        return {"ok": True}

    steps = {
        "turns": [
            [
                {"tool_calls": [{"name": "lookup", "args": {"name": "K562"}}]},
                {
                    "tool_calls": [{"name": "lookup", "args": {"name": "K562", "exact": False}}]
                },  # same, defaults spelled out
                {"tool_calls": [{"name": "lookup", "args": {"name": "HeLa"}}]},
                {"text": "done"},
            ],
            [
                {"tool_calls": [{"name": "lookup", "args": {"name": "K562"}}]},  # a new turn may look again
                {"text": "again"},
            ],
        ]
    }
    agent = Agent(app="toy", instructions="x", tools=(lookup,))
    store = Store(f"sqlite:///{tmp_path}/s.db")
    runtime = Runtime(store=store, resolve_model=lambda s: ScriptedModel(steps))

    async def scenario() -> None:
        first = await runtime.run(agent, "find K562", model="s")
        second = await runtime.run(agent, "and now?", model="s", continue_from=first.id)
        assert second.output == "again"

        def results(run_id: str) -> dict:
            return {
                p.tool_call_id: p.content
                for m in load_messages(store.load_checkpoint(run_id)[1])
                for p in getattr(m, "parts", [])
                if p.part_kind == "tool-return"
            }

        assert results(first.id)["call_1_0"]["error_code"] == "repeated_call"
        assert results(first.id)["call_2_0"] == {"ok": True}
        # The second turn carries the first as words only (no tool traffic), and may look K562 up again.
        assert results(second.id) == {"call_t1_0_0": {"ok": True}}
        await runtime.aclose()

    asyncio.run(scenario())
    assert calls == ["K562", "HeLa", "K562"]


def test_a_model_that_keeps_repeating_a_refused_call_stops_the_run_early(tmp_path: Path) -> None:
    @read_tool
    def lookup(name: str) -> dict:
        """Look up."""
        return {"ok": True}

    same = {"tool_calls": [{"name": "lookup", "args": {"name": "K562"}}]}
    model = ScriptedModel([same] * 20 + [{"text": "never"}])
    agent = Agent(app="toy", instructions="x", tools=(lookup,))
    store = Store(f"sqlite:///{tmp_path}/s.db")

    async def scenario():  # noqa: ANN202
        runtime = Runtime(store=store, resolve_model=lambda s: model)
        try:
            return await runtime.run(agent, "find K562", model="s")
        finally:
            await runtime.aclose()

    run = asyncio.run(scenario())
    assert run.status.value == "failed" and run.error is not None
    assert run.error.startswith("The model called lookup with the same arguments again after 3 refusals")
    refused = [c for c in store.list_tool_calls(run.id) if c.error_code == "repeated_call"]
    assert len(refused) == 3  # the first call ran, three repeats were refused, the fourth stopped the run
