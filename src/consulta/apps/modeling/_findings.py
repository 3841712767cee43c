"""What the result files say, in sentences written by code: the paper's main results (each number copied from its
CSV cell as written, so the paper-number check holds them to the file) and the account of what the cleaning did.
The team's model writes around them; it never states these numbers itself.

Each kind of model has its own files (see `_templates`); a file a run did not write leaves its sentences out.
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ._shape import ModelKind

__all__ = ["Finding", "data_account", "findings"]


@dataclass(frozen=True)
class Finding:
    """One sentence of the main results; `headline` ones are also the abstract's (the answers a reader looks for)."""

    text: str
    headline: bool = False


_WORDS = {
    "zh-CN": {
        "holdout": "在留出的 {holdout_rows} 行上，模型的 RMSE 为 {rmse_holdout}，MAE 为 {mae_holdout}{mape}，R² 为 {r2_holdout}；全部数据上的 R² 为 {r2_in_sample}。",
        "mape": "，MAPE 为 {value}%",
        "up": "上升", "down": "下降",
        "coef": "`{term}` 每增加 1，{target} 变化 {estimate}（{direction}；区间 [lower_95, upper_95] = [{lower_95}, {upper_95}]，p = {p_value}）{significance}。",
        "significant": "，统计上显著", "not_significant": "，与 0 无显著差别",
        "level": "`{term}` 与基准类别相比，{target} 相差 {estimate}（{direction}；区间 [{lower_95}, {upper_95}]，p = {p_value}）{significance}。",
        "top": "最重要的解释变量是 `{first}`：去掉它，R² 下降 {first_r2}{second}。",
        "second": "；其次是 `{name}`（{value}）",
        "prediction": "题目给出的情形（{case}）下，{target} 的预测值为 {predicted}，预测区间 [lower_95, upper_95] = [{lower_95}, {upper_95}]。",
        "others": "；未给出的变量取中位数或最常见的值：{names}",
        "forecast_fit": "检验期的 MAPE 为 {mape_holdout_pct}%，RMSE 为 {rmse_holdout}；全部数据上的 R² 为 {r2_in_sample}。",
        "forecast_total": "预测期合计 {forecast_total}，峰值 {peak_forecast} 出现在 {peak_period}。",
        "scenario": "情景分析：预测期合计变为 {scenario_total}，变化 {scenario_change}（{scenario_change_pct}%）。",
        "epidemic": "拟合得到 β = {beta}、γ = {gamma}，基本再生数 R0 = {R0}；报告的新增病例在第 {peak_day} 天达到峰值 {peak_new_reported}，最终感染比例 {final_share_infected}。",
        "cleaning": "`{file}`：原始 {rows_raw} 行，去掉重复 {duplicates_dropped} 行、缺少目标值的 {rows_without_target_dropped} 行，用{method}填补缺失值 {missing_values_filled} 个，清洗后 {rows_clean} 行。",
        "median": "中位数", "interpolation": "线性插值",
        "repeated": "`{file}` 的序列 `{column}`{where}：{value} 出现了 {times} 次（清洗前检查发现）。",
        "missing": "`{file}` 的序列 `{column}`{where}：缺少 {value}（清洗前检查发现）。", "in_group": "（{group}）",
        "unused": "`{file}`：只做了上面的清洗，没有哪一题的模型用到它。",
    },
    "en": {
        "holdout": "On the {holdout_rows} held-out rows the model's RMSE is {rmse_holdout} and its MAE {mae_holdout}{mape}, with R² {r2_holdout}; on all rows R² is {r2_in_sample}.",
        "mape": " (MAPE {value}%)",
        "up": "it rises", "down": "it falls",
        "coef": "Each unit of `{term}` changes {target} by {estimate} ({direction}; interval [lower_95, upper_95] = [{lower_95}, {upper_95}], p = {p_value}){significance}.",
        "significant": ", a significant effect", "not_significant": ", not distinguishable from zero",
        "level": "Against the baseline category, `{term}` changes {target} by {estimate} ({direction}; interval [{lower_95}, {upper_95}], p = {p_value}){significance}.",
        "top": "The covariate that matters most is `{first}`: without it R² drops by {first_r2}{second}.",
        "second": "; next is `{name}` ({value})",
        "prediction": "For the case the problem gives ({case}), the predicted {target} is {predicted}, with prediction interval [lower_95, upper_95] = [{lower_95}, {upper_95}].",
        "others": "; the covariates it does not give are at their median or commonest value: {names}",
        "forecast_fit": "Over the holdout the MAPE is {mape_holdout_pct}% and the RMSE {rmse_holdout}; on all data R² is {r2_in_sample}.",
        "forecast_total": "The forecast totals {forecast_total}; its peak, {peak_forecast}, falls in {peak_period}.",
        "scenario": "In the scenario the total becomes {scenario_total}, a change of {scenario_change} ({scenario_change_pct}%).",
        "epidemic": "The fit gives β = {beta} and γ = {gamma}, so R0 = {R0}; reported new cases peak on day {peak_day} at {peak_new_reported}, and the final share infected is {final_share_infected}.",
        "cleaning": "`{file}`: {rows_raw} rows as given; {duplicates_dropped} duplicate rows and {rows_without_target_dropped} rows without the target dropped; {missing_values_filled} missing values filled by {method}; {rows_clean} rows after cleaning.",
        "median": "the column's median", "interpolation": "linear interpolation",
        "repeated": "`{file}`, sequence `{column}`{where}: {value} appears {times} times (found before cleaning).",
        "missing": "`{file}`, sequence `{column}`{where}: {value} is missing (found before cleaning).", "in_group": " ({group})",
        "unused": "`{file}`: cleaned as above, and no task's model uses it.",
    },
}  # fmt: skip
_SIGNIFICANCE = 0.05


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _pairs(path: Path, key: str, value: str) -> dict[str, str]:
    return {row[key]: row[value] for row in _rows(path) if key in row and value in row}


def _words(lang: str) -> dict[str, str]:
    return _WORDS["zh-CN" if lang.startswith("zh") else "en"]


def findings(workspace: Path, *, kind: ModelKind, target: str, lang: str) -> list[Finding]:
    """The main results of a run of `kind`, one sentence each, every number as its result file writes it."""
    results = Path(workspace) / "results"
    w = _words(lang)
    out: list[Finding] = []
    if kind == "regression":
        metrics = _pairs(results / "metrics.csv", "metric", "value")
        if {"holdout_rows", "rmse_holdout", "mae_holdout", "r2_holdout", "r2_in_sample"} <= metrics.keys():
            mape = w["mape"].format(value=metrics["mape_holdout_pct"]) if "mape_holdout_pct" in metrics else ""
            out.append(Finding(w["holdout"].format(**metrics | {"mape": mape}), headline=True))
        for row in _rows(results / "coefficients.csv"):
            if row.get("term") in (None, "intercept"):
                continue
            estimate = row["estimate"]
            direction = w["down"] if estimate.startswith("-") else w["up"]
            significance = w["significant"] if float(row["p_value"]) < _SIGNIFICANCE else w["not_significant"]
            template = w["level"] if "=" in row["term"] else w["coef"]
            out.append(
                Finding(
                    template.format(**row | {"direction": direction, "target": target, "significance": significance})
                )
            )
        ranked = _rows(results / "importance.csv")
        if ranked:
            second = (
                w["second"].format(name=ranked[1]["covariate"], value=ranked[1]["unique_r2"]) if len(ranked) > 1 else ""
            )
            out.append(
                Finding(
                    w["top"].format(first=ranked[0]["covariate"], first_r2=ranked[0]["unique_r2"], second=second),
                    headline=True,
                )
            )
        prediction, case = _rows(results / "prediction.csv"), _rows(results / "scenario.csv")
        if prediction and case:
            given = ", ".join(f"{row['covariate']} = {row['value']}" for row in case if row["source"] == "given")
            others = [row["covariate"] for row in case if row["source"] != "given"]
            text = w["prediction"].format(case=given, target=target, **prediction[0])
            out.append(
                Finding(
                    text[:-1] + w["others"].format(names=", ".join(others)) + text[-1] if others else text,
                    headline=True,
                )
            )
    elif kind == "forecast":
        metrics = _pairs(results / "metrics.csv", "metric", "value")
        peak = _rows(results / "peak.csv")
        if {"mape_holdout_pct", "rmse_holdout", "r2_in_sample"} <= metrics.keys():
            out.append(Finding(w["forecast_fit"].format(**metrics), headline=True))
        if "forecast_total" in metrics and peak:
            out.append(
                Finding(w["forecast_total"].format(forecast_total=metrics["forecast_total"], **peak[0]), headline=True)
            )
        if "scenario_total" in metrics:
            out.append(Finding(w["scenario"].format(**metrics), headline=True))
    elif kind == "epidemic":
        parameters = _pairs(results / "parameters.csv", "parameter", "value")
        if {"beta", "gamma", "R0", "peak_day", "peak_new_reported", "final_share_infected"} <= parameters.keys():
            out.append(Finding(w["epidemic"].format(**parameters), headline=True))
    return out


def data_account(workspace: Path, *, lang: str, used: Collection[str] | None = None) -> list[str]:
    """What the cleaning did, file by file (from `results/cleaning.csv`, which the cleaning script writes), then what
    the check of the sequences found (`sequence_account`), then each file the cleaning read that no model uses
    (`used`: the files the models read; None: not known, nothing said). The data engineer's own notes are not
    repeated: they say what it meant to do, which may not be what the script did."""
    w = _words(lang)
    rows = _rows(Path(workspace) / "results" / "cleaning.csv")
    done = [
        w["cleaning"].format(**row | {"method": w.get(row.get("fill_method", ""), row.get("fill_method", ""))})
        for row in rows
    ]
    unused = [w["unused"].format(file=row["file"]) for row in rows if used is not None and row["file"] not in used]
    return done + sequence_account(workspace, lang=lang) + unused


def sequence_account(workspace: Path, *, lang: str) -> list[str]:
    """What the check of each table's sequence found before cleaning (`results/sequence_checks.csv`): a value that
    appears more than once, a value missing from its steps."""
    w = _words(lang)
    lines = []
    for row in _rows(Path(workspace) / "results" / "sequence_checks.csv"):
        where = w["in_group"].format(group=row["group"]) if row.get("group") not in (None, "", "all") else ""
        said = w["repeated"] if row.get("times") not in ("0", "", None) else w["missing"]
        lines.append(said.format(**row, where=where))
    return lines
