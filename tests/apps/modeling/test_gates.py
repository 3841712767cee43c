"""The gates: code's checks decide REJECTED alone; a verdict is written once per gate and attempt, in the seed's
record style, and reads back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from consulta.apps.modeling._gates import (
    GATES,
    Verdict,
    code_checks,
    code_verdict,
    read_validation_record,
    validation_records,
    write_validation_record,
)

SAMPLE = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples/electricity_demand"


def _workspace(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "problem")
    (tmp_path / "data").mkdir()
    for csv in SAMPLE.glob("*.csv"):
        shutil.copyfile(csv, tmp_path / "data" / csv.name)
    return tmp_path


def test_the_gates_in_order() -> None:
    assert GATES == ("data_ready", "code_runs", "results_trained", "paper_written")
    with pytest.raises(ValueError, match="Unknown gate"):
        code_checks("nope", Path("."))


def test_clean_data_leaves_the_decision_to_the_validator(tmp_path: Path) -> None:
    assert code_verdict("data_ready", _workspace(tmp_path), attempt=1) is None


def test_data_code_can_prove_wrong_is_rejected_by_code(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    path = workspace / "data" / "demand_monthly.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    fields = lines[10].split(",")
    fields[4] = str(float(fields[4]) + 100)  # total_gwh no longer the sum of its parts
    lines[10] = ",".join(fields)
    del lines[30]  # a month missing
    lines.append(lines[50].replace(lines[50].split(",")[1], "9999.9"))  # a month twice, with different values
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    verdict = code_verdict("data_ready", workspace, attempt=2)
    assert (
        verdict is not None and verdict.status == "REJECTED" and verdict.decided_by == "code" and verdict.attempt == 2
    )
    checks = [reason.split("]")[0].strip("[") for reason in verdict.reasons]
    assert checks == ["duplicate_keys", "sequence_gaps", "totals_disagree"]
    assert "in 2 rows" in verdict.reasons[2]
    assert "2017-06" in verdict.reasons[1]


def test_code_runs_runs_a_script_with_no_run_on_record(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace / "code").mkdir()
    script = workspace / "code" / "fit.py"
    script.write_text(
        "import pandas as pd\npd.read_csv('data/demand_monthly.csv').describe().to_csv('results/summary.csv')\n",
        encoding="utf-8",
    )
    assert code_checks("code_runs", workspace) == []
    assert (workspace / "results" / "summary.csv").is_file() and (workspace / "code" / "fit.run.json").is_file()
    script.write_text("raise ValueError('bad fit')\n", encoding="utf-8")  # changed since its run: run again
    failures = code_checks("code_runs", workspace)
    assert [f.check for f in failures] == ["code_ran"] and "ValueError: bad fit" in failures[0].evidence


def test_paper_gate_needs_the_pdf_and_numbers_from_the_results(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (workspace / "results").mkdir()
    (workspace / "results" / "metrics.csv").write_text("metric,value\nmape,0.0412\n", encoding="utf-8")
    (workspace / "paper").mkdir()
    (workspace / "paper" / "paper.md").write_text("# Demand\n\nThe test MAPE is 4.12%, not 5.3%.\n", encoding="utf-8")
    failures = code_checks("paper_written", workspace)
    assert sorted(f.check for f in failures) == ["files_exist", "paper_numbers"]
    assert "5.3%" in next(f.evidence for f in failures if f.check == "paper_numbers")


def test_a_record_is_written_once_per_gate_and_attempt_and_reads_back(tmp_path: Path) -> None:
    verdict = Verdict(
        gate="data_ready",
        status="REJECTED",
        reasons=["[no_nan] data/a.csv has empty cells. Evidence: x: 1"],
        attempt=1,
        decided_by="code",
    )
    path = write_validation_record(tmp_path, verdict)
    assert path == tmp_path / "validation" / "data_ready_1.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(
        "# 验证记录: data_ready #1\n\n| 字段 | 值 |\n|------|------|\n| 关卡 | data_ready |\n| 结论 | REJECTED |"
    )
    assert "## 理由\n\n- [no_nan] data/a.csv has empty cells. Evidence: x: 1\n" in text
    again = Verdict(gate="data_ready", status="APPROVED", attempt=1)
    assert (
        write_validation_record(tmp_path, again) == path and path.read_text(encoding="utf-8") == text
    )  # kept as written
    assert read_validation_record(path) == verdict
    approved = Verdict(gate="data_ready", status="APPROVED", attempt=2, reasons=[])
    write_validation_record(tmp_path, approved)
    assert [v for _, v in validation_records(tmp_path)] == [verdict, approved]
    assert sorted(p.name for p in (tmp_path / "validation").iterdir()) == [
        "data_ready_1.md",
        "data_ready_2.md",
    ]  # no temp files left


def test_a_total_regressed_on_its_parts_is_rejected_by_code_with_the_reason(tmp_path: Path) -> None:
    """Issue 24's herd: the total count regressed on the female and male counts (R² = 1: the total is their sum)."""
    import pandas as pd

    from consulta.apps.modeling._fit_checks import check_fit_means_something
    from consulta.apps.modeling._plan import Plan
    from consulta.apps.modeling._templates import script

    for folder in ("data", "code", "results"):
        (tmp_path / folder).mkdir()
    herd = pd.DataFrame(
        {"age": range(10), "female": [9, 8, 8, 7, 6, 5, 4, 3, 2, 1], "male": [8, 8, 7, 6, 5, 4, 3, 2, 1, 1]}
    )
    herd["total"] = herd["female"] + herd["male"]
    herd.to_csv(tmp_path / "data" / "herd.csv", index=False)
    plan = Plan(kind="regression", table="herd.csv", time=None, target="total", covariates=["age", "female", "male"])
    (tmp_path / "code" / "train.py").write_text(script("train", plan), encoding="utf-8")
    pd.DataFrame({"metric": ["r2_in_sample", "rmse_holdout"], "value": [1.0, 0.0]}).to_csv(
        tmp_path / "results" / "metrics.csv", index=False
    )
    failures = {f.check: f for f in check_fit_means_something(tmp_path)}
    assert failures["target_made_of_covariates"].evidence == "total = female + male on every row"
    assert failures["exact_fit"].evidence == "r2_in_sample = 1; rmse_holdout = 0"
    (tmp_path / "code" / "train.py").write_text(
        script("train", plan.model_copy(update={"target": "age", "covariates": ["female", "male"]})), "utf-8"
    )
    pd.DataFrame({"metric": ["r2_in_sample"], "value": [0.93]}).to_csv(
        tmp_path / "results" / "metrics.csv", index=False
    )
    assert check_fit_means_something(tmp_path) == []  # a target the covariates do not make up, an honest fit
