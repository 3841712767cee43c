from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.advisor import AdvisorTurns, agent_over
from consulta.models import ScriptedModel
from consulta.runtime import RunRecord, RunStatus, Runtime, Store

from .fakes import FakeLookups


class Chat:
    """The advisor agent on a real runtime and store, the site's look-ups faked, the model scripted."""

    def __init__(self, tmp_path: Path, steps: Any = None, *, principal: str = "web:alice") -> None:
        self.store = Store(f"sqlite:///{tmp_path}/consulta.db")
        self.lookups = FakeLookups()
        self.model = ScriptedModel(steps or [])
        self.turns = AdvisorTurns(store=self.store, lookups=self.lookups, resolve_model=lambda spec: self.model)
        self.agent = agent_over(self.turns)
        self.runtime = Runtime(store=self.store, resolve_model=lambda spec: self.model, ask_policy="defer")  # type: ignore[arg-type]
        self.principal = principal

    async def say(self, words: str, *, lang: str = "zh-CN") -> RunRecord:
        return await self.runtime.run(self.agent, words, model="scripted", lang=lang, principal=self.principal)

    @staticmethod
    def output(run: RunRecord) -> dict[str, Any]:
        assert run.status == RunStatus.finished, (run.status, run.error)
        assert run.output is not None
        return json.loads(run.output)

    def tools(self, run: RunRecord) -> list[str]:
        return [c["tool"] for c in self.output(run)["tool_calls"]]


@pytest.fixture
def chat(tmp_path: Path) -> Chat:
    return Chat(tmp_path)
