"""The plan a template is filled with: the model's kind, table and columns, and the agents' structured choices
within them, each checked against the data (and the case to predict against the statement) before it is taken; what
was set aside goes on record with the reason."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from ._shape import DataShape, ModelKind

__all__ = ["Plan", "plan_for", "scenario_case"]


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
        target = shape.target or (numeric[0] if numeric else "")  # no numeric column: no template model fits
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
