"""A model family per task: the modeler's typed choice (only families that can answer the task), code's check with
one retry and then a plain "could not" with the reasons, the gate's check of the family against the task, and the
paper's section of each task made of the family's sentences from its result file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from consulta.apps.modeling import Director
from consulta.apps.modeling._gates import validation_records
from consulta.apps.modeling._task_models import (
    TaskModel,
    _choice_form,
    check_task_models,
    choose_models,
    record,
    task_answer,
)
from consulta.apps.modeling._tasks import Task, statement_tasks
from consulta.apps.modeling.families import ProblemData, fitting
from consulta.models import ScriptedModel

from .team_script import team_script, workspace

STATEMENT = (
    "# Suppliers\n\n## Background\nSix suppliers are scored on quality, punctuality and price (`suppliers.csv`).\n\n"
    "## Tasks\nTask 1: Rank the suppliers.\nTask 2: Estimate the weight of each criterion.\n"
)
CHOICES = {
    1: {"family": "topsis", "table": "suppliers", "label_column": "name", "criteria": ["quality", "on_time", "price"], "cost_criteria": ["price"]},
    2: {"family": "entropy_weight", "table": "suppliers.csv", "label_column": "name", "criteria": ["quality", "no_such_column"]},
}  # fmt: skip


def _problem(folder: Path) -> Path:
    folder.mkdir(parents=True)
    pd.DataFrame({
        "name": ["S1", "S2", "S3", "S4", "S5", "S6"], "quality": [92, 85, 78, 88, 70, 95],
        "on_time": [0.96, 0.9, 0.85, 0.93, 0.8, 0.98], "price": [120, 105, 98, 110, 95, 118],
    }).to_csv(folder / "suppliers.csv", index=False)  # fmt: skip
    pd.DataFrame({"day": [1, 2, 3], "visits": [4, 5, 6]}).to_csv(folder / "visits.csv", index=False)  # used by none
    (folder / "problem.md").write_text(STATEMENT, encoding="utf-8")
    return folder


def _team(choices: dict[int, dict[str, Any]]) -> ScriptedModel:
    """The scripted double: the team's usual answers, and this choice for each task."""
    script = team_script()
    call = lambda c: [{"tool_calls": [{"name": "final_result", "args": {"why": "fits", "choice": c}}]}]  # noqa: E731
    script["agents"] = [{"when": f"为第 {n} 问选一个模型", "steps": call(c)} for n, c in choices.items()] + script[
        "agents"
    ]
    return ScriptedModel(script)


def test_the_grammar_offers_only_the_families_that_answer_the_task() -> None:
    schema = json.dumps(_choice_form(fitting("ranking")).model_json_schema())
    assert '"topsis"' in schema and '"ahp"' in schema
    assert '"leslie"' not in schema and '"shortest_path"' not in schema


def test_a_choice_the_data_does_not_support_is_sent_back_once_then_could_not(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path, problem=_problem(tmp_path / "suppliers"))
    director = Director(workspace=ws, problem=problem, model=_team(CHOICES))
    tasks = statement_tasks(problem.statement)
    assert [t.asks for t in tasks] == ["ranking", "estimate"]
    models = asyncio.run(choose_models(director, tasks, ProblemData.load(ws / "problem", problem.statement)))
    assert models[0].status == "chosen" and models[0].family == "topsis" and models[0].tries == 1
    assert models[0].params["table"] == "suppliers.csv"  # the file named as the problem names it
    assert models[1].status == "could_not" and models[1].tries == 2  # sent back once with the reasons
    assert any("no column 'no_such_column'" in r for r in models[1].reasons)
    answer = task_answer(models[1], ws, lang="en")
    assert not answer.answered and answer.text.startswith("Not answered:") and "no_such_column" in answer.text


def test_no_choice_is_a_plain_could_not(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path, problem=_problem(tmp_path / "suppliers"))
    director = Director(workspace=ws, problem=problem, model=ScriptedModel(team_script()))
    models = asyncio.run(choose_models(director, statement_tasks(problem.statement), ProblemData.load(ws / "problem")))
    assert [m.status for m in models] == ["could_not", "could_not"]
    assert (
        task_answer(models[0], ws, lang="zh-CN").text.startswith("未能回答：没有选出")
        or "no model" in models[0].reasons[0]
    )


def test_the_section_is_the_familys_sentences_from_its_result_and_the_gate_checks_the_family(tmp_path: Path) -> None:
    task = Task(number=1, text="Rank the suppliers.", asks="ranking")
    result = {"weights": {"q": 0.6, "p": 0.4}, "scores": {"S1": 0.8123, "S2": 0.2}, "ranking": ["S1", "S2"], "weighting": "entropy", "cost_criteria": []}  # fmt: skip
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "task1_topsis.json").write_text(json.dumps(result), encoding="utf-8")
    model = TaskModel(task=task, status="ran", family="topsis", params={"family": "topsis"})
    answer = task_answer(model, tmp_path, lang="en")
    assert answer.answered and "S1 (0.8123)" in answer.text and "`results/task1_topsis.json`" in answer.text

    class _Recorder:  # record() needs only the Director's workspace and its notes
        ws = tmp_path

        def _note(self, key: str, lines: list[Any]) -> None:
            pass

    record(_Recorder(), [model])  # type: ignore[arg-type]
    assert check_task_models(tmp_path) == []
    wrong = model.model_copy(update={"task": task.model_copy(update={"asks": "forecast"})})
    record(_Recorder(), [wrong])  # type: ignore[arg-type]
    failures = check_task_models(tmp_path)
    assert [f.check for f in failures] == ["family_fits_task"] and "asks for a forecast" in failures[0].message


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
def test_a_contest_problem_is_answered_task_by_task_to_a_paper(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path, problem=_problem(tmp_path / "suppliers"))
    pdf = asyncio.run(Director(workspace=ws, problem=problem, model=_team(CHOICES)).run())
    assert pdf.is_file()
    assert [(v.gate, v.status) for _, v in validation_records(ws)] == [
        (g, "APPROVED") for g in ("data_ready", "code_runs", "results_trained", "paper_written")
    ]
    assert (ws / "results" / "task1_topsis.json").is_file() and (ws / "figures" / "task1_topsis.png").is_file()
    assert not (ws / "code" / "train.py").exists()  # the tasks' families stood in for the template model
    answers = json.loads((ws / "state" / "director.json").read_text(encoding="utf-8"))["answers"]
    assert not any(k.startswith("modeler:scenario") for k in answers)  # no template case asked for
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8")
    one, two = paper.split("### 6.1 Task 1", 1)[1].split("### 6.2 Task 2", 1)
    ranking = json.loads((ws / "results" / "task1_topsis.json").read_text(encoding="utf-8"))["ranking"]
    assert f"Ranked by closeness to the ideal: {ranking[0]} (" in one
    assert "Not answered:" in two and "no_such_column" in two
    unused = [line for line in paper.splitlines() if "no task's model uses" in line]  # the data file no task reads
    assert unused == ["- `visits.csv`: cleaned as above, and no task's model uses it."]
    assert "## 3 Model\n\n- Task 1: TOPSIS.\n- Task 2: no model of the library ran.\n" in paper  # what ran
    assert "线性回归" not in paper  # the team's recommendation, written before the families were chosen, is left out
