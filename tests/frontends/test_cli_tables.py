"""The terminal's tables keep ids whole at 80 columns (people copy them into the next command): `consulta runs`,
`asks` and `consultations` print every full id, however long the other columns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from consulta.runtime import Store, utcnow

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("CONSULTA_HOME", str(tmp_path))
    monkeypatch.setenv("CONSULTA_LANG", "en")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("CONSULTA_DATABASE_URL", raising=False)
    return Store(f"sqlite:///{tmp_path}/consulta.db")


def _filled(store: Store) -> tuple[list[str], list[str], list[str]]:
    """Two runs with long prompts, a question each with long words, a consultation each with long rules."""
    long = "Please thaw the tube of K562-dTAG-BRD4 in box 2 and record it with today's date " * 3
    runs, asks, consultations = [], [], []
    for i in range(2):
        run = store.create_run(
            app="ln2", prompt=long, model="scripted:/a/very/long/path/to/a/script.yaml", lang="en", principal="local"
        )
        runs.append(run.id)
        payload = {
            "questions": [
                {"header": "Cell Line", "question": long, "options": ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"]}
            ]
        }
        asks.append(store.create_ask(run_id=run.id, kind="question", payload=payload, tool_call_id=f"call_{i}").id)
        request = {"expert_id": "data_inspector", "expected_output_type": "suitability_judgment_with_a_long_name"}
        rules = [{"rule_name": f"rule_number_{n}_with_a_long_name"} for n in range(4)]
        consultations.append(
            store.record_consultation(
                expert_id="data_inspector",
                status="done",
                request=request,
                started_at=utcnow(),
                duration_ms=1.0,
                attempts=1,
                run_id=run.id,
                binding_rules=rules,
            ).id
        )
    return runs, asks, consultations


def _whole(output: str, ids: list[str]) -> None:
    assert all(len(line) <= 80 for line in output.splitlines()), "the table is wider than the terminal"
    for full in ids:
        assert re.search(rf"(?<![\w]){re.escape(full)}(?![\w])", output), f"{full} is not printed whole:\n{output}"


def test_runs_asks_and_consultations_print_whole_ids_at_80_columns(store: Store) -> None:
    from consulta.frontends.cli import app

    runs, asks, consultations = _filled(store)
    listed_runs = runner.invoke(app, ["runs"], env={"COLUMNS": "80"})
    assert listed_runs.exit_code == 0, listed_runs.output
    _whole(listed_runs.output, runs)
    listed_asks = runner.invoke(app, ["asks"], env={"COLUMNS": "80"})
    assert listed_asks.exit_code == 0, listed_asks.output
    _whole(listed_asks.output, asks + runs)
    listed = runner.invoke(app, ["consultations"], env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    _whole(listed.output, consultations + runs)
