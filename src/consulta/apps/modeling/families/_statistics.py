"""Statistics and forecasting: grey forecasting GM(1,1), k-means clustering, linear regression, exponential
smoothing."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from .._fit_checks import made_of
from ._base import Family, FamilyParams, ProblemData, columns_problem, measures, num, numeric_columns, zh

__all__ = [
    "Gm11",
    "Gm11Params",
    "KMeansClusters",
    "KMeansParams",
    "Regression",
    "RegressionParams",
    "TimeSeries",
    "TimeSeriesParams",
]


_FORECAST = ("forecast", "predict", "project", "trend", "future", "coming", "预测", "趋势", "未来", "今后", "将来")
"""Words a statement asking for a series' future uses."""


class Gm11Params(FamilyParams):
    family: Literal["gm11"] = "gm11"
    time_column: str = Field("", max_length=60, description="时间列（可空）")
    value_column: str = Field("", max_length=60, description="要预测的序列列")
    horizon: int = Field(3, ge=1, le=20, description="向后预测的期数")


class Gm11(Family):
    name = "gm11"
    horizon = "horizon"
    group = "statistics"
    title = ("Grey forecasting GM(1,1)", "灰色预测 GM(1,1)")
    aliases = ("GM(1,1)", "灰色预测", "grey forecast")
    answers = frozenset({"forecast", "number", "estimate"})
    Params = Gm11Params
    outputs = ("a", "b", "forecast", "mean_relative_error")
    cues = _FORECAST + ("growth", "grey", "gray", "annual", "yearly", "增长", "灰色", "逐年", "年度")

    def table_misfit(self, frame: pd.DataFrame) -> str:
        positive = [c for c in measures(frame) if (frame[c].dropna() > 0).all()]
        if not 4 <= len(frame) <= 30 or not positive:
            return "it needs a short positive series (4 to 30 values)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = Gm11Params.model_validate(params)
        reasons = columns_problem(data, p.table, [p.value_column], min_rows=4)
        if not reasons:
            values = data.tables[p.table][p.value_column].dropna()
            if (values <= 0).any():
                reasons.append("GM(1,1) needs a positive series")
            if len(values) > 30:
                reasons.append(
                    f"{len(values)} points: GM(1,1) is for short series; a time-series model fits a long one better"
                )
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        ahead = ", ".join(f"{k}: {num(v)}" for k, v in r["forecast"].items())
        if zh(lang):
            return [f"发展系数 a = {num(r['a'])}，灰作用量 b = {num(r['b'])}（每期增长约 {num(r['growth_rate'])}）；平均相对误差 {num(r['mean_relative_error'])}，后验差比 C = {num(r['posterior_ratio'])}。",
                    f"预测：{ahead}。"]  # fmt: skip
        return [f"Development coefficient a = {num(r['a'])}, grey input b = {num(r['b'])} (growth of about {num(r['growth_rate'])} a period); mean relative error {num(r['mean_relative_error'])}, posterior ratio C = {num(r['posterior_ratio'])}.",
                f"Forecast: {ahead}."]  # fmt: skip


class KMeansParams(FamilyParams):
    family: Literal["kmeans"] = "kmeans"
    columns: list[str] = Field(default_factory=list, max_length=10, description="用于聚类的数值列")
    k: int = Field(0, ge=0, le=10, description="类数（0：由轮廓系数在 2 到 6 之间选）")
    label_column: str = Field("", max_length=60, description="对象名称列（可空）")


class KMeansClusters(Family):
    name = "kmeans"
    stated_only = {"k": ("group", "cluster", "segment", "class", "categor", "类", "群", "组")}
    group = "statistics"
    title = ("k-means clustering", "k-means 聚类")
    aliases = ("k-means", "clustering", "聚类")
    answers = frozenset({"explanation", "number", "ranking"})
    Params = KMeansParams
    outputs = ("k", "sizes", "centres", "silhouette")
    cues = (
        "group", "cluster", "segment", "categor", "classif", "type", "similar", "pattern", "profile", "聚类", "分类",
        "类别", "分组", "群", "类型", "相似", "几类",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 8 or not measures(frame):
            return "it needs at least 8 rows with a measured column to cluster on"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = KMeansParams.model_validate(params)
        if not p.columns:
            return ["no column to cluster on is named"]
        return columns_problem(data, p.table, p.columns, min_rows=max(8, 3 * (p.k or 2)))

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        sizes = ", ".join(f"{c}: {num(n)}" for c, n in result["sizes"].items())
        centres = "; ".join(f"{c}: " + ", ".join(f"{k} {num(v)}" for k, v in centre.items()) for c, centre in result["centres"].items())  # fmt: skip
        if zh(lang):
            return [
                f"分为 {num(result['k'])} 类（轮廓系数 {num(result['silhouette'])}），各类大小 {sizes}。",
                f"各类中心：{centres}。",
            ]
        return [f"{num(result['k'])} clusters (silhouette {num(result['silhouette'])}), of sizes {sizes}.", f"Their centres: {centres}."]  # fmt: skip


class RegressionParams(FamilyParams):
    family: Literal["regression"] = "regression"
    target: str = Field("", max_length=60, description="因变量列")
    covariates: list[str] = Field(default_factory=list, max_length=8, description="自变量列")


class Regression(Family):
    name = "regression"
    group = "statistics"
    title = ("Linear regression (OLS)", "线性回归（最小二乘）")
    aliases = ("regression", "回归")
    answers = frozenset({"estimate", "ranking", "explanation", "number"})
    Params = RegressionParams
    outputs = ("effects", "r2", "ranking")
    cues = (
        "depend", "effect", "affect", "factor", "relat", "explain", "influenc", "impact", "driv", "regress", "correlat",
        "determin", "影响", "关系", "因素", "回归", "相关", "决定", "解释", "依赖",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 6 or len(numeric_columns(frame)) < 2:
            return "it needs at least 6 rows and two numeric columns (a target and a covariate)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = RegressionParams.model_validate(params)
        if not p.covariates or p.target in p.covariates:
            return ["name covariates other than the target"]
        reasons = columns_problem(data, p.table, [p.target, *p.covariates], min_rows=len(p.covariates) + 5)
        if not reasons:
            made = made_of(data.tables[p.table], p.target, p.covariates)
            if made:
                reasons.append(f"the target is made of its covariates ({made}): the regression would explain nothing")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        effects = ", ".join(f"{k} {num(r['effects'][k])} [{num(r['lower_95'][k])}, {num(r['upper_95'][k])}]" for k in r["ranking"])  # fmt: skip
        if zh(lang):
            return [f"{r['target']} 的线性回归（{num(r['rows'])} 行，R² = {num(r['r2'])}）：各自变量的系数及其置信区间：{effects}。", f"标准化效应最大的自变量：{r['ranking'][0]}。"]  # fmt: skip
        return [f"The linear regression of {r['target']} ({num(r['rows'])} rows, R² = {num(r['r2'])}): each effect with its confidence interval: {effects}.", f"The covariate with the largest standardised effect: {r['ranking'][0]}."]  # fmt: skip


class TimeSeriesParams(FamilyParams):
    family: Literal["time_series"] = "time_series"
    time_column: str = Field("", max_length=60, description="时间列")
    value_column: str = Field("", max_length=60, description="要预测的序列列")
    horizon: int = Field(12, ge=1, le=120, description="向后预测的期数")
    season: int = Field(0, ge=0, le=366, description="季节周期的期数（月度数据为 12；0：无）")


class TimeSeries(Family):
    name = "time_series"
    horizon = "horizon"
    group = "statistics"
    title = ("Exponential smoothing (Holt–Winters)", "指数平滑（Holt–Winters）")
    aliases = ("Holt–Winters", "Holt-Winters")
    answers = frozenset({"forecast", "number"})
    Params = TimeSeriesParams
    outputs = ("forecast", "mape_holdout_pct")
    cues = _FORECAST + (
        "season",
        "month",
        "week",
        "daily",
        "series",
        "next",
        "季节",
        "月",
        "周",
        "每天",
        "每日",
        "序列",
    )

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 10 or not measures(frame):
            return "it needs a series of at least 10 measured values"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = TimeSeriesParams.model_validate(params)
        return columns_problem(data, p.table, [p.value_column], min_rows=max(10, 2 * p.season + 2))

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        if zh(lang):
            return [f"最后 {num(r['holdout'])} 期留作检验，平均绝对百分比误差 {num(r['mape_holdout_pct'])}%。", f"未来 {num(r['horizon'])} 期的预测合计 {num(r['forecast_total'])}，最后一期为 {num(r['last_forecast'])}（数据的最后一期为 {num(r['last_value'])}）。"]  # fmt: skip
        return [f"On its last {num(r['holdout'])} periods held out, the model's mean absolute percentage error is {num(r['mape_holdout_pct'])}%.", f"The next {num(r['horizon'])} periods add up to {num(r['forecast_total'])}; the last of them is {num(r['last_forecast'])} (the data's last is {num(r['last_value'])})."]  # fmt: skip
