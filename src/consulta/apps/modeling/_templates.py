"""The team's code when the model's does not do: templates chosen in code from the data's shape, filled with the
agents' structured choices (checked against the data first).

Three kinds of model, chosen from the data's shape (`kind_of`):
- `epidemic` (a column of new case counts): an SIR model fitted to the reported new cases by least squares;
- `forecast` (a time column whose values are (nearly) unique: a series): a linear model of trend, season and
  covariates, fitted with a holdout of the last periods, then refitted and projected with a 95 % interval;
- `regression` (anything else: rows are units, not times): a linear model of the target on the covariates (numeric,
  and categorical ones as indicator columns), with standard errors, a seeded random holdout of rows, each
  covariate's unique share of the explained variance (its importance), and the prediction, with its 95 % interval,
  for a case the problem gives (the modeler's values, each checked against the statement and the data).
Each is four
scripts, each run in the sandbox by its phase: `code/clean_data.py` (problem/*.csv → data/*.csv: duplicates
dropped, sorted, gaps in numbers interpolated), `code/model.py` (the model as functions; run alone, it checks itself
on the data), `code/train.py` (results/*.csv and figures/fit.png) and `code/figures.py` (the result figures).
Every number the scripts write is rounded to 2 decimals, so the paper can quote the files exactly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

__all__ = ["KINDS", "DataShape", "KindSpec", "ModelKind", "Plan", "describe_data", "plan_for", "script"]

ModelKind = Literal["forecast", "epidemic", "regression"]
_TIME = re.compile(r"^(month|date|day|year|week|period|time|t|日期|月份|年份)$", re.I)
_CASES = re.compile(r"(new_cases|new_reported|daily_cases|cases_new|新增)", re.I)
_TARGET = re.compile(r"(total|demand|load|consumption|sales|cases|price|用电|需求|总|价格)", re.I)
_ID = re.compile(r"(^id$|_id$|^id_|编号|序号|^no\.?$|^index$)", re.I)
_MAX_LEVELS = 12
"""A text column with at most this many values (and fewer than half the rows) is a categorical covariate."""
SERIES_SHARE = 0.9
"""A time column is a series' when at least this share of the rows have a value of their own (else rows are units)."""


class DataShape(BaseModel):
    """What code sees in the raw data: each table's columns and rows; of the main table, which columns look like
    time, cases, a target, an identifier or a category, and each numeric column's range."""

    tables: dict[str, list[str]]
    rows: dict[str, int]
    main_table: str
    time: str | None
    numeric: list[str]
    cases: str | None
    target: str | None
    series: bool = True
    """The time column gives (nearly) every row a time of its own: the rows are a series."""
    ids: list[str] = Field(default_factory=list)
    """Numeric columns that identify rows (by name, or unique consecutive integers): never covariates."""
    categorical: dict[str, list[str]] = Field(default_factory=dict)
    """Text columns with few values, each with its values (sorted; the first is the baseline)."""
    ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Each numeric column's smallest and largest value."""

    @property
    def kind(self) -> ModelKind:
        """The model this data calls for: `epidemic` (new cases), `forecast` (a series) or `regression` (units)."""
        if self.cases:
            return "epidemic"
        return "forecast" if self.time is not None and self.series else "regression"


def _is_id(name: str, values: pd.Series) -> bool:
    if _ID.search(name):
        return True
    clean = values.dropna()
    if len(clean) < 10 or not pd.api.types.is_integer_dtype(clean):
        return False
    ordered = clean.sort_values().to_numpy()
    return bool(clean.is_unique and (ordered[1:] - ordered[:-1] == 1).all())


def describe_data(problem_dir: Path) -> DataShape:
    """The shape of the problem's CSV files; the main table is the one with the most rows."""
    tables, rows, frames = {}, {}, {}
    for path in sorted(Path(problem_dir).glob("*.csv")):
        frame = frames[path.name] = pd.read_csv(path)
        tables[path.name] = [str(c) for c in frame.columns]
        rows[path.name] = len(frame)
    if not tables:
        raise ValueError("The problem has no CSV data.")
    main = max(rows, key=lambda name: rows[name])
    frame = frames[main]
    time = next((str(c) for c in frame.columns if _TIME.match(str(c).strip())), None)
    series = time is not None and frame[time].nunique() >= SERIES_SHARE * max(1, len(frame))
    columns = {str(c): frame[c] for c in frame.columns}
    ids = [c for c, v in columns.items() if c != time and pd.api.types.is_numeric_dtype(v) and _is_id(c, v)]
    numeric = [c for c, v in columns.items() if pd.api.types.is_numeric_dtype(v) and c != time and c not in ids]
    categorical = {
        c: sorted(str(x) for x in v.dropna().unique()) for c, v in columns.items()
        if c != time and not pd.api.types.is_numeric_dtype(v) and not _ID.search(c) and 2 <= v.nunique() <= min(_MAX_LEVELS, len(frame) // 2)
    }  # fmt: skip
    ranges = {c: (float(columns[c].min()), float(columns[c].max())) for c in numeric if columns[c].notna().any()}
    cases = next((c for c in numeric if _CASES.search(c)), None)
    target = cases or next(
        (c for c in numeric if _TARGET.search(c) and not c.endswith("_c")), numeric[-1] if numeric else None
    )
    return DataShape(
        tables=tables, rows=rows, main_table=main, time=time, numeric=numeric, cases=cases, target=target, series=series,
        ids=ids, categorical=categorical, ranges=ranges,
    )  # fmt: skip


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
    scenario: dict[str, float] = Field(default_factory=dict)
    """(regression) The case to predict: covariate → value, as the problem gives it (the others at their median)."""
    levels: dict[str, list[str]] = Field(default_factory=dict)
    """(regression) Each categorical covariate's values, the first the baseline."""
    seed: int = 20240601
    """(regression) The seed of the random holdout (the same rows on every run)."""
    target_label: str = ""


def plan_for(shape: DataShape, choices: dict[str, Any], statement: str) -> tuple[Plan, list[str]]:
    """The plan for this data, taking each of the agents' `choices` (target, covariates, holdout, population,
    reporting_rate, scenario_column, scenario_factor, scenario) that fits the data; the notes say which choice was
    set aside and why (they go on record)."""
    notes: list[str] = []
    numeric, kind = shape.numeric, shape.kind
    if shape.time is not None and kind == "regression":
        notes.append(f"{shape.time!r} repeats across rows (not a series): a regression over the rows, not a forecast")
    target = str(choices.get("target") or "")
    if target not in numeric:
        if target:
            notes.append(f"target {target!r} is not a numeric column of {shape.main_table}; used {shape.target!r}")
        target = shape.target or numeric[0]
    if kind == "epidemic" and target != shape.cases:
        notes.append(f"an epidemic model is fitted to the new cases column {shape.cases!r}, not {target!r}")
        target = shape.cases or target
    unit = target.lower().replace("total", "").strip("_")
    parts = [
        c for c in numeric if c != target and "total" in target.lower() and unit and c.lower().endswith(unit)
    ]  # the total's parts
    usable = [c for c in numeric if c != target and c not in parts] + (
        [c for c in shape.categorical] if kind == "regression" else []
    )
    wanted = [str(c).strip() for c in choices.get("covariates") or []]
    covariates = list(dict.fromkeys(c for c in wanted if c in usable))
    if set(wanted) - set(covariates):
        notes.append(
            f"covariates {sorted(set(wanted) - set(covariates))} set aside (not usable columns: the target, its parts, identifiers or text)"
        )
    if not covariates and kind == "forecast":
        covariates = [c for c in usable if re.search(r"(degree|temp|气温|度日)", c, re.I)][:2]
    if not covariates and kind == "regression":
        covariates = usable
        notes.append(f"no usable covariate named: every usable column is one ({', '.join(usable)})")
    rows = shape.rows[shape.main_table]
    monthly = shape.time is not None and re.match(r"^month$|月", shape.time, re.I) is not None
    default = 12 if monthly and kind == "forecast" else max(1, rows // 5)
    holdout = int(choices.get("holdout") or default)
    if not 1 <= holdout <= rows // 3:
        notes.append(
            f"holdout {holdout} is not between 1 and a third of the {rows} rows; used {min(default, max(1, rows // 3))}"
        )
        holdout = min(default, max(1, rows // 3))
    population = float(choices.get("population") or 0) or _largest_number(statement)
    rate = float(choices.get("reporting_rate") or 0)
    if not 0 < rate <= 1:
        rate = _reporting_rate(statement)
    scenario = choices.get("scenario_column")
    factor = float(choices.get("scenario_factor") or 1.0)
    if kind != "forecast" or scenario not in covariates or not 0.2 <= factor <= 5:
        if scenario and kind == "forecast":
            notes.append(
                f"scenario on {scenario!r} ×{factor} set aside: the column must be a covariate and the factor between 0.2 and 5"
            )
        scenario, factor = None, 1.0
    case, more = (
        scenario_case(choices.get("scenario") or {}, shape, covariates, statement) if kind == "regression" else ({}, [])
    )
    plan = Plan(
        kind=kind, table=shape.main_table, time=shape.time if kind != "regression" else None, target=target, covariates=covariates,
        holdout=holdout, season=12 if monthly and kind == "forecast" else 0, population=population, reporting_rate=rate,
        scenario_column=scenario, scenario_factor=factor, scenario=case, levels={c: shape.categorical[c] for c in covariates if c in shape.categorical},
    )  # fmt: skip
    return plan, notes + more


def scenario_case(
    values: dict[str, Any], shape: DataShape, covariates: list[str], statement: str
) -> tuple[dict[str, float], list[str]]:
    """The case to predict, from the modeler's `values` (column → number), all or nothing: each value must be for a
    numeric covariate, be a number the problem's statement states (list numbering aside), and lie within the data's
    range widened by half its width on each side (wider is a misreading, or an extrapolation too far to trust). One
    value that fails sets the whole case aside: a case half read is not the case the problem gives."""
    stated = set(_numbers(re.sub(r"(?m)^\s*(?:#+\s*)?\d+[.)、]\s", " ", statement)))
    case: dict[str, float] = {}
    notes: list[str] = []
    for column, raw in values.items():
        try:
            value = float(raw)
        except (TypeError, ValueError):
            notes.append(f"scenario value {raw!r} for {column!r} is not a number")
            continue
        low, high = shape.ranges.get(column, (0.0, 0.0))
        width = high - low
        if column not in covariates or column in shape.categorical:
            notes.append(f"scenario value for {column!r}: not a numeric covariate of the model")
        elif value not in stated:
            notes.append(f"scenario value {column}={value:g}: the problem does not state this number")
        elif not low - width / 2 <= value <= high + width / 2:
            notes.append(f"scenario value {column}={value:g}: far outside the data ({low:g} to {high:g})")
        else:
            case[column] = value
            if not low <= value <= high:
                notes.append(
                    f"scenario value {column}={value:g} lies outside the data ({low:g} to {high:g}): the prediction extrapolates"
                )
            continue
    if len(case) < len(values):
        return {}, [
            *notes,
            "the case to predict was set aside: " + ("not every value fits" if case else "no value fits"),
        ]
    return case, notes


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

_CLEAN = """
import glob
import os

account = []
for path in sorted(glob.glob("problem/*.csv")):
    frame = pd.read_csv(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    before = len(frame)
    frame = frame.drop_duplicates()
    duplicates, no_target = before - len(frame), 0
    numeric = frame.select_dtypes("number").columns
    time = next((c for c in frame.columns if c.lower() in ("month", "date", "day", "year", "week", "period")), None)
    if PLAN["kind"] == "regression":  # rows are units: no order to follow; a row without the target says nothing
        if PLAN["target"] in frame.columns:
            no_target = int(frame[PLAN["target"]].isna().sum())
            frame = frame.dropna(subset=[PLAN["target"]]).reset_index(drop=True)
        method, missing = "median", int(frame[numeric].isna().sum().sum())
        frame[numeric] = frame[numeric].fillna(frame[numeric].median())
    else:
        if time is not None:
            kept = len(frame)
            frame = frame.drop_duplicates(subset=[time], keep="first").sort_values(time).reset_index(drop=True)
            duplicates += kept - len(frame)
        method, missing = "interpolation", int(frame[numeric].isna().sum().sum())
        frame[numeric] = frame[numeric].interpolate(limit_direction="both")
    frame.to_csv(os.path.join("data", os.path.basename(path)), index=False)
    account.append({"file": os.path.basename(path), "rows_raw": before, "duplicates_dropped": duplicates, "rows_without_target_dropped": no_target,
                    "missing_values_filled": missing, "fill_method": method, "rows_clean": len(frame)})
    print(f"{os.path.basename(path)}: {before} rows -> {len(frame)}")
pd.DataFrame(account).to_csv("results/cleaning.csv", index=False)
"""

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

_FORECAST_TRAIN = """
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
future = pd.DataFrame({c: [data[c].iloc[i::season].mean() if season > 1 else data[c].tail(h).mean() for i in [(len(data) + k) % season for k in range(h)]]
                       for c in PLAN["covariates"]}, index=range(h))  # h rows even with no covariate
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
"""

_EPIDEMIC_TRAIN = """
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
"""

_FORECAST_FIGURES = """
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
"""

_EPIDEMIC_FIGURES = """
import matplotlib.pyplot as plt

projection = pd.read_csv("results/projection.csv")
fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(projection["day"], projection["new_reported"], label="projected new reported cases")
ax.set_xlabel("day")
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/forecast.png", dpi=120)
"""

_REGRESSION_MODEL = '''

def design(frame):
    """Columns: intercept, each numeric covariate, and an indicator for each value of a categorical covariate but
    its first (the baseline)."""
    columns = [np.ones(len(frame))]
    for c in PLAN["covariates"]:
        if c in PLAN["levels"]:
            values = frame[c].astype(str)
            columns += [(values == level).to_numpy(dtype=float) for level in PLAN["levels"][c][1:]]
        else:
            columns.append(frame[c].to_numpy(dtype=float))
    return np.column_stack(columns)


def terms():
    names = ["intercept"]
    for c in PLAN["covariates"]:
        names += [f"{c}={level}" for level in PLAN["levels"][c][1:]] if c in PLAN["levels"] else [c]
    return names


def fit(frame):
    """Least squares: the coefficients and the residuals' standard deviation."""
    X = design(frame)
    y = frame[PLAN["target"]].to_numpy(dtype=float)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    residuals = y - X @ beta
    return beta, float(np.sqrt(residuals @ residuals / max(1, len(y) - X.shape[1])))


def predict(beta, frame):
    return design(frame) @ beta


if __name__ == "__main__":
    data = pd.read_csv("data/" + PLAN["table"])
    beta, sigma = fit(data)
    print("fitted", len(beta), "coefficients; residual sd", round(sigma, 2))
'''

_REGRESSION_TRAIN = """
import matplotlib.pyplot as plt
from scipy import stats

from model import design, fit, predict, terms

data = pd.read_csv("data/" + PLAN["table"])
target = PLAN["target"]
y = data[target].to_numpy(dtype=float)

# held-out rows: a seeded random sample, the same on every run
held = np.random.default_rng(PLAN["seed"]).permutation(len(data))[: PLAN["holdout"]]
test, train = data.iloc[np.sort(held)], data.drop(index=data.index[held])
beta_train, _ = fit(train)
predicted = predict(beta_train, test)
actual = test[target].to_numpy(dtype=float)
errors = actual - predicted
rmse, mae = float(np.sqrt(np.mean(errors ** 2))), float(np.mean(np.abs(errors)))
r2_holdout = 1 - float(np.sum(errors ** 2) / np.sum((actual - actual.mean()) ** 2))
pd.DataFrame({"row": np.sort(held) + 1, "actual": actual.round(2), "predicted": predicted.round(2), "error": errors.round(2)}).to_csv("results/holdout.csv", index=False)

# the model on all rows: estimates with standard errors, t, p and 95 % intervals
X = design(data)
beta, sigma = fit(data)
dof = max(1, len(y) - X.shape[1])
inverse = np.linalg.pinv(X.T @ X)
se = np.sqrt(np.clip(np.diag(inverse), 0, None)) * sigma
t_values = np.divide(beta, se, out=np.zeros_like(beta), where=se > 0)
p_values = 2 * stats.t.sf(np.abs(t_values), dof)
q = stats.t.ppf(0.975, dof)
pd.DataFrame({"term": terms(), "estimate": beta.round(4), "std_error": se.round(4), "t": t_values.round(2), "p_value": [float(f"{p:.3g}") for p in p_values],
              "lower_95": (beta - q * se).round(4), "upper_95": (beta + q * se).round(4)}).to_csv("results/coefficients.csv", index=False)
residuals = y - X @ beta
r2 = 1 - float(residuals @ residuals / np.sum((y - y.mean()) ** 2))

# importance: the share of the variance only this covariate explains (R² lost when it is left out)
rows = []
for c in PLAN["covariates"]:
    mask = [not (name == c or name.startswith(c + "=")) for name in terms()]
    reduced = X[:, mask]
    br, *_ = np.linalg.lstsq(reduced, y, rcond=None)
    rest = y - reduced @ br
    rows.append((c, r2 - (1 - float(rest @ rest / np.sum((y - y.mean()) ** 2)))))
rows.sort(key=lambda r: -r[1])
pd.DataFrame({"covariate": [r[0] for r in rows], "rank": list(range(1, len(rows) + 1)),
              "unique_r2": [round(r[1], 4) for r in rows]}).to_csv("results/importance.csv", index=False)

metrics = [("rows", len(data)), ("holdout_rows", len(test)), ("rmse_holdout", rmse), ("mae_holdout", mae), ("r2_holdout", r2_holdout),
           ("r2_in_sample", r2), ("residual_sd", sigma)]
if (actual > 0).all():
    metrics.insert(4, ("mape_holdout_pct", float(np.mean(np.abs(errors / actual)) * 100)))
pd.DataFrame({"metric": [m for m, _ in metrics], "value": [v if isinstance(v, int) else round(float(v), 2) for _, v in metrics]},
             dtype=object).to_csv("results/metrics.csv", index=False)

# the case the problem asks about: its given values, the other covariates at their median (or commonest value)
if PLAN["scenario"]:
    case, source = {}, {}
    for c in PLAN["covariates"]:
        if c in PLAN["scenario"]:
            case[c], source[c] = PLAN["scenario"][c], "given"
        elif c in PLAN["levels"]:
            case[c], source[c] = data[c].astype(str).mode().iloc[0], "most common"
        else:
            case[c], source[c] = float(data[c].median()), "median"
    frame = pd.DataFrame([case])
    x0 = design(frame)[0]
    value = float(x0 @ beta)
    half = float(q * sigma * np.sqrt(1 + x0 @ inverse @ x0))
    pd.DataFrame({"covariate": list(case), "value": [case[c] if c in PLAN["levels"] else round(float(case[c]), 2) for c in case],
                  "source": [source[c] for c in case]}).to_csv("results/scenario.csv", index=False)
    pd.DataFrame({"predicted": [round(value, 2)], "lower_95": [round(value - half, 2)], "upper_95": [round(value + half, 2)]}).to_csv("results/prediction.csv", index=False)

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.scatter(actual, predicted, s=14)
low, high = float(min(actual.min(), predicted.min())), float(max(actual.max(), predicted.max()))
ax.plot([low, high], [low, high], color="grey", linewidth=1)
ax.set_xlabel("actual " + (PLAN["target_label"] or target))
ax.set_ylabel("predicted")
ax.set_title("held-out rows")
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("holdout RMSE", round(rmse, 2), "R2", round(r2, 3))
"""

_REGRESSION_FIGURES = """
import matplotlib.pyplot as plt

importance = pd.read_csv("results/importance.csv").sort_values("unique_r2")
fig, ax = plt.subplots(figsize=(7, 0.5 * len(importance) + 1.5))
ax.barh(importance["covariate"].astype(str), importance["unique_r2"])
ax.set_xlabel("share of variance explained by this covariate alone (R² lost without it)")
ax.set_title(PLAN["target_label"] or PLAN["target"])
fig.tight_layout()
fig.savefig("figures/effects.png", dpi=120)
"""

_BODIES: dict[tuple[str, str], str] = {
    ("clean_data", "forecast"): _CLEAN, ("clean_data", "epidemic"): _CLEAN,
    ("model", "forecast"): _FORECAST_MODEL, ("model", "epidemic"): _EPIDEMIC_MODEL,
    ("train", "forecast"): _FORECAST_TRAIN, ("train", "epidemic"): _EPIDEMIC_TRAIN,
    ("figures", "forecast"): _FORECAST_FIGURES, ("figures", "epidemic"): _EPIDEMIC_FIGURES,
    ("clean_data", "regression"): _CLEAN, ("model", "regression"): _REGRESSION_MODEL, ("train", "regression"): _REGRESSION_TRAIN,
    ("figures", "regression"): _REGRESSION_FIGURES,
}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class KindSpec:
    """What the Director tells the team and the paper about one kind of model (its scripts are `_BODIES`)."""

    formula: str
    """The model in LaTeX, for the paper."""
    functions: frozenset[str]
    """What `code/model.py` must define for `code/train.py` (a code translator's draft is checked against it)."""
    figures: tuple[str, str]
    """The two figures the scripts make, in the order the paper shows them (and the visualizer captions them)."""
    figure_words: str
    """The two figures, as the visualizer is told."""
    holdout_words: str
    """What the model trainer's `holdout` counts, as it is told."""


KINDS: dict[ModelKind, KindSpec] = {
    "forecast": KindSpec(
        formula=r"y_t = \beta_0 + \beta_1 t + \sum_{s} \gamma_s D_{s,t} + \sum_{j} \delta_j x_{j,t} + \varepsilon_t",
        functions=frozenset({"fit", "predict", "terms"}), figures=("fit.png", "forecast.png"), figure_words="拟合图、预测图",
        holdout_words="检验期的期数（holdout，最后几期）",
    ),
    "epidemic": KindSpec(
        formula=r"S_{t+1} = S_t - \beta S_t I_t / N, \quad I_{t+1} = I_t + \beta S_t I_t / N - \gamma I_t, \quad R_0 = \beta / \gamma",
        functions=frozenset({"fit", "simulate"}), figures=("fit.png", "forecast.png"), figure_words="拟合图、预测图", holdout_words="检验期的期数（holdout）",
    ),
    "regression": KindSpec(
        formula=r"y_i = \beta_0 + \sum_{j} \beta_j x_{ij} + \varepsilon_i, \quad \varepsilon_i \sim N(0, \sigma^2)",
        functions=frozenset({"design", "fit", "predict", "terms"}), figures=("fit.png", "effects.png"),
        figure_words="检验集上预测值对实际值的散点图、各解释变量的重要性条形图", holdout_words="随机留出检验的行数（holdout）",
    ),
}  # fmt: skip
_DOCS = {
    "clean_data": "The data engineer's cleaning: problem/*.csv -> data/*.csv (duplicates dropped, sorted, gaps interpolated).",
    "model": "The model as functions (the code translator's); run alone it fits the data once as a check.",
    "train": "The model trainer's run: results/*.csv and figures/fit.png.",
    "figures": "The visualizer's figures from the result files.",
}


def script(name: Literal["clean_data", "model", "train", "figures"], plan: Plan) -> str:
    """The source of `code/<name>.py` for `plan` (a template: see the module's doc)."""
    return (
        _HEAD.format(doc=_DOCS[name], plan=json.dumps(plan.model_dump(), ensure_ascii=False)) + _BODIES[name, plan.kind]
    )
