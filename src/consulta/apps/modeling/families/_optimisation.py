"""Optimisation: a linear or integer programme (PuLP), the assignment problem and the transportation problem."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from ._base import Family, FamilyParams, ProblemData, columns_problem, num, numeric_columns, stated, zh

__all__ = [
    "Assignment",
    "AssignmentParams",
    "LinearProgramme",
    "LinearProgrammeParams",
    "Transport",
    "TransportParams",
]


_OPTIMUM = ("maximi", "minimi", "optim", "cost", "least", "最大", "最小", "最多", "最少", "最优", "成本", "最省")
"""Words a statement asking for the best plan uses: every optimisation family's cues (the rest tell them apart)."""


class LinearProgrammeParams(FamilyParams):
    family: Literal["linear_programme"] = "linear_programme"
    name_column: str = Field("", max_length=60, description="决策对象（产品、活动）的名称列")
    objective_column: str = Field("", max_length=60, description="目标系数列（如单位利润）")
    resource_columns: list[str] = Field(default_factory=list, max_length=8, description="各资源的单位消耗列")
    limits: list[float] = Field(default_factory=list, max_length=8, description="各资源的上限（题目给出，顺序同上）")
    sense: Literal["max", "min"] = "max"
    integer: bool = Field(False, description="决策变量是否必须为整数")


class LinearProgramme(Family):
    name = "linear_programme"
    group = "optimisation"
    title = ("Linear / integer programme (PuLP)", "线性／整数规划（PuLP）")
    aliases = ("linear programm", "integer programm", "线性规划", "整数规划")
    answers = frozenset({"policy", "number"})
    Params = LinearProgrammeParams
    outputs = ("status", "objective", "plan", "binding")
    cues = (
        *_OPTIMUM, "profit", "budget", "resource", "produc", "plan$", "planning", "how many of each", "schedul", "constrain", "limit", "capacit",
        "diet", "blend", "mix", "invest", "规划", "利润", "预算", "资源", "生产", "产量", "约束", "限制", "安排", "计划",
        "投资", "配比",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame.columns) < 3 or len(numeric_columns(frame)) < 2:
            return "it needs a name column and numeric columns (the objective, each resource's use)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = LinearProgrammeParams.model_validate(params)
        if not p.resource_columns:
            return ["no resource column is named: a programme needs at least one constraint"]
        reasons = columns_problem(data, p.table, [p.objective_column, *p.resource_columns])
        reasons += columns_problem(data, p.table, [p.name_column], numeric=False) if p.table in data.tables else []
        if len(p.limits) != len(p.resource_columns):
            reasons.append(
                f"{len(p.resource_columns)} resources but {len(p.limits)} limits: give one limit per resource"
            )
        reasons += [
            f"the limit {v:g} is not a number the problem states" for v in p.limits if not stated(data.statement, v)
        ]
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        if r["status"] != "Optimal":
            return [
                f"规划无最优解（{r['status']}）。" if zh(lang) else f"The programme has no optimum ({r['status']})."
            ]
        plan = ", ".join(f"{k} {num(v)}" for k, v in r["plan"].items())
        binding = ", ".join(r["binding"]) or ("无" if zh(lang) else "none")
        if zh(lang):
            goal = "最大" if r["sense"] == "max" else "最小"
            return [f"最优方案：{plan}；目标值{goal}为 {num(r['objective'])}。", f"用尽的资源（紧约束）：{binding}。"]
        goal = "largest" if r["sense"] == "max" else "smallest"
        return [f"The optimal plan: {plan}; the {goal} objective is {num(r['objective'])}.", f"Resources used up (binding constraints): {binding}."]  # fmt: skip


def _not_matrix(frame: pd.DataFrame, *, also: int = 0) -> str:
    """Why `frame` is no matrix of numbers beside a label column ("" when some column labels rows whose other
    cells, `also` columns besides at least two, are all numbers)."""
    for label in frame.columns:
        rest = frame.drop(columns=[label])
        if (
            len(frame) >= 2
            and rest.shape[1] >= 2 + also
            and all(pd.api.types.is_numeric_dtype(rest[c]) for c in rest.columns)
            and not rest.isna().any().any()
        ):
            return ""
    return "it needs a label column and a matrix of numbers beside it (no empty cell)"


class AssignmentParams(FamilyParams):
    family: Literal["assignment"] = "assignment"
    label_column: str = Field("", max_length=60, description="行标签列（如工人）；其余列为各任务的成本")
    sense: Literal["min", "max"] = "min"


def _matrix_problem(data: ProblemData, table: str, label: str, drop: tuple[str, ...] = ()) -> list[str]:
    reasons = columns_problem(data, table, [label], numeric=False, min_rows=2)
    if reasons:
        return reasons
    rest = data.tables[table].drop(columns=[label, *drop], errors="ignore")
    text = [c for c in rest.columns if not pd.api.types.is_numeric_dtype(rest[c])]
    if text or rest.shape[1] < 2:
        return [f"{table} must be a matrix: a label column and at least two numeric columns (not numeric: {text})"]
    if rest.isna().any().any():
        return [f"{table} has empty cells in its matrix"]
    return []


class Assignment(Family):
    name = "assignment"
    group = "optimisation"
    title = ("Assignment problem (Hungarian method)", "指派问题（匈牙利算法）")
    answers = frozenset({"policy", "number"})
    Params = AssignmentParams
    outputs = ("pairs", "total")
    cues = (
        *_OPTIMUM, "assign", "allocat", "match", "pairing", "worker", "staff", "employee", "job", "crew", "person", "one each",
        "指派", "分配", "匹配", "工人", "员工", "人员", "每人", "一人", "岗位", "分派",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        return _not_matrix(frame)

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = AssignmentParams.model_validate(params)
        return _matrix_problem(data, p.table, p.label_column)

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        pairs = ", ".join(f"{a} → {b}" for a, b in result["pairs"].items())
        if zh(lang):
            return [f"最优指派：{pairs}；总{'成本' if result['sense'] == 'min' else '收益'}为 {num(result['total'])}。"]
        return [f"The optimal assignment: {pairs}; the total {'cost' if result['sense'] == 'min' else 'value'} is {num(result['total'])}."]  # fmt: skip


class TransportParams(FamilyParams):
    family: Literal["transport"] = "transport"
    label_column: str = Field("", max_length=60, description="产地（行）名称列")
    supply_column: str = Field("", max_length=60, description="供应量列")
    demand_row: str = Field("", max_length=60, description="需求量所在行的名称")


class Transport(Family):
    name = "transport"
    group = "optimisation"
    title = ("Transportation problem (PuLP)", "运输问题（PuLP）")
    answers = frozenset({"policy", "number"})
    Params = TransportParams
    outputs = ("status", "total_cost", "flows")
    cues = (
        *_OPTIMUM, "transport", "ship", "deliver", "supply", "demand", "warehouse", "depot", "freight", "haul", "origins",
        "destination", "logistic", "运输", "运费", "调运", "供应", "供给", "需求", "产地", "销地",
        "仓库", "配送", "物流", "发货", "调配",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 3:
            return "it needs a row per source and a row of demands"
        return _not_matrix(frame, also=1)  # the supply column besides the costs

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = TransportParams.model_validate(params)
        reasons = _matrix_problem(data, p.table, p.label_column, (p.supply_column,))
        if reasons:
            return reasons
        frame = data.tables[p.table]
        if p.supply_column not in frame.columns:
            return [f"{p.table} has no supply column {p.supply_column!r}"]
        labels = [str(v) for v in frame[p.label_column]]
        if p.demand_row not in labels:
            return [f"{p.table} has no row {p.demand_row!r} of demands (its rows: {', '.join(labels)})"]
        supply = frame.loc[[v != p.demand_row for v in labels], p.supply_column].sum()
        demand = (
            frame.loc[[v == p.demand_row for v in labels]]
            .drop(columns=[p.label_column, p.supply_column])
            .sum(axis=1)
            .iloc[0]
        )
        if supply < demand:
            reasons.append(f"the supply ({supply:g}) is less than the demand ({demand:g}): no plan meets it")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        if result["status"] != "Optimal":
            return [
                f"运输问题无最优解（{result['status']}）。"
                if zh(lang)
                else f"The problem has no optimum ({result['status']})."
            ]
        flows = ", ".join(f"{f['from']} → {f['to']} {num(f['amount'])}" for f in result["flows"])
        if zh(lang):
            return [f"最优运输方案：{flows}；最小总运费 {num(result['total_cost'])}。"]
        return [f"The cheapest shipping plan: {flows}; the least total cost is {num(result['total_cost'])}."]
