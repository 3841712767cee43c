"""The modeling team on problems nobody tuned it for: each problem is generated here from a seed with a known truth
(the coefficients the data were made with, the value of the case asked about), written as a problem folder, and
solved by the real command (`consulta chat modeling --problem DIR -p …`, a new data dir each, the model named by
`--model`). Each run is then read from its workspace and checked in code:

- the model kind chosen (regression for rows that are units, forecast for a series, epidemic for case counts);
- exit status, wall time, the PDF, the four gates' verdicts, answers, consultations, reworks;
- against the truth: a regression's effects (how many truths lie in their interval), the most important feature,
  the case's prediction (its error, and whether the truth is in the interval); a forecast's holdout MAPE;
- the paper's text: no forecast words in a regression's paper; every sentence of its results is code's.

The problems: house prices (English, a categorical covariate, a case to predict), student scores (Chinese column
names, a case to predict), a factory's energy use over 60 months as a public benchmark's problem JSON (a forecast),
daily café sales with a date and temperature (a series), and wine ratings with no case asked (a regression where
nothing must be predicted); then contest-style problems (`CONTEST`, and the herd of issue 24): a statement with 2–3
tasks and data generated with a known truth, at least one per family group (population, ODEs, optimisation,
networks, stochastic, evaluation, statistics), in Chinese and English. Per problem, per task: found in the
statement, the family chosen and whether it fits (`Truth.families`), answered or declined with a reason, the numbers
of its section traced to the result files (or the statement), the truth recovered from its result JSON, wall time.
With `--model scripted` the test double chooses the right family with the right parameters for each task
(`Truth.choices`): it checks the harness and the code paths, not a model.

    flock /work/model.lock .venv/bin/python bench/eval_modeling.py --model local   # results/modeling_eval.json
    .venv/bin/python bench/eval_modeling.py --model scripted --only houses_en       # the code paths, quickly
    .venv/bin/python bench/eval_modeling.py --menus --out bench/results/modeling_eval.menus.json  # code's menus
    .venv/bin/python bench/eval_modeling.py --aggregate --out bench/results/modeling_aggregate.json  # issue 24's measures
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from consulta.apps.modeling._checks import paper_numbers, result_values
from consulta.apps.modeling._compose import _SENTENCE, _UNDONE
from consulta.apps.modeling._tasks import statement_tasks
from consulta.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Truth:
    kind: str
    effects: dict[str, float] = field(default_factory=dict)
    """term → the coefficient the data were made with (regression)."""
    top: str | None = None
    """The covariate that matters most (regression)."""
    case_value: float | None = None
    """The target's expected value for the case the problem asks about (None: no case is asked)."""
    tasks: int = 0
    """The tasks the statement poses ("Task 1: …"); 0: it names none."""
    families: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """Task number → the families that fit it (the first is the one the scripted double chooses)."""
    choices: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Task number → the parameters the right choice has (what the scripted double answers; the model reads them
    from the statement and the data)."""
    keys: list[tuple[int, str, float, float]] = field(default_factory=list)
    """(task, a key of its result JSON ("a.b" for nested), the true value, the tolerance): the truth recovered."""


def _houses(folder: Path, rng: np.random.Generator) -> Truth:
    n = 220
    frame = pd.DataFrame({
        "listing": [f"L-{i:03d}" for i in range(n)], "area_sqm": rng.uniform(35, 190, n).round(1), "bedrooms": rng.integers(1, 6, n),
        "built_year_age": rng.integers(0, 60, n), "km_to_centre": rng.uniform(0.3, 30, n).round(1),
        "garden": rng.choice(["none", "small", "large"], n),
    })  # fmt: skip
    garden = {"large": 0.0, "none": -90.0, "small": -40.0}  # the first value (sorted) is the baseline
    price = (
        650
        + 28 * frame.area_sqm
        + 35 * frame.bedrooms
        - 4 * frame.built_year_age
        - 15 * frame.km_to_centre
        + frame.garden.map(garden)
        + rng.normal(0, 120, n)
    )
    frame["sale_price_k"] = price.round(0)
    frame.to_csv(folder / "sales.csv", index=False)
    (folder / "problem.md").write_text(
        "# What sets the price of a house?\n\nA property website gives the last year's sales (`sales.csv`): floor area, bedrooms, "
        "age, distance to the centre, the garden, and the price in thousands.\n\nTasks: explain how each feature affects the price; "
        "build a model and test it on houses it has not seen; estimate the price of a 120 m2 house with 3 bedrooms, 15 years old, "
        "8 km from the centre; say which feature matters most.\n",
        encoding="utf-8",
    )
    case = 650 + 28 * 120 + 35 * 3 - 4 * 15 - 15 * 8 + np.mean(list(garden.values()))
    effects = {
        "area_sqm": 28.0,
        "bedrooms": 35.0,
        "built_year_age": -4.0,
        "km_to_centre": -15.0,
        "garden=none": -90.0,
        "garden=small": -40.0,
    }
    return Truth(kind="regression", effects=effects, top="area_sqm", case_value=float(case))


def _scores(folder: Path, rng: np.random.Generator) -> Truth:
    n = 300
    frame = pd.DataFrame({
        "学号": [f"S{i:04d}" for i in range(n)], "每周学习小时": rng.uniform(2, 25, n).round(1), "睡眠小时": rng.uniform(5, 9.5, n).round(1),
        "缺课次数": rng.integers(0, 12, n), "班级": rng.choice(["一班", "二班", "三班"], n),
    })  # fmt: skip
    score = (
        20 + 2.0 * frame["每周学习小时"] + 2.5 * frame["睡眠小时"] - 1.5 * frame["缺课次数"] + rng.normal(0, 5, n)
    )  # at most 94: never clipped
    frame["期末成绩"] = score.clip(0, 100).round(1)
    frame.to_csv(folder / "students.csv", index=False)
    (folder / "problem.md").write_text(
        "# 期末成绩的影响因素\n\n学校收集了 300 名学生一学期的数据（`students.csv`）：每周学习小时、睡眠小时、缺课次数、班级和期末成绩。\n\n"
        "要求：分析各因素与期末成绩的关系；建立模型并在留出的学生上检验；预测一名每周学习 15 小时、每天睡眠 8 小时、缺课 2 次的学生的期末成绩；"
        "指出最重要的因素。\n",
        encoding="utf-8",
    )
    return Truth(
        kind="regression",
        effects={"每周学习小时": 2.0, "睡眠小时": 2.5, "缺课次数": -1.5},
        top="每周学习小时",
        case_value=20 + 2.0 * 15 + 2.5 * 8 - 1.5 * 2,
    )


def _factory(folder: Path, rng: np.random.Generator) -> Truth:
    months = pd.period_range("2019-01", periods=60, freq="M")
    t = np.arange(60)
    output = 1000 + 8 * t + rng.normal(0, 40, 60)
    energy = 200 + 0.9 * output + 60 * np.sin(2 * np.pi * (t % 12) / 12) + rng.normal(0, 25, 60)
    frame = pd.DataFrame({"month": months.astype(str), "output_tonnes": output.round(1), "energy_mwh": energy.round(1)})
    frame.to_csv(folder / "plant.csv", index=False)
    problem = {
        "background": "A cement plant records its monthly output and electricity use. Management plans next year's energy budget.",
        "problem_requirement": "Model the plant's monthly energy use from its output and the season, check the model on the last year, and forecast the next 12 months with an interval.",
        "dataset_path": ["plant.csv"],
        "dataset_description": {"plant.csv": "60 months of output and energy use"},
        "variable_description": {
            "month": "the month (YYYY-MM)",
            "output_tonnes": "cement produced (tonnes)",
            "energy_mwh": "electricity used (MWh)",
        },
        "addendum": "",
    }
    (folder / "problem.json").write_text(json.dumps(problem, ensure_ascii=False, indent=1), encoding="utf-8")
    return Truth(kind="forecast")


def _cafe(folder: Path, rng: np.random.Generator) -> Truth:
    days = pd.date_range("2024-03-01", periods=200, freq="D")
    temp = 12 + 10 * np.sin(2 * np.pi * np.arange(200) / 365) + rng.normal(0, 3, 200)
    weekend = (days.day_of_week >= 5).astype(int)
    sales = 300 + 6 * temp + 120 * weekend + rng.normal(0, 30, 200)
    pd.DataFrame(
        {
            "date": days.strftime("%Y-%m-%d"),
            "temperature_c": temp.round(1),
            "weekend": weekend,
            "sales_eur": sales.round(0),
        }
    ).to_csv(folder / "cafe.csv", index=False)
    (folder / "problem.md").write_text(
        "# Café sales\n\nA café logged its daily sales, the temperature and whether it was a weekend (`cafe.csv`). "
        "How do temperature and weekends drive sales, and what should it expect over the next two weeks?\n",
        encoding="utf-8",
    )
    return Truth(kind="forecast")


def _wine(folder: Path, rng: np.random.Generator) -> Truth:
    n = 180
    frame = pd.DataFrame(
        {
            "alcohol": rng.uniform(9, 14.5, n).round(2),
            "acidity": rng.uniform(3, 9, n).round(2),
            "sugar": rng.uniform(1, 12, n).round(1),
        }
    )
    frame["rating"] = (2 + 0.4 * frame.alcohol - 0.2 * frame.acidity + rng.normal(0, 0.4, n)).round(2)
    frame.to_csv(folder / "wine.csv", index=False)
    (folder / "problem.md").write_text(
        "# Wine ratings\n\nTasters rated wines (`wine.csv`). Which measured properties explain the ratings, and how well can they be predicted?\n",
        encoding="utf-8",
    )
    return Truth(
        kind="regression", effects={"alcohol": 0.4, "acidity": -0.2, "sugar": 0.0}, top="alcohol", case_value=None
    )


def _herd(folder: Path, rng: np.random.Generator) -> Truth:
    """Issue 24's contest-style problem: two tables of a herd's counts by age and sex (one age given twice, one
    missing), three tasks (survival by age, the age structure's future, a yearly policy). No family the team has fits
    it: the truth is that the tasks are found, each answered or declined with a reason, and a total regressed on its
    parts is rejected."""
    survival = np.linspace(0.92, 0.6, 16)

    def year(n0: int) -> pd.DataFrame:
        female, male = [n0], [n0]
        for s in survival[:-1]:
            female.append(int(female[-1] * s + rng.integers(-3, 4)))
            male.append(int(male[-1] * (s - 0.05) + rng.integers(-3, 4)))
        frame = pd.DataFrame({"age": range(16), "female": female, "male": male})
        frame["total"] = frame.female + frame.male
        return frame

    first = year(400)
    pd.concat([first.iloc[:6], first.iloc[[5]], first.iloc[7:]]).to_csv(folder / "herd_2023.csv", index=False)
    year(420).to_csv(folder / "herd_2024.csv", index=False)
    (folder / "problem.md").write_text(
        "# Managing an elephant herd\n\n## Background\nA park counted its elephants by age and sex in two consecutive "
        "years (`herd_2023.csv`, `herd_2024.csv`: females and males of each age, and their total).\n\n## Tasks\n"
        "Task 1: Estimate the survival rate of each age from the two years' counts.\n"
        "Task 2: Describe the herd's age structure and how it will change over the next 10 years if nothing is done.\n"
        "Task 3: Propose a yearly management policy (how many animals to relocate each year) that keeps the herd near "
        "11,000.\n",
        encoding="utf-8",
    )
    # each year's table is a herd at its stable structure (not the same animals a year on): survival is read from
    # one year's structure, the other year's table being the check of it
    leslie = {"table": "herd_2024.csv", "next_table": "", "age_column": "age", "count_column": "female",
              "breeding_age": 1, "years": 10, "target": 11000}  # fmt: skip
    return Truth(
        kind="population", tasks=3, families={1: ("leslie",), 2: ("leslie",), 3: ("leslie",)},
        choices={n: {"family": "leslie", **leslie} for n in (1, 2, 3)}, keys=[(1, "survival.0", 0.92, 0.05)],
    )  # fmt: skip


# ---- contest-style problems: a statement with 2–3 tasks, data generated with a known truth, one family group or more each


def _md(folder: Path, title: str, background: str, tasks: list[str], zh: bool = False) -> None:
    heading = ("## 背景\n", "## 问题\n") if zh else ("## Background\n", "## Tasks\n")
    lines = [f"任务{'一二三四'[i]}：{t}" if zh else f"Task {i + 1}: {t}" for i, t in enumerate(tasks)]
    (folder / "problem.md").write_text(
        f"# {title}\n\n{heading[0]}{background}\n\n{heading[1]}" + "\n".join(lines) + "\n", encoding="utf-8"
    )


def _deer_zh(folder: Path, rng: np.random.Generator) -> Truth:
    survival, fecundity = np.array([0.6, 0.8, 0.85, 0.85, 0.8, 0.7, 0.5]), 0.9
    leslie = np.zeros((8, 8))
    leslie[0, 2:] = fecundity
    leslie[np.arange(1, 8), np.arange(7)] = survival
    n0 = np.array([900, 520, 410, 350, 300, 240, 170, 90], dtype=float)
    n1 = leslie @ n0
    pd.DataFrame({"年龄": range(8), "雌鹿数量": n0.round()}).to_csv(folder / "鹿群_2022.csv", index=False)
    pd.DataFrame({"年龄": range(8), "雌鹿数量": n1.round()}).to_csv(folder / "鹿群_2023.csv", index=False)
    _md(folder, "保护区鹿群的管理", "保护区连续两年按年龄统计了雌鹿的数量（`鹿群_2022.csv`、`鹿群_2023.csv`）。雌鹿从 2 岁开始繁殖。",
        ["根据两年的数据估计各年龄的存活率。", "预测不加管理时 10 年后鹿群的总数。", "每年应捕获多少只鹿才能使鹿群保持在 3000 只左右？给出管理方案。"], zh=True)  # fmt: skip
    p = {"family": "leslie", "table": "鹿群_2022.csv", "next_table": "鹿群_2023.csv", "age_column": "年龄",
         "count_column": "雌鹿数量", "breeding_age": 2, "years": 10, "target": 3000}  # fmt: skip
    growth = float(max(np.linalg.eigvals(leslie).real))
    return Truth(kind="leslie", tasks=3, families={1: ("leslie",), 2: ("leslie",), 3: ("leslie",)},
                 choices={1: p, 2: p, 3: p}, keys=[(1, "survival.0", 0.6, 0.01), (3, "growth_rate", growth, 0.01)])  # fmt: skip


def _lynx_en(folder: Path, rng: np.random.Generator) -> Truth:
    from scipy.integrate import solve_ivp

    a, b, g, d = 0.55, 0.028, 0.84, 0.026
    t = np.arange(0, 30.5, 0.5)
    sol = solve_ivp(
        lambda _, z: [a * z[0] - b * z[0] * z[1], d * z[0] * z[1] - g * z[1]], (0, 30), [30, 4], t_eval=t, rtol=1e-9
    )
    frame = pd.DataFrame(
        {
            "year": t,
            "hares_thousands": sol.y[0] * rng.normal(1, 0.02, len(t)),
            "lynx_thousands": sol.y[1] * rng.normal(1, 0.02, len(t)),
        }
    )
    frame.round(3).to_csv(folder / "pelts.csv", index=False)
    _md(folder, "Hares and lynx", "A trading company counted hare and lynx pelts (thousands) every half year for 30 years (`pelts.csv`).",
        ["Estimate the parameters of a predator–prey model of the two species.", "How many hares and lynx are there at the equilibrium of the model?"])  # fmt: skip
    p = {"family": "lotka_volterra", "table": "pelts.csv", "time_column": "year", "prey_column": "hares_thousands", "predator_column": "lynx_thousands"}  # fmt: skip
    return Truth(kind="lotka_volterra", tasks=2, families={1: ("lotka_volterra",), 2: ("lotka_volterra",)}, choices={1: p, 2: p},
                 keys=[(1, "alpha", a, 0.05), (2, "prey_equilibrium", g / d, 2.0)])  # fmt: skip


def _drug_zh(folder: Path, rng: np.random.Generator) -> Truth:
    t = np.array([0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24])
    c = 12 * (np.exp(-0.15 * t) - np.exp(-1.2 * t)) * rng.normal(1, 0.02, len(t))
    pd.DataFrame({"时间_小时": t, "血药浓度_mg_L": c.round(3)}).to_csv(folder / "血药浓度.csv", index=False)
    _md(folder, "口服药物的血药浓度", "一名志愿者口服一剂药物后，在不同时间测得血药浓度（`血药浓度.csv`）。浓度低于 2 mg/L 时药物失效。",
        ["估计药物的吸收与消除速率常数及半衰期。", "服药后多少小时血药浓度降到 2 mg/L 以下？"], zh=True)  # fmt: skip
    p = {"family": "pharmacokinetics", "table": "血药浓度.csv", "time_column": "时间_小时", "concentration_column": "血药浓度_mg_L", "threshold": 2}  # fmt: skip
    return Truth(kind="pharmacokinetics", tasks=2, families={1: ("pharmacokinetics",), 2: ("pharmacokinetics",)}, choices={1: p, 2: p},
                 keys=[(1, "ke", 0.15, 0.01), (1, "half_life", float(np.log(2) / 0.15), 0.3)])  # fmt: skip


def _flu_en(folder: Path, rng: np.random.Generator) -> Truth:
    population, beta, gamma = 50000, 0.45, 0.18
    s, i, cases = population - 5.0, 5.0, []
    for _ in range(45):
        new = beta * s * i / population
        s, i = s - new, i + new - gamma * i
        cases.append(rng.poisson(new))
    pd.DataFrame({"day": range(1, 46), "new_cases": cases}).to_csv(folder / "outbreak.csv", index=False)
    _md(folder, "An influenza outbreak", "A town of 50,000 people reported its new influenza cases each day for 45 days (`outbreak.csv`).",
        ["Estimate the transmission and recovery rates and the basic reproduction number.", "Forecast on which day new cases peak and how many people will be infected in all."])  # fmt: skip
    p = {"family": "sir", "table": "outbreak.csv", "cases_column": "new_cases", "population": 50000, "horizon": 60}
    return Truth(kind="epidemic", tasks=2, families={1: ("sir",), 2: ("sir",)}, choices={1: p, 2: p}, keys=[(1, "r0", beta / gamma, 0.3)])  # fmt: skip


def _furniture_en(folder: Path, rng: np.random.Generator) -> Truth:
    pd.DataFrame({"product": ["chair", "table", "desk", "shelf"], "profit": [45, 80, 120, 30], "wood_m3": [0.05, 0.15, 0.2, 0.08],
                  "labour_h": [2, 3, 5, 1], "machine_h": [1, 2, 2, 1]}).to_csv(folder / "products.csv", index=False)  # fmt: skip
    _md(folder, "A furniture workshop's weekly plan", "A workshop makes four products (`products.csv`: profit per unit and the wood, labour "
        "and machine hours each uses). Each week it has 12 m3 of wood, 400 labour hours and 200 machine hours.",
        ["Propose a weekly production plan (how many of each product, whole units) that maximises profit.", "How much profit does the plan make?"])  # fmt: skip
    p = {"family": "linear_programme", "table": "products.csv", "name_column": "product", "objective_column": "profit",
         "resource_columns": ["wood_m3", "labour_h", "machine_h"], "limits": [12, 400, 200], "sense": "max", "integer": True}  # fmt: skip
    import pulp

    m = pulp.LpProblem("truth", pulp.LpMaximize)
    x = [m.add_variable(f"x{i}", lowBound=0, cat=pulp.LpInteger) for i in range(4)]
    m += 45 * x[0] + 80 * x[1] + 120 * x[2] + 30 * x[3]
    m += 0.05 * x[0] + 0.15 * x[1] + 0.2 * x[2] + 0.08 * x[3] <= 12
    m += 2 * x[0] + 3 * x[1] + 5 * x[2] + x[3] <= 400
    m += x[0] + 2 * x[1] + 2 * x[2] + x[3] <= 200
    m.solve(pulp.HiGHS(msg=False))
    return Truth(kind="linear_programme", tasks=2, families={1: ("linear_programme",), 2: ("linear_programme",)}, choices={1: p, 2: p},
                 keys=[(2, "objective", float(pulp.value(m.objective)), 0.5)])  # fmt: skip


def _assign_zh(folder: Path, rng: np.random.Generator) -> Truth:
    from scipy.optimize import linear_sum_assignment

    cost = rng.integers(4, 20, (5, 5))
    frame = pd.DataFrame(cost, columns=[f"任务{c}" for c in "ABCDE"])
    frame.insert(0, "工人", ["甲", "乙", "丙", "丁", "戊"])
    frame.to_csv(folder / "工时.csv", index=False)
    rows, cols = linear_sum_assignment(cost)
    _md(folder, "车间的任务指派", "五名工人完成五项任务各需的工时见 `工时.csv`，每人只做一项任务，每项任务只由一人完成。",
        ["给出使总工时最少的指派方案。", "最少的总工时是多少？"], zh=True)  # fmt: skip
    p = {"family": "assignment", "table": "工时.csv", "label_column": "工人", "sense": "min"}
    return Truth(kind="assignment", tasks=2, families={1: ("assignment",), 2: ("assignment",)}, choices={1: p, 2: p},
                 keys=[(2, "total", float(cost[rows, cols].sum()), 0.01)])  # fmt: skip


def _roads_zh(folder: Path, rng: np.random.Generator) -> Truth:
    import networkx as nx

    edges = [("A", "B", 7, 30), ("A", "C", 9, 25), ("A", "F", 14, 10), ("B", "C", 10, 15), ("B", "D", 15, 20), ("C", "D", 11, 25),
             ("C", "F", 2, 20), ("D", "E", 6, 40), ("E", "F", 9, 15)]  # fmt: skip
    pd.DataFrame(edges, columns=["起点", "终点", "距离_km", "通行能力"]).to_csv(folder / "道路.csv", index=False)
    g = nx.Graph()
    g.add_weighted_edges_from([(a, b, w) for a, b, w, _ in edges])
    flow = nx.DiGraph()
    for a, b, _, c in edges:
        flow.add_edge(a, b, capacity=c)
    _md(folder, "城市道路网络", "城市的主要路口 A 到 F 之间的道路见 `道路.csv`（距离与每分钟的通行能力，通行能力按起点到终点的方向）。",
        ["求从 A 到 E 的最短路线及其长度（给出行车方案）。", "从 A 到 E 每分钟最多能通过多少辆车？", "哪个路口最重要？请排序。"], zh=True)  # fmt: skip
    return Truth(
        kind="network", tasks=3, families={1: ("shortest_path",), 2: ("max_flow",), 3: ("centrality",)},
        choices={1: {"family": "shortest_path", "table": "道路.csv", "source_column": "起点", "target_column": "终点", "weight_column": "距离_km", "start": "A", "end": "E"},
                 2: {"family": "max_flow", "table": "道路.csv", "source_column": "起点", "target_column": "终点", "capacity_column": "通行能力", "source": "A", "sink": "E"},
                 3: {"family": "centrality", "table": "道路.csv", "source_column": "起点", "target_column": "终点"}},
        keys=[(1, "length", float(nx.dijkstra_path_length(g, "A", "E")), 0.01), (2, "max_flow", float(nx.maximum_flow_value(flow, "A", "E")), 0.01)],
    )  # fmt: skip


def _weather_en(folder: Path, rng: np.random.Generator) -> Truth:
    states = ["sunny", "cloudy", "rainy"]
    p = np.array([[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.2, 0.4, 0.4]])
    seq, s = [], 0
    for _ in range(730):
        seq.append(states[s])
        s = int(rng.choice(3, p=p[s]))
    pd.DataFrame({"day": range(1, 731), "weather": seq}).to_csv(folder / "weather.csv", index=False)
    values, vectors = np.linalg.eig(p.T)
    pi = np.abs(vectors[:, np.argmin(abs(values - 1))].real)
    pi /= pi.sum()
    _md(folder, "Tomorrow's weather", "A weather station logged each day as sunny, cloudy or rainy for two years (`weather.csv`).",
        ["Estimate the probabilities of moving from each kind of day to the next.", "Forecast the chance of each kind of weather 3 days after the last day.",
         "In the long run, on what share of days does it rain?"])  # fmt: skip
    c = {"family": "markov_chain", "table": "weather.csv", "state_column": "weather", "steps": 3}
    return Truth(kind="markov_chain", tasks=3, families={1: ("markov_chain",), 2: ("markov_chain",), 3: ("markov_chain",)}, choices={1: c, 2: c, 3: c},
                 keys=[(3, "steady_state.rainy", float(pi[2]), 0.04)])  # fmt: skip


def _bank_zh(folder: Path, rng: np.random.Generator) -> Truth:
    n = 400
    pd.DataFrame({"顾客": range(1, n + 1), "到达间隔_分钟": rng.exponential(1.5, n).round(3), "服务时间_分钟": rng.exponential(4.0, n).round(3)}).to_csv(folder / "银行.csv", index=False)  # fmt: skip
    _md(folder, "银行窗口的设置", "某银行记录了 400 名顾客的到达间隔与服务时间（`银行.csv`）。银行希望顾客平均排队等待不超过 2 分钟。",
        ["估计顾客的到达率与服务率。", "至少需要开几个窗口？"], zh=True)  # fmt: skip
    c = {
        "family": "queue",
        "table": "银行.csv",
        "interarrival_column": "到达间隔_分钟",
        "service_column": "服务时间_分钟",
        "max_wait": 2,
    }
    return Truth(kind="queue", tasks=2, families={1: ("queue",), 2: ("queue",)}, choices={1: c, 2: c}, keys=[(1, "arrival_rate", 1 / 1.5, 0.07)])  # fmt: skip


def _warehouse_en(folder: Path, rng: np.random.Generator) -> Truth:
    demand = rng.normal(100, 20, 365).clip(0).round(1)
    pd.DataFrame({"day": range(1, 366), "demand_tonnes": demand}).to_csv(folder / "demand.csv", index=False)
    _md(folder, "Is the warehouse big enough?", "A depot recorded its daily demand (tonnes) for a year (`demand.csv`). It is restocked every 30 days and holds 3,200 tonnes.",
        ["Estimate the probability that the demand over 30 days exceeds the 3,200 tonnes it holds.", "How many tonnes should it hold so that 30 days' demand exceeds it with probability at most 5%?"])  # fmt: skip
    c = {"family": "monte_carlo", "table": "demand.csv", "column": "demand_tonnes", "horizon": 30, "capacity": 3200}
    from scipy.stats import norm

    exceed = float(norm.sf(3200, 30 * demand.mean(), np.sqrt(30) * demand.std()))
    return Truth(kind="monte_carlo", tasks=2, families={1: ("monte_carlo",), 2: ("monte_carlo",)}, choices={1: c, 2: c}, keys=[(1, "probability_exceed", exceed, 0.02)])  # fmt: skip


def _suppliers_zh(folder: Path, rng: np.random.Generator) -> Truth:
    frame = pd.DataFrame({"供应商": ["S1", "S2", "S3", "S4", "S5", "S6"], "质量得分": [92, 85, 78, 88, 70, 95], "准时率": [0.96, 0.9, 0.85, 0.93, 0.8, 0.98],
                          "单价_元": [120, 105, 98, 110, 95, 118], "服务评分": [8.5, 7.9, 7.0, 8.1, 6.5, 9.0]})  # fmt: skip
    frame.to_csv(folder / "供应商.csv", index=False)
    _md(folder, "供应商的综合评价", "企业收集了六家供应商的质量得分、准时率、单价和服务评分（`供应商.csv`），单价越低越好，其余越高越好。",
        ["用客观赋权的方法估计各指标的权重。", "对六家供应商进行综合评价并排序。"], zh=True)  # fmt: skip
    crit = {
        "table": "供应商.csv",
        "label_column": "供应商",
        "criteria": ["质量得分", "准时率", "单价_元", "服务评分"],
        "cost_criteria": ["单价_元"],
    }
    return Truth(kind="evaluation", tasks=2, families={1: ("entropy_weight", "ahp"), 2: ("topsis", "grey_relational", "entropy_weight")},
                 choices={1: {"family": "entropy_weight", **crit}, 2: {"family": "topsis", **crit}}, keys=[])  # fmt: skip


def _criteria_ahp_en(folder: Path, rng: np.random.Generator) -> Truth:
    w = np.array([0.45, 0.25, 0.2, 0.1])
    names = ["cost", "safety", "comfort", "range"]
    matrix = pd.DataFrame((w[:, None] / w[None, :]).round(3), columns=names)
    matrix.insert(0, "criterion", names)
    matrix.to_csv(folder / "pairwise.csv", index=False)
    cars = pd.DataFrame({"car": ["Alto", "Brio", "Corsa", "Dacia"], "cost": [22, 18, 25, 15], "safety": [8, 6, 9, 5], "comfort": [7, 6, 9, 5], "range": [500, 420, 610, 380]})  # fmt: skip
    cars.to_csv(folder / "cars.csv", index=False)
    _md(folder, "Choosing a fleet car", "A company compares four criteria pairwise (`pairwise.csv`, Saaty's scale) and has four candidate cars (`cars.csv`; cost in thousands: lower is better).",
        ["Estimate the weight of each criterion from the pairwise comparisons and check their consistency.", "Rank the four cars."])  # fmt: skip
    return Truth(kind="evaluation", tasks=2, families={1: ("ahp",), 2: ("topsis", "grey_relational", "entropy_weight")},
                 choices={1: {"family": "ahp", "table": "pairwise.csv", "label_column": "criterion"},
                          2: {"family": "topsis", "table": "cars.csv", "label_column": "car", "criteria": names, "cost_criteria": ["cost"]}},
                 keys=[(1, "weights.cost", 0.45, 0.01)])  # fmt: skip


def _grain_zh(folder: Path, rng: np.random.Generator) -> Truth:
    years = np.arange(2016, 2024)
    output = 520 * np.exp(0.04 * (years - 2016)) * rng.normal(1, 0.005, len(years))
    pd.DataFrame({"年份": years, "粮食产量_万吨": output.round(1)}).to_csv(folder / "粮食.csv", index=False)
    _md(
        folder,
        "粮食产量的预测",
        "某县 2016—2023 年的粮食产量见 `粮食.csv`。",
        ["预测未来 3 年的粮食产量。", "估计产量的年增长率。"],
        zh=True,
    )
    c = {"family": "gm11", "table": "粮食.csv", "time_column": "年份", "value_column": "粮食产量_万吨", "horizon": 3}
    return Truth(kind="gm11", tasks=2, families={1: ("gm11", "time_series"), 2: ("gm11",)}, choices={1: c, 2: c},
                 keys=[(2, "growth_rate", float(np.exp(0.04) - 1), 0.006), (1, "forecast.2026", float(520 * np.exp(0.04 * 10)), 15)])  # fmt: skip


def _customers_en(folder: Path, rng: np.random.Generator) -> Truth:
    centres = np.array([[25, 300], [45, 1200], [65, 600]])
    points = np.vstack([c + rng.normal(0, [3, 60], (60, 2)) for c in centres])
    frame = pd.DataFrame(
        {
            "customer": [f"C{i:03d}" for i in range(180)],
            "age": points[:, 0].round(1),
            "monthly_spend": points[:, 1].round(0),
        }
    )
    frame["visits"] = (frame.monthly_spend / 100 + rng.normal(0, 0.5, 180)).round(1)
    frame.to_csv(folder / "customers.csv", index=False)
    _md(folder, "Customer segments", "A shop has the age, monthly spend and monthly visits of 180 customers (`customers.csv`).",
        ["How many customer groups are there, and how large is each?", "Estimate how monthly spend depends on age and visits."])  # fmt: skip
    return Truth(kind="kmeans", tasks=2, families={1: ("kmeans",), 2: ("regression",)},
                 choices={1: {"family": "kmeans", "table": "customers.csv", "columns": ["age", "monthly_spend"], "label_column": "customer"},
                          2: {"family": "regression", "table": "customers.csv", "target": "monthly_spend", "covariates": ["age", "visits"]}},
                 keys=[(1, "k", 3, 0)])  # fmt: skip


CONTEST: dict[str, tuple[Callable[[Path, np.random.Generator], Truth], str]] = {
    "deer_leslie_zh": (_deer_zh, "开始"), "lynx_ode_en": (_lynx_en, "start"), "drug_pk_zh": (_drug_zh, "开始"),
    "flu_sir_en": (_flu_en, "start"), "furniture_lp_en": (_furniture_en, "start"), "assign_zh": (_assign_zh, "开始"),
    "roads_network_zh": (_roads_zh, "开始"), "weather_markov_en": (_weather_en, "start"), "bank_queue_zh": (_bank_zh, "开始"),
    "warehouse_mc_en": (_warehouse_en, "start"), "suppliers_eval_zh": (_suppliers_zh, "开始"), "fleet_ahp_en": (_criteria_ahp_en, "start"),
    "grain_gm11_zh": (_grain_zh, "开始"), "customers_kmeans_en": (_customers_en, "start"),
}  # fmt: skip
"""The contest-style problems: every family group, in Chinese and English."""


PROBLEMS: dict[str, tuple[Callable[[Path, np.random.Generator], Truth], str]] = {
    "houses_en": (_houses, "start"), "scores_zh": (_scores, "开始"), "factory_benchmark_json": (_factory, "start"),
    "cafe_daily": (_cafe, "start"), "wine_no_case": (_wine, "start"), "herd_tasks_en": (_herd, "start"),
    **CONTEST,
}  # fmt: skip


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _judge(ws: Path, truth: Truth) -> dict[str, Any]:
    """What the run's files say, against the truth."""
    memo = (
        json.loads((ws / "state" / "director.json").read_text(encoding="utf-8"))
        if (ws / "state" / "director.json").is_file()
        else {}
    )
    plan = (memo.get("notes", {}).get("plan") or [""])[0]
    kind = plan.split(":", 1)[1].split()[0] if plan.startswith("model:") else None
    verdicts = {}
    for path in sorted((ws / "validation").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        verdicts[path.stem] = text.split("## 结论", 1)[1].split("##", 1)[0].strip() if "## 结论" in text else "?"
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8") if (ws / "paper" / "paper.md").is_file() else ""
    out: dict[str, Any] = {
        "kind_chosen": kind, "kind_expected": truth.kind, "kind_right": kind == truth.kind if not truth.families or truth.kind == "population" else None, "plan_notes": memo.get("notes", {}).get("plan", []),
        "verdicts": verdicts, "pdf": (ws / "paper" / "paper.pdf").is_file(), "results": sorted(p.name for p in (ws / "results").glob("*.csv")),
        "provenance": memo.get("notes", {}).get("provenance", {}),
    }  # fmt: skip
    if kind == "regression":
        coefficients = {r["term"]: r for r in _rows(ws / "results" / "coefficients.csv")}
        covered = {
            t: float(coefficients[t]["lower_95"]) <= v <= float(coefficients[t]["upper_95"])
            for t, v in truth.effects.items()
            if t in coefficients
        }
        out["effects_in_interval"] = f"{sum(covered.values())}/{len(truth.effects)}"
        out["effects_missing"] = sorted(set(truth.effects) - set(coefficients))
        ranked = _rows(ws / "results" / "importance.csv")
        out["top_feature"] = ranked[0]["covariate"] if ranked else None
        out["top_right"] = out["top_feature"] == truth.top
        prediction = _rows(ws / "results" / "prediction.csv")
        out["case_asked"] = truth.case_value is not None
        out["case_predicted"] = bool(prediction)
        out["scenario"] = _rows(ws / "results" / "scenario.csv")
        if prediction and truth.case_value is not None:
            p = prediction[0]
            out["case_error"] = round(float(p["predicted"]) - truth.case_value, 2)
            out["case_truth_in_interval"] = float(p["lower_95"]) <= truth.case_value <= float(p["upper_95"])
        out["forecast_words_in_paper"] = any(w in paper.lower() for w in ("forecast", "trend", "预测期", "趋势"))
    metrics = {r["metric"]: r["value"] for r in _rows(ws / "results" / "metrics.csv")}
    out["metrics"] = metrics
    statement = "".join(p.read_text(encoding="utf-8") for p in sorted((ws / "problem").glob("problem.md")))
    sections = re.findall(r"^### \d+\.\d+ (?:Task|问题) (\d+)\n\n[^\n]*\n\n([^\n]*)", paper, re.M)
    out["tasks_expected"] = truth.tasks
    out["tasks_found"] = len(statement_tasks(statement))
    out["tasks_answered"] = sum(not text.startswith(("Not answered", "未能回答")) for _, text in sections)
    out["tasks_declined_with_reason"] = sum(text.startswith(("Not answered", "未能回答")) for _, text in sections)
    out |= _judge_tasks(ws, truth, memo, paper, statement)
    files = [p.name for p in (ws / "problem").glob("*") if p.name != "problem.md"]
    out["paper_rules"] = paper_rules(paper, data_files=files) if paper else {}  # no paper: no rule to read
    return out


_TWICE = re.compile(r"^#{2,6}\s+\d+(?:\.\d+)*\.?\s+(?:\d+(?:\.\d+)*[.、)]?|[一二三四五六七八九十]+、)\s*\S.*$", re.M)
_ENDED = re.compile(r"[.。!?！？:：;；)）\]】\"”'*`$]$")


PAPER_RULES = ("headings_numbered_twice", "unended_paragraphs", "data_files_unnamed", "undone_claims")


def paper_rules(paper: str, *, data_files: list[str]) -> dict[str, list[str]]:
    """The paper rules of issue 24, read from `paper.md`: headings numbered twice ("## 2 1 Problem analysis"), prose
    paragraphs that end without a sentence end (a sentence cut off), data files of the problem the paper never names
    (neither used nor their omission explained), and sentences claiming an outlier treatment the cleaning never does."""
    paragraphs, block = [], []
    for line in [*paper.split("\n"), ""]:
        if line.strip() and not re.match(r"^\s*(#|\||!\[|[-*+] |\d+[.)] |\$\$|```|>)", line):
            block.append(line.strip())
        elif block:
            paragraphs.append(" ".join(block))
            block = []
    return {
        "headings_numbered_twice": _TWICE.findall(paper),
        "unended_paragraphs": [p[-60:] for p in paragraphs if not _ENDED.search(p)],
        "data_files_unnamed": sorted(f for f in data_files if f not in paper),
        "undone_claims": [s.strip() for s in _SENTENCE.findall(paper) if _UNDONE.search(s)],
    }


def _dig(result: Any, key: str) -> Any:
    for part in key.split("."):
        if isinstance(result, list) and part.isdigit():
            result = result[int(part)] if int(part) < len(result) else None
        else:
            result = result.get(part) if isinstance(result, dict) else None
    return result


def _judge_tasks(ws: Path, truth: Truth, memo: dict[str, Any], paper: str, statement: str) -> dict[str, Any]:
    """Per task: the family chosen (and whether it fits the truth), answered or declined, the numbers of its section
    traced to the result files (or the statement), and the truth recovered from its result JSON."""
    models = {m["task"]["number"]: m for m in memo.get("notes", {}).get("task_models", [])}
    known = result_values(ws) + [float(v.replace(",", "")) for v in re.findall(r"\d[\d,]*(?:\.\d+)?", statement)]
    parts = re.split(r"^### \d+\.\d+ (?:Task|问题) (\d+)\n", paper, flags=re.M)
    sections = {int(parts[i]): parts[i + 1].split("\n## ", 1)[0] for i in range(1, len(parts) - 1, 2)}
    tasks = []
    for number in sorted(set(truth.families) | set(models) | set(sections)):
        model = models.get(number, {})
        text = sections.get(number, "")
        body = text.split("\n\n", 1)[1] if "\n\n" in text else text  # the task's own words (the first line) aside
        numbers = paper_numbers(body)
        untraced = [
            n.text
            for n in numbers
            if not any(
                abs(n.value - v) <= n.tolerance + 1e-9 * max(1, abs(v))
                or (n.percent and abs(n.value / 100 - v) <= n.tolerance / 100)
                for v in known
            )
        ]
        row: dict[str, Any] = {
            "task": number, "family": model.get("family") or None, "status": model.get("status"), "offered": model.get("offered"),
            "expected": list(truth.families.get(number, ())), "family_right": model.get("family") in truth.families.get(number, ()),
            "answered": bool(text) and not body.strip().startswith(("Not answered", "未能回答")),
            "declined_with_reason": body.strip().startswith(("Not answered", "未能回答")) and len(body.strip()) > 20,
            "numbers": len(numbers), "untraced": untraced, "reasons": model.get("reasons", [])[:3],
        }  # fmt: skip
        recovered = []
        for task, key, value, tolerance in truth.keys:
            if task != number or not model.get("family"):
                continue
            path = ws / "results" / f"task{number}_{model['family']}.json"
            got = _dig(json.loads(path.read_text(encoding="utf-8")), key) if path.is_file() else None
            recovered.append(
                {
                    "key": key,
                    "truth": round(value, 4),
                    "got": got,
                    "ok": isinstance(got, int | float) and abs(got - value) <= tolerance,
                }
            )
        row["truth"] = recovered
        tasks.append(row)
    return {
        "task_rows": tasks, "families_right": sum(t["family_right"] for t in tasks if t["expected"]),
        "families_expected": sum(bool(t["expected"]) for t in tasks),
        "answered_or_declined": sum(t["answered"] or t["declined_with_reason"] for t in tasks),
        "untraced_numbers": sum(len(t["untraced"]) for t in tasks),
        "truth_recovered": f"{sum(r['ok'] for t in tasks for r in t['truth'])}/{sum(len(t['truth']) for t in tasks)}",
    }  # fmt: skip


def _problem_script(path: Path, truth: Truth) -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from apps.modeling.team_script import team_script

    script = team_script()
    script["agents"] = [
        {
            "when": f"为第 {n} 问选一个模型",
            "steps": [{"tool_calls": [{"name": "final_result", "args": {"why": "it fits", "choice": c}}]}],
        }
        for n, c in truth.choices.items()
    ] + script["agents"]
    path.write_text(json.dumps(script, ensure_ascii=False), encoding="utf-8")
    return path


def run_one(name: str, *, model: str, script: Path | None, timeout: float, keep: Path | None) -> dict[str, Any]:
    make, prompt = PROBLEMS[name]
    base = Path(tempfile.mkdtemp(prefix=f"eval-modeling-{name}-", dir=keep))
    folder = base / "problem" / name
    folder.mkdir(parents=True)
    truth = make(folder, np.random.default_rng(sum(map(ord, name))))  # a seed of its own name: the same data every run
    home = base / "home"
    home.mkdir()
    models = Settings.from_env().models_dir  # where the CLI itself looks (CONSULTA_HOME, else the user's data dir)
    if models.is_dir():
        (home / "models").symlink_to(models)  # the embedded model is not downloaded again
    if model == "scripted":  # the test double: the team's script, with the right family chosen for each task
        script = _problem_script(base / "team.json", truth)
    spec = f"scripted:{script}" if model == "scripted" else model
    command = [
        sys.executable,
        "-m",
        "consulta",
        "chat",
        "modeling",
        "--model",
        spec,
        "--problem",
        str(folder),
        "-p",
        prompt,
        "--quiet",
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, env={**os.environ, "CONSULTA_HOME": str(home)}, capture_output=True, text=True, timeout=timeout
        )
        status, tail = done.returncode, (done.stdout + done.stderr)[-600:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", ""
    seconds = round(time.perf_counter() - started, 1)
    workspaces = list((home / "apps" / "modeling" / "runs").glob("*/*"))  # runs/<problem>/<run>/
    result: dict[str, Any] = {"problem": name, "exit_status": status, "wall_time_s": seconds, "output_tail": tail}
    if workspaces:
        ws = workspaces[0]
        memo = (
            json.loads((ws / "state" / "director.json").read_text(encoding="utf-8"))
            if (ws / "state" / "director.json").is_file()
            else {}
        )
        consults = list(memo.get("consults", {}).values())
        result |= {
            "workspace": str(ws), "answers": len(memo.get("answers", {})), "consultations": sum(c["status"] == "done" for c in consults),
            "refused": sum(c["status"] == "refused" for c in consults), **_judge(ws, truth),
        }  # fmt: skip
        result["reworks"] = sum(v == "REJECTED" for v in result["verdicts"].values())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model",
        default="local",
        help="local (the embedded model), openai:NAME, or scripted (the test double's team script)",
    )
    parser.add_argument("--only", nargs="*", choices=sorted(PROBLEMS), help="run only these problems")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds per problem")
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="make the problems and workspaces under this folder (default: a temp folder)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="results file (default: bench/results/modeling_eval[.scripted].json)"
    )
    parser.add_argument(
        "--rejudge",
        type=Path,
        default=None,
        help="judge the kept workspaces of this results file again (the truth remade from each problem's seed)",
    )
    parser.add_argument(
        "--menus",
        action="store_true",
        help="no team run: per task, the families code offers the modeler (its menu) against the truth's",
    )
    parser.add_argument(
        "--aggregate",
        action="store_true",
        help="no run: issue 24's measures over the committed embedded-model result files, the latest run per problem",
    )
    args = parser.parse_args()
    if args.aggregate:
        aggregate(ROOT / "bench" / "results", args.out)
        return
    if args.menus:
        _menus(args.only or list(PROBLEMS), args.out)
        return
    if args.rejudge:
        earlier = json.loads(args.rejudge.read_text(encoding="utf-8"))
        runs = [_rejudged(r) for r in earlier["runs"]]
        _write(args.out or args.rejudge, earlier["model"], runs, source=earlier.get("source"))
        return
    script = None
    if args.model == "scripted":
        sys.path.insert(0, str(ROOT / "tests"))
        from apps.modeling.team_script import write_script

        script = write_script(Path(tempfile.mkdtemp()) / "team.json")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in args.only or list(PROBLEMS):
        print(f"… {name}", flush=True)
        result = run_one(name, model=args.model, script=script, timeout=args.timeout, keep=args.keep)
        runs.append(result)
        brief = {
            k: result.get(k)
            for k in (
                "exit_status",
                "wall_time_s",
                "kind_chosen",
                "pdf",
                "reworks",
                "consultations",
                "effects_in_interval",
                "top_right",
                "case_predicted",
                "case_error",
                "tasks_found",
                "families_right",
                "answered_or_declined",
                "untraced_numbers",
                "truth_recovered",
            )
        }
        print(f"  {json.dumps(brief, ensure_ascii=False)}", flush=True)
    out = args.out or ROOT / "bench" / "results" / (
        "modeling_eval.scripted.json" if args.model == "scripted" else "modeling_eval.json"
    )
    _write(out, args.model, runs)


def _menus(names: list[str], out: Path | None) -> None:
    """Per task of each problem with a truth of families: the menu code offers (`_task_models._menu_names`, the
    likeliest first), whether its first family fits the task, and whether a family that fits is offered at all.
    No model: what the menu gives a model that takes its first family."""
    from consulta.apps.modeling._task_models import _menu_names
    from consulta.apps.modeling.families import ProblemData

    rows = []
    for name in names:
        make, _ = PROBLEMS[name]
        folder = Path(tempfile.mkdtemp(prefix=f"eval-modeling-menus-{name}-"))
        truth = make(folder, np.random.default_rng(sum(map(ord, name))))
        if not truth.families:
            continue
        statement = "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("problem.md")))
        data = ProblemData.load(folder, statement)
        for task in statement_tasks(statement):
            earlier = frozenset(f[0] for n, f in truth.families.items() if n < task.number and f)  # chosen before
            menu = _menu_names(task, data, earlier)
            fits = truth.families.get(task.number, ())
            rows.append({"problem": name, "task": task.number, "asks": task.asks, "menu": list(menu),
                         "expected": list(fits), "first_fits": menu[0] in fits, "offered": any(m in fits for m in menu)})  # fmt: skip
            print(
                f"{'ok ' if rows[-1]['first_fits'] else 'BAD'} {name} task {task.number} ({task.asks}): {', '.join(menu)}"
            )
    summary = {"tasks": len(rows), "first_fits": sum(r["first_fits"] for r in rows), "offered": sum(r["offered"] for r in rows),
               "median_menu": float(np.median([len(r["menu"]) for r in rows])) if rows else None}  # fmt: skip
    print(json.dumps(summary))
    if out:
        out.write_text(json.dumps({"benchmark": "modeling_eval.menus", "source": source_version(), "summary": summary,
                                   "rows": rows}, ensure_ascii=False, indent=1), encoding="utf-8")  # fmt: skip
        print(f"written {out}")


def _committed_at(path: Path) -> int | None:
    """When `path` was last committed (seconds since the epoch); None when git never saw it."""
    done = subprocess.run(
        ["git", "log", "-1", "--format=%ct", "--", path.name], cwd=path.parent, capture_output=True, text=True
    )
    return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def latest_runs(results: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file, run) of the latest committed embedded-model run of each problem: over `modeling_eval*.json` whose model is
    `local`, the file committed last wins (the first run in it on a tie of files); files git never saw are not read."""
    best: dict[str, tuple[int, str, dict[str, Any]]] = {}
    for path in sorted(results.glob("modeling_eval*.json")):
        when = _committed_at(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if when is None or not str(data.get("model", "")).startswith("local") or "runs" not in data:
            continue
        for run in data["runs"]:
            name = run.get("problem")
            if name and (name not in best or when > best[name][0]):
                best[name] = (when, path.name, run)
    return [(file, run) for _, file, run in (best[n] for n in sorted(best))]


def aggregate(results: Path, out: Path | None) -> dict[str, Any]:
    """Issue 24's measures over the latest committed embedded-model run of each problem (`latest_runs`): tasks found,
    the family chosen fits, each task answered or declined with a reason, numbers in the paper no result file holds,
    the median wall time; with the files read and the problems with no committed run."""
    chosen = latest_runs(results)
    rows = [
        {
            "problem": run["problem"], "file": file, "exit_status": run.get("exit_status"), "wall_time_s": run.get("wall_time_s"),
            "pdf": bool(run.get("pdf")), "tasks_expected": run.get("tasks_expected", 0),
            "tasks_found": min(run.get("tasks_found", 0), run.get("tasks_expected", 0)),
            "families_right": run.get("families_right", 0), "families_expected": run.get("families_expected", 0),
            "answered_or_declined": run.get("answered_or_declined", 0), "untraced_numbers": run.get("untraced_numbers", 0),
            "truth_recovered": run.get("truth_recovered"),
        }
        for file, run in chosen
    ]  # fmt: skip

    def share(part: str, whole: str) -> float | None:
        total = sum(r[whole] for r in rows)
        return round(100 * sum(r[part] for r in rows) / total, 1) if total else None

    times = [r["wall_time_s"] for r in rows if isinstance(r["wall_time_s"], int | float)]
    with_tasks = [r for r in rows if r["tasks_expected"]]
    summary = {
        "problems": len(rows), "problems_with_tasks": len(with_tasks), "pdf": sum(r["pdf"] for r in rows),
        "tasks_found_pct": share("tasks_found", "tasks_expected"), "family_fits_pct": share("families_right", "families_expected"),
        "tasks_answered_or_declined": f"{sum(r['answered_or_declined'] for r in with_tasks)}/{sum(r['tasks_expected'] for r in with_tasks)}",
        "untraced_numbers": sum(r["untraced_numbers"] for r in rows),
        "median_wall_time_s": float(np.median(times)) if times else None,
        "not_run": sorted(set(PROBLEMS) - {r["problem"] for r in rows}),
    }  # fmt: skip
    for r in rows:
        print(
            f"{r['problem']:24} {r['file']:48} {str(r['exit_status']):8} {r['wall_time_s']!s:>7} s  tasks {r['tasks_found']}/"
            f"{r['tasks_expected']}  families {r['families_right']}/{r['families_expected']}  answered {r['answered_or_declined']}"
            f"  untraced {r['untraced_numbers']}"
        )
    print(json.dumps(summary, ensure_ascii=False))
    report = {"benchmark": "modeling_eval.aggregate", "source": source_version(), "summary": summary, "rows": rows,
              "files": sorted({r["file"] for r in rows})}  # fmt: skip
    if out:
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"written {out}")
    return report


def _rejudged(run: dict[str, Any]) -> dict[str, Any]:
    """`run` judged again from its kept workspace (the same truth: the problem's data come from its name's seed)."""
    if "workspace" not in run:
        return run
    make, _ = PROBLEMS[run["problem"]]
    truth = make(Path(tempfile.mkdtemp()), np.random.default_rng(sum(map(ord, run["problem"]))))
    judged = {**run, **_judge(Path(run["workspace"]), truth)}
    judged["reworks"] = sum(v == "REJECTED" for v in judged["verdicts"].values())
    return judged


def _write(out: Path, model: str, runs: list[dict[str, Any]], *, source: str | None = None) -> None:
    """The results file; `source` is the commit the runs were made with (a rejudged file keeps its runs' commit and
    says which code judged it again)."""
    summary = {
        "problems": len(runs), "exit_0": sum(r["exit_status"] == 0 for r in runs), "pdf": sum(bool(r.get("pdf")) for r in runs),
        "kind_right": sum(bool(r.get("kind_right")) for r in runs),
        "all_gates_passed": sum(bool(r.get("verdicts")) and list(r["verdicts"].values()).count("REJECTED") == 0 and len(r["verdicts"]) == 4 for r in runs),
        "cases_asked": sum(bool(r.get("case_asked")) for r in runs), "cases_predicted_when_asked": sum(bool(r.get("case_predicted")) and bool(r.get("case_asked")) for r in runs),
        "cases_predicted_when_not_asked": sum(bool(r.get("case_predicted")) and not r.get("case_asked") for r in runs if r.get("kind_chosen") == "regression"),
        "median_wall_time_s": float(np.median([r["wall_time_s"] for r in runs])) if runs else None,
        "tasks_expected": sum(r.get("tasks_expected", 0) for r in runs), "tasks_found": sum(min(r.get("tasks_found", 0), r.get("tasks_expected", 0)) for r in runs),
        "families_right": sum(r.get("families_right", 0) for r in runs), "families_expected": sum(r.get("families_expected", 0) for r in runs),
        "tasks_answered_or_declined": sum(r.get("answered_or_declined", 0) for r in runs),
        "tasks_answered": sum(sum(t["answered"] for t in r.get("task_rows", [])) for r in runs),
        "untraced_numbers": sum(r.get("untraced_numbers", 0) for r in runs),
        "truth_recovered": f"{sum(int(str(r.get('truth_recovered', '0/0')).split('/')[0]) for r in runs)}/{sum(int(str(r.get('truth_recovered', '0/0')).split('/')[1]) for r in runs)}",
        "paper_rule_faults": {rule: sum(len(r.get("paper_rules", {}).get(rule, [])) for r in runs) for rule in PAPER_RULES},
    }  # fmt: skip
    out.write_text(
        json.dumps(
            {
                "benchmark": "modeling_eval",
                "source": source or source_version(),
                **({"judged_with": source_version()} if source else {}),
                "model": model,
                "summary": summary,
                "runs": runs,
            },
            ensure_ascii=False,
            indent=1,
        ),
        encoding="utf-8",
    )
    print(json.dumps(summary, ensure_ascii=False))
    print(f"written {out}")


if __name__ == "__main__":
    main()
