"""The team's templates: the model chosen from the data's shape (a series is forecast, case counts are an epidemic,
rows that are units are a regression), the agents' choices checked against the data and the statement, and a
cross-sectional problem nobody tuned the team for solved end to end by the regression template — the effects
recovered, the held-out error, the importance ranking and the stated case predicted, each sentence of the paper's
results backed by its file."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pandas as pd
import pytest

from consulta.apps.modeling import Director
from consulta.apps.modeling._gates import validation_records
from consulta.apps.modeling._plan import plan_for
from consulta.apps.modeling._shape import describe_data

from .team_script import (
    HEATING_EFFECTS,
    HOUSE_EFFECTS,
    HOUSES_CASE,
    HOUSES_MODELER,
    SAMPLES,
    houses_problem,
    scripted,
    workspace,
)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize(("sample", "kind"), [("electricity_demand", "forecast"), ("influenza_outbreak", "epidemic")])
def test_the_samples_keep_their_models(sample: str, kind: str) -> None:
    assert describe_data(SAMPLES / sample).kind == kind


def test_rows_that_are_units_are_a_regression_even_with_a_repeated_year(tmp_path: Path) -> None:
    folder = houses_problem(tmp_path / "houses")
    shape = describe_data(folder)
    assert shape.kind == "regression" and shape.target == "price_k" and shape.time is None
    assert shape.categorical == {"heating": sorted(HEATING_EFFECTS)} and "house_id" not in shape.numeric
    frame = pd.read_csv(folder / "houses.csv")
    frame.insert(1, "year", [2020 + i % 4 for i in range(len(frame))])  # a sale year: repeats, so not a series
    frame.insert(0, "id", range(1, len(frame) + 1))  # a numeric identifier: never a covariate
    frame.to_csv(folder / "houses.csv", index=False)
    shape = describe_data(folder)
    assert shape.time == "year" and not shape.series and shape.kind == "regression" and shape.ids == ["id"]
    plan, notes = plan_for(shape, {"target": "price_k", "covariates": ["id", "floor_area_m2"]}, "")
    assert (
        plan.covariates == ["floor_area_m2"]
        and any("'year' repeats" in n for n in notes)
        and any("'id'" in n for n in notes)
    )


def test_the_stated_case_keeps_only_numbers_the_statement_gives_within_the_data(tmp_path: Path) -> None:
    shape = describe_data(houses_problem(tmp_path / "houses"))
    covariates = ["floor_area_m2", "rooms", "age_years", "distance_km", "heating"]
    case = {"floor_area_m2": 100, "rooms": 3, "age_years": 12, "distance_km": 5, "heating": 1}
    plan, notes = plan_for(shape, {"covariates": covariates, "scenario": case}, HOUSES_CASE)
    assert plan.scenario == {}  # a case half read is not the case the problem gives
    assert any("age_years=12" in n and "does not state" in n for n in notes) and any("'heating'" in n for n in notes)
    plan, notes = plan_for(
        shape, {"covariates": covariates, "scenario": {"floor_area_m2": 100, "rooms": 3}}, HOUSES_CASE
    )
    assert plan.scenario == {"floor_area_m2": 100.0, "rooms": 3.0} and notes == []
    plan, notes = plan_for(
        shape, {"covariates": covariates, "scenario": {"rooms": 3}}, "1. Describe.\n2. Fit.\n3. Predict."
    )
    assert plan.scenario == {}  # list numbering states no value
    plan, notes = plan_for(
        shape, {"covariates": covariates, "scenario": {"rooms": 100}}, HOUSES_CASE
    )  # 100 is the area, misread
    assert plan.scenario == {} and any("far outside the data" in n for n in notes)
    plan, notes = plan_for(shape, {"covariates": covariates, "scenario": {"rooms": 7}}, "a house with 7 rooms")
    assert plan.scenario == {"rooms": 7.0} and any("extrapolates" in n for n in notes)


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_cross_sectional_problem_is_solved_by_the_regression_to_a_paper(tmp_path: Path, lang: str) -> None:
    folder = houses_problem(tmp_path / "houses")
    if lang == "zh-CN":
        (folder / "problem.md").write_text(
            "# 房价\n\n根据 `houses.csv` 分析各特征与房价的关系，给出留出样本上的误差，并预测一套 100 平方米、3 室、10 年房龄、距市中心 5 公里的房子的价格。哪个特征最重要？\n",
            encoding="utf-8",
        )
    ws, problem = workspace(tmp_path, problem=folder)
    writer = {
        "abstract": "A linear model of the price. The coefficients are 0.",
        "discussion": "Linear.",
        "conclusion": "Area matters.",
    }
    team = Director(workspace=ws, problem=problem, model=scripted(work={"modeler": HOUSES_MODELER, "writer": writer}))
    pdf = asyncio.run(team.run())
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF")
    assert [(v.gate, v.status) for _, v in validation_records(ws)] == [
        (g, "APPROVED") for g in ("data_ready", "code_runs", "results_trained", "paper_written")
    ]
    assert sorted(p.name for p in (ws / "results").glob("*.csv")) == [
        "cleaning.csv",
        "coefficients.csv",
        "holdout.csv",
        "importance.csv",
        "metrics.csv",
        "prediction.csv",
        "scenario.csv",
    ]
    assert sorted(p.name for p in (ws / "figures").glob("*.png")) == ["effects.png", "fit.png"]

    coefficients = {row["term"]: row for row in _csv(ws / "results" / "coefficients.csv")}
    for term, truth in [
        *HOUSE_EFFECTS.items(),
        *((f"heating={k}", v) for k, v in HEATING_EFFECTS.items() if k != "electric"),
    ]:
        truth -= (
            HEATING_EFFECTS["electric"] if term.startswith("heating=") else 0
        )  # the baseline is the first value, "electric"
        assert float(coefficients[term]["lower_95"]) - 15 <= truth <= float(coefficients[term]["upper_95"]) + 15, (
            term,
            coefficients[term],
        )
    importance = _csv(ws / "results" / "importance.csv")
    assert importance[0]["covariate"] == "floor_area_m2" and [r["rank"] for r in importance] == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]
    (predicted,) = _csv(ws / "results" / "prediction.csv")
    truth = (
        800 + 100 * 32 + 3 * 40 - 10 * 6 - 5 * 18 + sum(HEATING_EFFECTS.values()) / 3
    )  # the commonest heating: between the effects
    assert (
        float(predicted["lower_95"]) < float(predicted["predicted"]) < float(predicted["upper_95"])
        and abs(float(predicted["predicted"]) - truth) < 350
    )
    metrics = {row["metric"]: row["value"] for row in _csv(ws / "results" / "metrics.csv")}
    assert metrics["holdout_rows"] == "12" and float(metrics["r2_holdout"]) > 0.9

    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8")
    assert f"{predicted['predicted']}" in paper and f"[{predicted['lower_95']}, {predicted['upper_95']}]" in paper
    abstract = paper.split("## 1 ", 1)[0]
    assert (
        predicted["predicted"] in abstract and "`floor_area_m2`" in abstract
    )  # the abstract answers the questions in code's words
    assert (
        "A linear model of the price." in abstract and "are 0" not in paper
    )  # the writer's sentence with a digit is left out
    assert "`floor_area_m2`" in paper and "forecast" not in paper.lower() and "trend" not in paper.lower()
    assert "../figures/effects.png" in paper and "$$ y_i" in paper
    assert ("留出的 12 行" if lang == "zh-CN" else "On the 12 held-out rows") in paper
    provenance = (ws / "code" / "PROVENANCE.md").read_text(encoding="utf-8")
    assert "template (regression)" in provenance


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
def test_without_a_stated_case_nothing_is_predicted(tmp_path: Path) -> None:
    folder = houses_problem(tmp_path / "houses", case="Say which houses are overpriced.")
    ws, problem = workspace(tmp_path, problem=folder)
    team = Director(
        workspace=ws, problem=problem, model=scripted(work={"modeler": HOUSES_MODELER})
    )  # it names a case all the same
    asyncio.run(team.run())
    assert not (ws / "results" / "prediction.csv").exists()
    assert any("does not state" in n for n in team.memo["notes"]["plan"])
    assert "predicted price_k" not in (ws / "paper" / "paper.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["forecast", "epidemic", "regression"])
def test_each_template_is_a_python_file_the_script_fills_with_its_plan(kind: str) -> None:
    import ast
    import json

    from consulta.apps.modeling._plan import Plan
    from consulta.apps.modeling._templates import script, template_path

    plan = Plan(kind=kind, table="t.csv", time=None, target="y", covariates=["x"])  # type: ignore[arg-type]
    for name in ("clean_data", "model", "train", "figures"):
        template = template_path(name, kind)  # type: ignore[arg-type]
        assert template.is_file() and template.suffix == ".py"
        ast.parse(template.read_text(encoding="utf-8"))  # a reader (and ruff) opens the template as it is
        source = script(name, plan)  # type: ignore[arg-type]
        (line,) = [
            n for n in ast.parse(source).body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "PLAN"
        ]
        assert isinstance(line.value, ast.Call)
        assert json.loads(ast.literal_eval(line.value.args[0])) == plan.model_dump()
        assert source.replace(ast.get_source_segment(source, line) or "", "") == template.read_text(
            encoding="utf-8"
        ).replace(
            'PLAN = json.loads("{}")  # the plan: written here when the team\'s script is made from this template', ""
        )


def test_the_cleaning_reports_a_repeated_and_a_missing_value_of_a_sequence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An age given twice and an age missing (within each sex) are found before cleaning and said in the paper's data
    section; an attribute many rows share (a house's age) is no sequence, a text column whose values are states of
    the sequence's steps (a day's weather) no category, and numbers with more gaps than values no sequence. (The template runs here in process: it is
    our own file; the team's scripts run in the sandbox.)"""
    import runpy

    from consulta.apps.modeling._findings import data_account
    from consulta.apps.modeling._plan import Plan
    from consulta.apps.modeling._templates import script

    for folder in ("problem", "data", "results", "code"):
        (tmp_path / folder).mkdir()
    ages = [0, 1, 2, 3, 3, 4, 6, 7]
    pd.DataFrame({"sex": ["F"] * 8 + ["M"] * 8, "age": ages + list(range(8)), "count": range(16)}).to_csv(
        tmp_path / "problem" / "herd.csv", index=False
    )
    pd.DataFrame({"house": range(40), "age_years": [5, 10] * 20, "price": range(40)}).to_csv(
        tmp_path / "problem" / "houses.csv", index=False
    )
    states = ["sunny", "rainy", "cloudy"]  # a day's weather is a state of the sequence, not a category with days
    pd.DataFrame({"day": range(1, 61), "weather": [states[d * d % 3] for d in range(60)]}).to_csv(
        tmp_path / "problem" / "weather.csv", index=False
    )
    pd.DataFrame({"period": [3, 40, 41, 90, 160, 161], "x": range(6)}).to_csv(  # mostly gaps: no sequence
        tmp_path / "problem" / "picked.csv", index=False
    )
    years = [2001, 2002, 2003, 2004, 2005, 2005, 2006, 2007, 2009, 2010]
    pd.DataFrame({"year": years, "sales": range(10)}).to_csv(tmp_path / "problem" / "sales.csv", index=False)
    plan = Plan(kind="regression", table="herd.csv", time=None, target="count", covariates=["age"])
    (tmp_path / "code" / "clean_data.py").write_text(script("clean_data", plan), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(tmp_path / "code" / "clean_data.py"), run_name="__main__")
    rows = _csv(tmp_path / "results" / "sequence_checks.csv")
    assert [(r["file"], r["column"], r["group"], r["value"], r["times"]) for r in rows] == [
        ("herd.csv", "age", "F", "3", "2"),
        ("herd.csv", "age", "F", "5", "0"),
        ("sales.csv", "year", "all", "2005", "2"),
        ("sales.csv", "year", "all", "2008", "0"),
    ]
    assert all(cell != "" for row in rows for cell in row.values())  # a result file has no empty cell (NaN)
    account = data_account(tmp_path, lang="en")
    assert "`herd.csv`, sequence `age` (F): 3 appears 2 times (found before cleaning)." in account
    assert "`herd.csv`, sequence `age` (F): 5 is missing (found before cleaning)." in account
    assert "`sales.csv`, sequence `year`: 2008 is missing (found before cleaning)." in account
    assert not any("no task's model uses" in line for line in account)  # who uses what: not known, nothing said
    account = data_account(tmp_path, lang="en", used={"herd.csv", "sales.csv"})
    unused = [line for line in account if "no task's model uses" in line]
    assert unused == [f"`{name}`: cleaned as above, and no task's model uses it." for name in ("houses.csv", "picked.csv", "weather.csv")]  # fmt: skip
