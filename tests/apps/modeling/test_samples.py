"""The two sample problems: their files, the benchmark JSON form, and data that the gates' checks accept once the
documented defect is cleaned (and reject before)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from consulta.apps.modeling._gates import code_checks

SAMPLES = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples"
BENCHMARK_FIELDS = [
    "background",
    "problem_requirement",
    "dataset_path",
    "dataset_description",
    "variable_description",
    "addendum",
]


@pytest.mark.parametrize("name", ["electricity_demand", "influenza_outbreak"])
def test_each_sample_has_a_problem_and_its_data(name: str) -> None:
    folder = SAMPLES / name
    problem = (folder / "problem.md").read_text(encoding="utf-8")
    for csv in folder.glob("*.csv"):
        assert f"`{csv.name}`" in problem  # every data file is described
        frame = pd.read_csv(csv)
        for column in frame.columns:
            assert f"`{column}`" in problem, (csv.name, column)  # and every column


def test_the_benchmark_form_has_the_public_fields_and_its_files() -> None:
    problem = json.loads((SAMPLES / "influenza_outbreak" / "problem.json").read_text(encoding="utf-8"))
    assert list(problem) == BENCHMARK_FIELDS
    assert all((SAMPLES / "influenza_outbreak" / path).is_file() for path in problem["dataset_path"])
    columns = pd.read_csv(SAMPLES / "influenza_outbreak" / problem["dataset_path"][0]).columns
    assert sorted(problem["variable_description"]) == sorted(columns)


def _workspace(tmp_path: Path, name: str) -> Path:
    shutil.copytree(SAMPLES / name, tmp_path / "problem")
    (tmp_path / "data").mkdir()
    for csv in (SAMPLES / name).glob("*.csv"):
        shutil.copyfile(csv, tmp_path / "data" / csv.name)
    return tmp_path


def test_the_electricity_data_passes_the_data_gate(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, "electricity_demand")
    assert code_checks("data_ready", workspace) == []
    frame = pd.read_csv(workspace / "data" / "demand_monthly.csv")
    assert len(frame) == 120 and frame["month"].iloc[0] == "2015-01" and frame["month"].iloc[-1] == "2024-12"
    parts = frame[["residential_gwh", "commercial_gwh", "industrial_gwh"]].sum(axis=1)
    assert ((parts - frame["total_gwh"]).abs() <= 0.15).all()


def test_the_outbreak_data_is_rejected_until_the_duplicate_report_is_dropped(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, "influenza_outbreak")
    failures = code_checks("data_ready", workspace)
    assert [f.check for f in failures] == ["duplicate_rows"] and "day=38" in failures[0].evidence
    path = workspace / "data" / "daily_reports.csv"
    pd.read_csv(path).drop_duplicates().to_csv(path, index=False)
    assert code_checks("data_ready", workspace) == []
