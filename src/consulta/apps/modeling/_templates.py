"""The team's code when the model's does not do: templates chosen in code from the data's shape, filled with the
agents' structured choices (checked against the data first).

Two kinds of model: `forecast` (a table over time with a numeric target: a linear model of trend, season and
covariates, fitted with a holdout of the last periods, then refitted and projected with a 95 % interval) and
`epidemic` (daily case counts: an SIR model fitted to the reported new cases by least squares). Each is four
scripts, each run in the sandbox by its phase: `code/clean_data.py` (problem/*.csv → data/*.csv: duplicates
dropped, sorted, gaps in numbers interpolated), `code/model.py` (the model as functions; run alone, it checks itself
on the data), `code/train.py` (results/*.csv and figures/fit.png) and `code/figures.py` (the result figures).
Every number the scripts write is rounded to 2 decimals, so the paper can quote the files exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

__all__ = ["DataShape", "ModelKind", "Plan", "describe_data", "plan_for", "script"]

ModelKind = Literal["forecast", "epidemic"]
_TIME = re.compile(r"^(month|date|day|year|week|period|time|t|日期|月份|年份)$", re.I)
_CASES = re.compile(r"(new_cases|new_reported|daily_cases|cases_new|新增)", re.I)
_TARGET = re.compile(r"(total|demand|load|consumption|sales|cases|用电|需求|总)", re.I)


class DataShape(BaseModel):
    """What code sees in the raw data: each table's columns, rows and which look like time, cases and a target."""

    tables: dict[str, list[str]]
    rows: dict[str, int]
    main_table: str
    time: str | None
    numeric: list[str]
    cases: str | None
    target: str | None


def describe_data(problem_dir: Path) -> DataShape:
    """The shape of the problem's CSV files; the main table is the one with the most rows."""
    tables, rows, numerics, times = {}, {}, {}, {}
    for path in sorted(Path(problem_dir).glob("*.csv")):
        frame = pd.read_csv(path)
        tables[path.name] = [str(c) for c in frame.columns]
        rows[path.name] = len(frame)
        numerics[path.name] = [str(c) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
        times[path.name] = next((str(c) for c in frame.columns if _TIME.match(str(c))), None)
    if not tables:
        raise ValueError("The problem has no CSV data.")
    main = max(rows, key=lambda name: rows[name])
    numeric = [c for c in numerics[main] if c != times[main]]
    cases = next((c for c in numeric if _CASES.search(c)), None)
    target = cases or next((c for c in numeric if _TARGET.search(c) and not c.endswith("_c")), numeric[-1] if numeric else None)
    return DataShape(tables=tables, rows=rows, main_table=main, time=times[main], numeric=numeric, cases=cases, target=target)


class Plan(BaseModel):
    """The template's parameters: which model, which table and columns, and the agents' choices within them."""

    kind: ModelKind
    table: str
    time: str | None
    target: str
    covariates: list[str] = Field(default_factory=list)
    holdout: int = 12
    season: int = 0
    """Periods of a season (12 for monthly data); 0: none."""
    population: float = 0.0
    reporting_rate: float = 1.0
    scenario_column: str | None = None
    scenario_factor: float = 1.0
    target_label: str = ""


def plan_for(shape: DataShape, choices: dict[str, Any], statement: str) -> tuple[Plan, list[str]]:
    """The plan for this data, taking each of the agents' `choices` (target, covariates, holdout, population,
    reporting_rate, scenario_column, scenario_factor) that fits the data; the notes say which choice was set aside
    and why (they go on record)."""
    notes: list[str] = []
    numeric = shape.numeric
    kind: ModelKind = "epidemic" if shape.cases else "forecast"
    target = str(choices.get("target") or "")
    if target not in numeric:
        if target:
            notes.append(f"target {target!r} is not a numeric column of {shape.main_table}; used {shape.target!r}")
        target = shape.target or numeric[0]
    if kind == "epidemic" and target != shape.cases:
        notes.append(f"an epidemic model is fitted to the new cases column {shape.cases!r}, not {target!r}")
        target = shape.cases or target
    unit = target.lower().replace("total", "").strip("_")
    parts = [c for c in numeric if c != target and "total" in target.lower() and unit and c.lower().endswith(unit)]  # the total's parts
    wanted = [str(c) for c in choices.get("covariates") or []]
    covariates = [c for c in wanted if c in numeric and c != target and c not in parts]
    if set(wanted) - set(covariates):
        notes.append(f"covariates {sorted(set(wanted) - set(covariates))} set aside (not numeric columns, the target or its parts)")
    if not covariates and kind == "forecast":
        covariates = [c for c in numeric if c != target and c not in parts and re.search(r"(degree|temp|气温|度日)", c, re.I)][:2]
    rows = shape.rows[shape.main_table]
    monthly = shape.time is not None and re.match(r"^month$|月", shape.time, re.I) is not None
    holdout = int(choices.get("holdout") or (12 if monthly else max(1, rows // 5)))
    if not 1 <= holdout <= rows // 3:
        notes.append(f"holdout {holdout} is not between 1 and a third of the {rows} rows; used {min(12, max(1, rows // 5))}")
        holdout = min(12, max(1, rows // 5))
    population = float(choices.get("population") or 0) or _largest_number(statement)
    rate = float(choices.get("reporting_rate") or 0)
    if not 0 < rate <= 1:
        rate = _reporting_rate(statement)
    scenario = choices.get("scenario_column")
    factor = float(choices.get("scenario_factor") or 1.0)
    if scenario not in covariates or not 0.2 <= factor <= 5:
        if scenario:
            notes.append(f"scenario on {scenario!r} ×{factor} set aside: the column must be a covariate and the factor between 0.2 and 5")
        scenario, factor = None, 1.0
    plan = Plan(
        kind=kind, table=shape.main_table, time=shape.time, target=target, covariates=covariates, holdout=holdout,
        season=12 if monthly else 0, population=population, reporting_rate=rate, scenario_column=scenario, scenario_factor=factor,
    )
    return plan, notes


def _numbers(text: str) -> list[float]:
    return [float(m.replace(",", "")) for m in re.findall(r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?", text)]


def _largest_number(text: str) -> float:
    return max(_numbers(text), default=0.0)


def _reporting_rate(text: str) -> float:
    match = re.search(r"(\d+(?:\.\d+)?)\s*%\s*(?:of infections|的感染)", text)
    return float(match.group(1)) / 100 if match else 1.0


# ---- the scripts --------------------------------------------------------------------------------------------------

_HEAD = '''"""{doc}"""
import json

import numpy as np
import pandas as pd

PLAN = json.loads({plan!r})
'''

_CLEAN = '''
import glob
import os

for path in sorted(glob.glob("problem/*.csv")):
    frame = pd.read_csv(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    before = len(frame)
    frame = frame.drop_duplicates()
    time = next((c for c in frame.columns if c.lower() in ("month", "date", "day", "year", "week", "period")), None)
    if time is not None:
        frame = frame.drop_duplicates(subset=[time], keep="first").sort_values(time).reset_index(drop=True)
    numeric = frame.select_dtypes("number").columns
    frame[numeric] = frame[numeric].interpolate(limit_direction="both")
    frame.to_csv(os.path.join("data", os.path.basename(path)), index=False)
    print(f"{os.path.basename(path)}: {before} rows -> {len(frame)}")
'''

_FORECAST_MODEL = '''

def design(frame, start, covariates, season):
    """Columns: intercept, trend, season dummies (all but the first), covariates."""
    n = len(frame)
    t = np.arange(start, start + n, dtype=float)
    columns = [np.ones(n), t]
    if season:
        for s in range(1, season):
            columns.append(((t.astype(int) % season) == s).astype(float))
    for c in covariates:
        columns.append(frame[c].to_numpy(dtype=float))
    return np.column_stack(columns)


def terms(covariates, season):
    return ["intercept", "trend"] + [f"season_{s + 1}" for s in range(1, season)] + list(covariates)


def fit(frame):
    X = design(frame, 0, PLAN["covariates"], PLAN["season"])
    y = frame[PLAN["target"]].to_numpy(dtype=float)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residuals = y - X @ beta
    return beta, float(np.std(residuals, ddof=X.shape[1]) if len(y) > X.shape[1] else 0.0)


def predict(beta, frame, start):
    return design(frame, start, PLAN["covariates"], PLAN["season"]) @ beta


if __name__ == "__main__":
    data = pd.read_csv("data/" + PLAN["table"])
    beta, sigma = fit(data)
    print("fitted", len(beta), "coefficients; residual sd", round(sigma, 2))
'''

_EPIDEMIC_MODEL = '''
from scipy.optimize import least_squares


def simulate(beta, gamma, i0, days, population):
    """Daily new infections of an SIR epidemic (one step a day)."""
    s, i = population - i0, float(i0)
    new = []
    for _ in range(days):
        infected = beta * s * i / population
        recovered = gamma * i
        s, i = s - infected, i + infected - recovered
        new.append(infected)
    return np.array(new)


def fit(frame):
    cases = frame[PLAN["target"]].to_numpy(dtype=float)
    rate, population = PLAN["reporting_rate"], PLAN["population"]

    def residuals(x):
        return rate * simulate(x[0], x[1], x[2], len(cases), population) - cases

    start = [0.5, 0.25, max(1.0, cases[0] / rate)]
    found = least_squares(residuals, start, bounds=([0.01, 0.01, 0.1], [3.0, 1.0, population / 100]))
    return found.x, found


if __name__ == "__main__":
    data = pd.read_csv("data/" + PLAN["table"])
    (beta, gamma, i0), _ = fit(data)
    print("beta", round(beta, 3), "gamma", round(gamma, 3))
'''

_FORECAST_TRAIN = '''
import matplotlib.pyplot as plt

from model import fit, predict, terms

data = pd.read_csv("data/" + PLAN["table"])
target, h = PLAN["target"], PLAN["holdout"]
train, test = data.iloc[:-h], data.iloc[-h:]
beta, sigma = fit(train)
fitted = predict(beta, test, len(train))
actual = test[target].to_numpy(dtype=float)
mape = float(np.mean(np.abs((actual - fitted) / actual)) * 100)
rmse = float(np.sqrt(np.mean((actual - fitted) ** 2)))
label = PLAN["time"] or "row"
periods = test[PLAN["time"]].astype(str).tolist() if PLAN["time"] else [str(i) for i in range(len(train), len(data))]
pd.DataFrame({label: periods, "actual": actual.round(2), "fitted": fitted.round(2)}).to_csv("results/backtest.csv", index=False)

beta_all, sigma_all = fit(data)
in_sample = predict(beta_all, data, 0)
y = data[target].to_numpy(dtype=float)
r2 = 1 - float(np.sum((y - in_sample) ** 2) / np.sum((y - y.mean()) ** 2))
pd.DataFrame({"term": terms(PLAN["covariates"], PLAN["season"]), "estimate": np.round(beta_all, 4)}).to_csv("results/coefficients.csv", index=False)

season = PLAN["season"] or 1
future = pd.DataFrame({c: [data[c].iloc[i::season].mean() if season > 1 else data[c].tail(h).mean() for i in [(len(data) + k) % season for k in range(h)]] for c in PLAN["covariates"]})
if PLAN["time"] and PLAN["season"] == 12:
    last = pd.Period(str(data[PLAN["time"]].iloc[-1]), freq="M")
    labels = [str(last + k + 1) for k in range(h)]
else:
    labels = [str(len(data) + k) for k in range(h)]
forecast = predict(beta_all, future, len(data))
pd.DataFrame({label: labels, "forecast": forecast.round(2), "lower_95": (forecast - 1.96 * sigma_all).round(2),
              "upper_95": (forecast + 1.96 * sigma_all).round(2)}).to_csv("results/forecast.csv", index=False)
peak = int(np.argmax(forecast))
metrics = [("mape_holdout_pct", mape), ("rmse_holdout", rmse), ("r2_in_sample", r2), ("residual_sd", sigma_all),
           ("forecast_total", float(forecast.sum())), ("forecast_peak", float(forecast[peak]))]
if PLAN["scenario_column"]:
    shifted = future.copy()
    shifted[PLAN["scenario_column"]] = shifted[PLAN["scenario_column"]] * PLAN["scenario_factor"]
    changed = predict(beta_all, shifted, len(data))
    metrics += [("scenario_total", float(changed.sum())), ("scenario_change", float(changed.sum() - forecast.sum())),
                ("scenario_change_pct", float((changed.sum() / forecast.sum() - 1) * 100))]
pd.DataFrame({"metric": [m for m, _ in metrics], "value": [round(v, 2) for _, v in metrics]}).to_csv("results/metrics.csv", index=False)
pd.DataFrame({"peak_period": [labels[peak]], "peak_forecast": [round(float(forecast[peak]), 2)]}).to_csv("results/peak.csv", index=False)

fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(periods, actual, marker="o", label="actual")
ax.plot(periods, fitted, marker="x", label="model")
ax.set_title(PLAN["target_label"] or target)
ax.tick_params(axis="x", rotation=60)
ax.legend()
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("holdout MAPE", round(mape, 2))
'''

_EPIDEMIC_TRAIN = '''
import matplotlib.pyplot as plt

from model import fit, simulate

data = pd.read_csv("data/" + PLAN["table"])
cases = data[PLAN["target"]].to_numpy(dtype=float)
(beta, gamma, i0), found = fit(data)
fitted = PLAN["reporting_rate"] * simulate(beta, gamma, i0, len(cases), PLAN["population"])
day = data[PLAN["time"]].tolist() if PLAN["time"] else list(range(1, len(cases) + 1))
pd.DataFrame({"day": day, "observed": cases.round(2), "fitted": fitted.round(2)}).to_csv("results/fit.csv", index=False)
horizon = 240
path = simulate(beta, gamma, i0, horizon, PLAN["population"])
reported = PLAN["reporting_rate"] * path
peak = int(np.argmax(reported))
rmse = float(np.sqrt(np.mean((fitted - cases) ** 2)))
jac = found.jac
try:
    cov = np.linalg.inv(jac.T @ jac) * float(np.sum(found.fun ** 2)) / max(1, len(cases) - 3)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
except np.linalg.LinAlgError:
    se = np.array([np.nan, np.nan, np.nan])
rows = [("beta", beta), ("gamma", gamma), ("R0", beta / gamma), ("beta_se", se[0]), ("gamma_se", se[1]),
        ("peak_day", peak + 1), ("peak_new_reported", reported[peak]), ("final_share_infected", path.sum() / PLAN["population"]),
        ("rmse", rmse)]
pd.DataFrame({"parameter": [r for r, _ in rows], "value": [round(float(v), 4) for _, v in rows]}).fillna(0).to_csv("results/parameters.csv", index=False)
pd.DataFrame({"day": list(range(1, horizon + 1)), "new_reported": reported.round(2)}).to_csv("results/projection.csv", index=False)

fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(day, cases, "o", markersize=3, label="reported")
ax.plot(day, fitted, label="SIR fit")
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("R0", round(beta / gamma, 2))
'''

_FORECAST_FIGURES = '''
import matplotlib.pyplot as plt

data = pd.read_csv("data/" + PLAN["table"])
forecast = pd.read_csv("results/forecast.csv")
label = forecast.columns[0]
fig, ax = plt.subplots(figsize=(9, 4))
history = data.tail(36)
ax.plot(history[PLAN["time"]].astype(str) if PLAN["time"] else history.index.astype(str), history[PLAN["target"]], label="history")
ax.plot(forecast[label].astype(str), forecast["forecast"], label="forecast")
ax.fill_between(forecast[label].astype(str), forecast["lower_95"], forecast["upper_95"], alpha=0.2, label="95%")
ax.set_xticks(ax.get_xticks()[::6])
ax.tick_params(axis="x", rotation=60)
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/forecast.png", dpi=120)
'''

_EPIDEMIC_FIGURES = '''
import matplotlib.pyplot as plt

projection = pd.read_csv("results/projection.csv")
fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(projection["day"], projection["new_reported"], label="projected new reported cases")
ax.set_xlabel("day")
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/forecast.png", dpi=120)
'''

_BODIES: dict[tuple[str, str], str] = {
    ("clean_data", "forecast"): _CLEAN, ("clean_data", "epidemic"): _CLEAN,
    ("model", "forecast"): _FORECAST_MODEL, ("model", "epidemic"): _EPIDEMIC_MODEL,
    ("train", "forecast"): _FORECAST_TRAIN, ("train", "epidemic"): _EPIDEMIC_TRAIN,
    ("figures", "forecast"): _FORECAST_FIGURES, ("figures", "epidemic"): _EPIDEMIC_FIGURES,
}  # fmt: skip
_DOCS = {
    "clean_data": "The data engineer's cleaning: problem/*.csv -> data/*.csv (duplicates dropped, sorted, gaps interpolated).",
    "model": "The model as functions (the code translator's); run alone it fits the data once as a check.",
    "train": "The model trainer's run: results/*.csv and figures/fit.png.",
    "figures": "The visualizer's figures from the result files.",
}


def script(name: Literal["clean_data", "model", "train", "figures"], plan: Plan) -> str:
    """The source of `code/<name>.py` for `plan` (a template: see the module's doc)."""
    return _HEAD.format(doc=_DOCS[name], plan=json.dumps(plan.model_dump(), ensure_ascii=False)) + _BODIES[name, plan.kind]
