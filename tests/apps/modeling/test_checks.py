"""The checks code makes on a workspace: good data passes; data that code can prove wrong fails with named evidence;
a paper's numbers are held against the result files; cited figures must exist."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from consulta.apps.modeling._checks import (
    DataSpec,
    TableSpec,
    check_data,
    check_paper_figures,
    check_paper_numbers,
    check_table,
    infer_table_spec,
    paper_numbers,
)


def _monthly(months: int = 24) -> pd.DataFrame:
    index = pd.date_range("2022-01-01", periods=months, freq="MS")
    rows = []
    for i, stamp in enumerate(index):
        a, b = 100.0 + i, 50.5 + 0.5 * i
        rows.append(
            {
                "month": stamp.strftime("%Y-%m"),
                "residential_gwh": a,
                "industrial_gwh": b,
                "total_gwh": a + b,
                "share_industrial": round(b / (a + b), 3),
            }
        )
    return pd.DataFrame(rows)


def _workspace(tmp_path: Path, frame: pd.DataFrame, name: str = "demand.csv") -> Path:
    (tmp_path / "data").mkdir(exist_ok=True)
    frame.to_csv(tmp_path / "data" / name, index=False)
    return tmp_path


def _checks(failures) -> list[str]:  # noqa: ANN001
    return sorted(f.check for f in failures)


def test_good_data_passes_and_its_spec_is_read_from_the_columns(tmp_path: Path) -> None:
    frame = _monthly()
    spec = infer_table_spec(frame, "demand.csv")
    assert spec.sequence == "month" and spec.keys == ["month"]
    assert spec.totals == {"total_gwh": ["residential_gwh", "industrial_gwh"]}
    assert "residential_gwh" in spec.nonnegative and spec.shares == ["share_industrial"]
    assert check_data(_workspace(tmp_path, frame)) == []


def test_nan_and_duplicated_rows_are_named_with_their_lines(tmp_path: Path) -> None:
    frame = _monthly()
    frame.loc[3, "residential_gwh"] = None
    frame = pd.concat([frame, frame.iloc[[5]]], ignore_index=True)
    failures = check_data(_workspace(tmp_path, frame))
    assert _checks(failures) == ["duplicate_rows", "no_nan"]  # a row with a NaN is not held to its total
    nan = next(f for f in failures if f.check == "no_nan")
    assert "residential_gwh: 1" in nan.evidence and "line 5" in nan.evidence
    assert "line 26" in next(f for f in failures if f.check == "duplicate_rows").evidence


def test_duplicate_keys_with_different_values(tmp_path: Path) -> None:
    frame = _monthly()
    extra = frame.iloc[[7]].copy()
    extra["residential_gwh"] += 1
    extra["total_gwh"] += 1
    failures = check_data(_workspace(tmp_path, pd.concat([frame, extra], ignore_index=True)))
    assert _checks(failures) == ["duplicate_keys"]
    assert "month=2022-08" in failures[0].evidence


def test_gaps_in_a_monthly_sequence_and_in_years_per_region() -> None:
    frame = _monthly().drop(index=[4, 5]).reset_index(drop=True)
    failures = check_table(frame, infer_table_spec(frame, "demand.csv"))
    assert _checks(failures) == ["sequence_gaps"]
    assert "2022-05, 2022-06" in failures[0].evidence
    yearly = pd.DataFrame(
        {
            "region": ["north"] * 4 + ["south"] * 3,
            "year": [2018, 2019, 2020, 2021, 2018, 2020, 2021],
            "population": [5, 6, 7, 8, 3, 4, 5],
        }
    )
    spec = infer_table_spec(yearly, "pop.csv")
    assert spec.keys == ["region", "year"]
    failures = check_table(yearly, spec)
    assert _checks(failures) == ["sequence_gaps"] and "region=south: missing 2019" in failures[0].evidence


def test_impossible_values_negative_counts_shares_over_one_and_totals() -> None:
    frame = _monthly()
    frame.loc[2, "industrial_gwh"] = -5.0
    frame.loc[2, "total_gwh"] = frame.loc[2, "residential_gwh"] - 5.0
    frame.loc[6, "share_industrial"] = 1.4
    frame.loc[9, "total_gwh"] += 40
    failures = check_table(frame, infer_table_spec(frame, "demand.csv"))
    assert _checks(failures) == ["impossible_values", "impossible_values", "totals_disagree"]
    totals = next(f for f in failures if f.check == "totals_disagree")
    assert "line 11" in totals.evidence and "1 rows" in totals.message


def test_an_explicit_spec_wins_and_names_missing_columns() -> None:
    frame = pd.DataFrame({"site": ["a", "b", "c"], "t": [1, 2, 3], "x": [1.0, 2.0, 3.0]})
    assert check_table(frame, TableSpec(file="f.csv", keys=["site"], nonnegative=["x"])) == []
    failures = check_table(frame, TableSpec(file="f.csv", keys=["nope"]))
    assert _checks(failures) == ["columns"] and "nope" in failures[0].message


def test_a_table_the_spec_names_must_exist(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, _monthly())
    failures = check_data(workspace, DataSpec(tables=[TableSpec(file="other.csv")]))
    assert _checks(failures) == ["files_exist"]


def test_a_log_of_events_is_not_held_to_unique_keys() -> None:
    log = pd.DataFrame(
        {
            "date": ["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-03"],
            "site": ["a", "a", "b", "a"],
            "amount": [1, 2, 3, 4],
        }
    )
    assert check_table(log, infer_table_spec(log, "log.csv")) == []


# ---- the paper ----------------------------------------------------------------------------------------------------


def _paper_workspace(tmp_path: Path, paper: str) -> Path:
    for folder in ("results", "paper", "problem", "figures"):
        (tmp_path / folder).mkdir(exist_ok=True)
    pd.DataFrame({"metric": ["mape", "r2", "peak_gwh"], "value": [0.03217, 0.9412, 9021.37]}).to_csv(
        tmp_path / "results" / "metrics.csv", index=False
    )
    pd.DataFrame({"month": ["2025-01", "2025-07"], "forecast_gwh": [8123.4, 9021.37]}).to_csv(
        tmp_path / "results" / "forecast.csv", index=False
    )
    (tmp_path / "problem" / "problem.md").write_text(
        "Forecast 2025 demand with a 95% interval; the city has 1,200,000 people.", encoding="utf-8"
    )
    (tmp_path / "paper" / "paper.md").write_text(paper, encoding="utf-8")
    return tmp_path


def test_paper_numbers_are_extracted_with_their_precision_and_context() -> None:
    numbers = paper_numbers(
        "## 3. Results\n\nThe MAPE is 3.2% (Figure 2, 表 3); R2 = 0.94 and x_1 = 17.\n\n```\nprint(123.45)\n```\n需求为9021.4万千瓦时，共 3 个情景。"
    )
    texts = [(n.text, n.tolerance) for n in numbers]
    assert texts == [("3.2%", 0.05), ("0.94", 0.005), ("17", 0.5), ("9021.4万", 500.0)]
    assert numbers[0].percent and "MAPE" in numbers[0].context and numbers[3].line == 8


def test_numbers_that_match_the_results_pass(tmp_path: Path) -> None:
    paper = (
        "# Demand\n\nThe test MAPE was 3.22% and R² was 0.94. The July peak reaches 9,021.4 GWh (January: 8123 GWh), "
        "forecast for 2025 with a 95% interval for 1.2 million people.\n"
    )
    assert check_paper_numbers(_paper_workspace(tmp_path, paper)) == []


def test_a_number_that_disagrees_with_its_csv_fails_with_its_line(tmp_path: Path) -> None:
    paper = "# Demand\n\nThe test MAPE was 3.22%.\n\nThe July peak reaches 9,120.4 GWh, and R² was 0.95.\n"
    failures = check_paper_numbers(_paper_workspace(tmp_path, paper))
    assert _checks(failures) == ["paper_numbers"]
    assert (
        "line 5: 9,120.4" in failures[0].evidence
        and "0.95" in failures[0].evidence
        and "3.22" not in failures[0].evidence
    )
    assert "results/metrics.csv" in failures[0].message


def test_cited_figures_must_exist_inside_the_workspace(tmp_path: Path) -> None:
    workspace = _paper_workspace(
        tmp_path,
        "![Demand](../figures/demand.png)\n\nAs Figure 1 and Figure 2 show, see figures/residuals.png and ![x](../../etc/passwd.png).",
    )
    (workspace / "figures" / "demand.png").write_bytes(b"\x89PNG")
    failures = check_paper_figures(workspace)
    assert _checks(failures) == ["paper_figures"]
    assert "figures/residuals.png" in failures[0].evidence and "passwd" in failures[0].evidence
    (workspace / "figures" / "residuals.png").write_bytes(b"\x89PNG")
    (workspace / "paper" / "paper.md").write_text(
        "![Demand](../figures/demand.png)\n\nAs Figure 1 shows; see Figure 3.", encoding="utf-8"
    )
    failures = check_paper_figures(workspace)
    assert [f.message for f in failures] == ["The paper refers to figure 3 but embeds 1 figure(s)."]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("温度每升高 1℃，需求增加 2.5%。", [2.5]),
        ("Growth of −4.5% in 2020, 2015–2019 rising.", [-4.5, 2020, 2015, 2019]),
    ],
)
def test_numbers_in_chinese_and_signed_text_are_found(text: str, values: list[float]) -> None:
    assert [n.value for n in paper_numbers(text)] == values


def test_a_number_of_a_familys_result_json_counts_and_one_of_none_fails(tmp_path: Path) -> None:
    paper = "# Demand\n\nThe MAPE was 3.22%.\n\nThe plan's profit is 9260, the shelf gets 13.75 units.\n"
    ws = _paper_workspace(tmp_path, paper)
    (ws / "results" / "task1_linear_programme.json").write_text(
        '{"objective": 9260, "plan": {"chair": 148, "shelf": 13.75}, "integer": true}', encoding="utf-8"
    )
    assert check_paper_numbers(ws) == []
    (ws / "results" / "task1_linear_programme.json").write_text('{"objective": 9260}', encoding="utf-8")
    failures = check_paper_numbers(ws)
    assert "13.75" in failures[0].evidence and "results/task1_linear_programme.json" in failures[0].message
