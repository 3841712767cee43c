"""Systems of ODEs: predator–prey (Lotka–Volterra), a one-compartment pharmacokinetic model, and the SIR epidemic."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from ._base import Family, FamilyParams, ProblemData, columns_problem, measures, num, numeric_columns, stated, zh

__all__ = ["LotkaVolterra", "LotkaVolterraParams", "Pharmacokinetics", "PharmacokineticsParams", "Sir", "SirParams"]


class LotkaVolterraParams(FamilyParams):
    family: Literal["lotka_volterra"] = "lotka_volterra"
    time_column: str = Field("", max_length=60, description="时间列")
    prey_column: str = Field("", max_length=60, description="猎物数量列")
    predator_column: str = Field("", max_length=60, description="捕食者数量列")


class LotkaVolterra(Family):
    name = "lotka_volterra"
    group = "ode"
    title = ("Lotka–Volterra predator–prey ODEs", "Lotka–Volterra 捕食者—猎物微分方程")
    answers = frozenset({"estimate", "forecast", "number", "explanation"})
    Params = LotkaVolterraParams
    outputs = ("alpha", "beta", "gamma", "delta", "period")
    subject = (
        "predator", "prey", "predation", "species", "equilibri", "oscillat", "捕食", "猎物", "天敌", "物种", "平衡点",
        "周期性",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 8 or len(numeric_columns(frame)) < 3:
            return "it needs at least 8 times and three numeric columns (the time, the prey, the predators)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = LotkaVolterraParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.time_column, p.prey_column, p.predator_column], min_rows=8)
        if not reasons:
            frame = data.tables[p.table]
            if (frame[[p.prey_column, p.predator_column]] <= 0).any().any():
                reasons.append("the populations must be positive at every time (the model works on their logarithms)")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        if zh(lang):
            return [
                f"拟合的参数：猎物增长率 α = {num(r['alpha'])}，捕食率 β = {num(r['beta'])}，捕食者死亡率 γ = {num(r['gamma'])}，转化率 δ = {num(r['delta'])}（R² = {num(r['r2'])}）。",
                f"平衡点：猎物 {num(r['prey_equilibrium'])}，捕食者 {num(r['predator_equilibrium'])}；小振荡的周期约 {num(r['period'])}。",
            ]  # fmt: skip
        return [
            f"Fitted parameters: prey growth α = {num(r['alpha'])}, predation β = {num(r['beta'])}, predator death γ = {num(r['gamma'])}, conversion δ = {num(r['delta'])} (R² = {num(r['r2'])}).",
            f"Equilibrium: prey {num(r['prey_equilibrium'])}, predators {num(r['predator_equilibrium'])}; small oscillations have a period of about {num(r['period'])}.",
        ]  # fmt: skip


class PharmacokineticsParams(FamilyParams):
    family: Literal["pharmacokinetics"] = "pharmacokinetics"
    time_column: str = Field("", max_length=60, description="时间列")
    concentration_column: str = Field("", max_length=60, description="血药浓度列")
    threshold: float = Field(0.0, ge=0, description="题目给出的浓度阈值（0：没有）")


class Pharmacokinetics(Family):
    name = "pharmacokinetics"
    group = "ode"
    title = ("One-compartment pharmacokinetic model", "一室药代动力学模型")
    answers = frozenset({"estimate", "number", "forecast", "explanation"})
    Params = PharmacokineticsParams
    outputs = ("ka", "ke", "half_life", "cmax", "tmax")
    subject = (
        "drug", "dose", "dosing", "concentration", "plasma", "medic", "absor", "elimin", "half-life", "pharmac", "药",
        "剂量", "浓度", "血", "吸收", "消除", "半衰期",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 5 or len(numeric_columns(frame)) < 2:
            return "it needs at least 5 times and two numeric columns (the time, the concentration)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = PharmacokineticsParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.time_column, p.concentration_column], min_rows=5)
        if p.threshold and not stated(data.statement, p.threshold):
            reasons.append(f"the threshold {p.threshold:g} is not a number the problem states")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        below = r.get("time_below_threshold")
        if zh(lang):
            out = [
                f"吸收速率常数 ka = {num(r['ka'])}，消除速率常数 ke = {num(r['ke'])}，半衰期 {num(r['half_life'])}（R² = {num(r['r2'])}）。",
                f"浓度在时间 {num(r['tmax'])} 达到峰值 {num(r['cmax'])}；曲线下面积 AUC = {num(r['auc'])}。",
            ]  # fmt: skip
            if below is not None:
                out.append(f"浓度在时间 {num(below)} 降到阈值 {num(r['threshold'])} 以下。")
            return out
        out = [
            f"Absorption rate ka = {num(r['ka'])}, elimination rate ke = {num(r['ke'])}, half-life {num(r['half_life'])} (R² = {num(r['r2'])}).",
            f"The concentration peaks at {num(r['cmax'])} at time {num(r['tmax'])}; the area under the curve is {num(r['auc'])}.",
        ]  # fmt: skip
        if below is not None:
            out.append(f"The concentration falls below the threshold {num(r['threshold'])} at time {num(below)}.")
        return out


class SirParams(FamilyParams):
    family: Literal["sir"] = "sir"
    cases_column: str = Field("", max_length=60, description="每日新增病例列")
    population: float = Field(0.0, gt=0, description="总人口（题目给出）")
    horizon: int = Field(30, ge=1, le=365, description="向后预测的天数")


class Sir(Family):
    name = "sir"
    horizon = "horizon"
    group = "ode"
    title = ("SIR epidemic model", "SIR 传染病模型")
    answers = frozenset({"estimate", "forecast", "number", "explanation"})
    Params = SirParams
    outputs = ("beta", "gamma", "r0", "peak_day")
    subject = (
        "infect",
        "disease",
        "outbreak",
        "flu",
        "influenza",
        "virus",
        "感染",
        "传染",
        "疫情",
        "流感",
        "病毒",
        "疾病",
        "recover",
        "contagio",
        "transmi",
        "epidemi",
        "康复",
        "传播",
    )

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 7 or not measures(frame):
            return "it needs a column of case counts over at least 7 days"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = SirParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.cases_column], min_rows=7)
        if not stated(data.statement, p.population):
            reasons.append(f"the population {p.population:g} is not a number the problem states")
        elif not reasons and data.tables[p.table][p.cases_column].sum() > p.population:
            reasons.append("more cases are reported than the population has people")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        if zh(lang):
            return [
                f"传播率 β = {num(r['beta'])}，恢复率 γ = {num(r['gamma'])}，基本再生数 R₀ = {num(r['r0'])}（R² = {num(r['r2'])}）。",
                f"新增病例在第 {num(r['peak_day'])} 天达到峰值 {num(r['peak_new_cases'])}；{num(r['days'])} 天内累计感染 {num(r['total_infected'])}。",
            ]  # fmt: skip
        return [
            f"Transmission β = {num(r['beta'])}, recovery γ = {num(r['gamma'])}, basic reproduction number R₀ = {num(r['r0'])} (R² = {num(r['r2'])}).",
            f"New cases peak on day {num(r['peak_day'])} at {num(r['peak_new_cases'])}; {num(r['total_infected'])} are infected within {num(r['days'])} days.",
        ]  # fmt: skip
