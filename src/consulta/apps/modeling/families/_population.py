"""Structured populations: the Leslie matrix with harvesting."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from ._base import Family, FamilyParams, ProblemData, columns_problem, num, numeric_columns, stated, zh

__all__ = ["Leslie", "LeslieParams"]


class LeslieParams(FamilyParams):
    family: Literal["leslie"] = "leslie"
    next_table: str = Field("", max_length=60, description="下一年同样格式的数据文件（没有则留空）")
    age_column: str = Field("", max_length=60, description="年龄列")
    count_column: str = Field("", max_length=60, description="数量列（如雌性数量）")
    breeding_age: int = Field(1, ge=0, le=100, description="开始繁殖的年龄")
    fecundity: float = Field(0.0, ge=0, le=50, description="每个繁殖个体每年的后代数（0：由数据估计）")
    years: int = Field(10, ge=1, le=100, description="预测的年数")
    target: float = Field(0.0, ge=0, description="要维持的种群数量（题目给出；0：维持现有水平）")


MAX_AGE = 200
COVERED_AGES = 0.8
"""An age column's distinct values cover at least this share of the whole ages from its least to its greatest (one
age missing of a herd's 16 passes; a column of prices or profits does not)."""


def _not_ages(column: pd.Series) -> str:
    """Why `column` is not a run of ages ("" when it is)."""
    ages = column.dropna()
    if len(ages) < 3 or not pd.api.types.is_numeric_dtype(ages) or not (ages == ages.round()).all():
        return "is not a whole-number age"
    distinct = ages.drop_duplicates()
    span = ages.max() - ages.min() + 1
    if ages.min() < 0 or ages.max() > MAX_AGE or len(distinct) < COVERED_AGES * span:
        # seen on the embedded model: a workshop's profit per product (45, 80, 120, 30) taken for ages
        return (
            f"is not a run of ages ({len(distinct)} values from {ages.min():g} to {ages.max():g}): a Leslie model "
            "needs a count for each age class"
        )
    return ""


class Leslie(Family):
    name = "leslie"
    horizon = "years"
    stated_only = {"fecundity": ("fecund", "fertil", "offspring", "birth", "calv", "fawn", "breed", "繁殖", "生育", "产仔", "出生", "幼崽")}  # fmt: skip
    group = "population"
    title = ("Leslie matrix with harvesting", "Leslie 矩阵（含收获）")
    answers = frozenset({"estimate", "forecast", "policy", "number"})
    Params = LeslieParams
    outputs = ("survival", "growth_rate", "harvest_rate", "removals_per_year", "total_projected")
    subject = (
        "age", "surviv", "cohort", "population", "herd", "breed", "birth", "fertil", "fecund", "mortal", "harvest",
        "cull", "hunt", "龄", "存活", "种群", "繁殖", "出生", "生育", "死亡率", "捕获", "捕捞",
        "猎杀", "淘汰",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(numeric_columns(frame)) < 2:
            return "it needs an age column and a count column"
        if not any(not _not_ages(frame[c]) for c in numeric_columns(frame)):
            return "no column is a run of whole-number ages"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = LeslieParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.age_column, p.count_column], min_rows=3)
        if p.next_table:
            reasons += columns_problem(data, p.next_table, [p.age_column, p.count_column], min_rows=3)
        if reasons:
            return reasons
        not_ages = _not_ages(data.tables[p.table][p.age_column])
        if not_ages:
            return [f"{p.age_column} of {p.table} {not_ages}"]
        for name in filter(None, [p.table, p.next_table]):
            rows = data.tables[name][[p.age_column, p.count_column]].dropna().drop_duplicates()
            clash = rows[p.age_column][rows[p.age_column].duplicated()]
            if len(clash):
                reasons.append(
                    f"{name}: age {int(clash.iloc[0])} has two different counts; say which is right before a Leslie model"
                )
        if p.target and not stated(data.statement, p.target):
            reasons.append(f"the level to keep ({p.target:g}) is not a number the problem states")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        s = result["survival"]
        ages = result["ages"]
        notes = []
        if result.get("repeated_ages"):
            notes.append(
                ("重复出现的年龄取平均：" if zh(lang) else "Ages given twice were averaged: ")
                + ", ".join(map(num, result["repeated_ages"]))
            )
        if result.get("filled_ages"):
            notes.append(
                ("缺失的年龄按相邻年龄插值：" if zh(lang) else "Missing ages were interpolated from their neighbours: ")
                + ", ".join(map(num, result["filled_ages"]))
            )
        low = min(range(len(s)), key=lambda i: s[i]) if s else 0
        if zh(lang):
            return [
                *notes,
                f"各年龄的存活率从 {num(ages[0])} 岁的 {num(s[0])} 到 {num(ages[len(s) - 1])} 岁的 {num(s[-1])}，最低为 {num(ages[low])} 岁的 {num(s[low])}；繁殖年龄起于 {num(result['breeding_age'])} 岁，繁殖率 {num(result['fecundity'])}。",
                f"Leslie 矩阵的主特征值（年增长率）为 {num(result['growth_rate'])}。",
                f"不加管理，总数将从 {num(result['total_now'])} 变为 {num(result['years'])} 年后的 {num(result['total_projected'])}。",
                *([f"先移走 {num(result['first_removal'])} 只（各年龄按比例），使总数降到 {num(result['level'])}。"] if result.get("first_removal") else []),
                f"每年按比例移走 {num(result['harvest_rate'])} 的个体可使种群保持稳定：在 {num(result['level'])} 的水平上约为每年 {num(result['removals_per_year'])} 只；{num(result['years'])} 年后总数为 {num(result['total_managed'])}。",
            ]  # fmt: skip
        return [
            *notes,
            f"Survival by age runs from {num(s[0])} at age {num(ages[0])} to {num(s[-1])} at age {num(ages[len(s) - 1])}, lowest at age {num(ages[low])} ({num(s[low])}); breeding starts at age {num(result['breeding_age'])} with fecundity {num(result['fecundity'])}.",
            f"The Leslie matrix's dominant eigenvalue (the yearly growth rate) is {num(result['growth_rate'])}.",
            f"Without management the total goes from {num(result['total_now'])} to {num(result['total_projected'])} in {num(result['years'])} years.",
            *([f"First {num(result['first_removal'])} animals are removed (each age alike), bringing the total down to {num(result['level'])}."] if result.get("first_removal") else []),
            f"Removing a share {num(result['harvest_rate'])} of the animals each year holds the population level: about {num(result['removals_per_year'])} a year at a level of {num(result['level'])}; after {num(result['years'])} years the total is {num(result['total_managed'])}.",
        ]  # fmt: skip
