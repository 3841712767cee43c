"""Checks that a trained model means something (issue 24's meaningless models), made by code on the workspace: a
target that is a copy of one covariate or the sum of its covariates (a total regressed on its parts: R² = 1 says
nothing), and a fit that is exact (R² ≈ 1 or a holdout error of 0). Each is a `CheckFailure` with its evidence; the
`results_trained` gate REJECTS on it (see `_gates`)."""

from __future__ import annotations

import ast
import csv
import json
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._checks import CheckFailure

__all__ = ["EXACT_R2", "check_fit_means_something", "made_of", "plan_of"]

EXACT_R2 = 0.9999
"""An R² at or above this is an exact fit: no real data is explained that well by a model of it."""
MAX_PARTS = 8
"""The most covariates a total is looked for among (their subsets: at most 247 sums)."""
_ZERO_ERRORS = ("rmse_holdout", "mae_holdout", "mape_holdout_pct")


def plan_of(script: Path) -> dict[str, Any] | None:
    """The plan a template script carries (its `PLAN = json.loads(...)` line), or None when it carries none."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == ["PLAN"]
            and isinstance(node.value, ast.Call)
            and node.value.args
        ):
            try:
                plan = json.loads(ast.literal_eval(node.value.args[0]))
            except (ValueError, TypeError, SyntaxError):
                return None
            return plan if isinstance(plan, dict) else None
    return None


def _metrics(workspace: Path) -> dict[str, float]:
    path = workspace / "results" / "metrics.csv"
    if not path.is_file():
        return {}
    found = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            try:
                found[str(row.get("metric", ""))] = float(row.get("value", ""))
            except ValueError:
                continue
    return found


def made_of(frame: pd.DataFrame, target: str, covariates: list[str]) -> str | None:
    """How the target is made of its covariates on every row (a copy of one, or the sum of some), or None."""
    numeric = [c for c in covariates if c in frame.columns and pd.api.types.is_numeric_dtype(frame[c])]
    if target not in frame.columns or not numeric or not pd.api.types.is_numeric_dtype(frame[target]):
        return None
    rows = frame[[target, *numeric]].dropna()
    if len(rows) < 3:
        return None
    y = rows[target].to_numpy(dtype=float)
    tolerance = 1e-6 * max(1.0, float(np.abs(y).max()))
    for c in numeric:
        if np.allclose(y, rows[c].to_numpy(dtype=float), atol=tolerance):
            return f"{target} = {c} on every row"
    for size in range(2, min(len(numeric), MAX_PARTS) + 1):  # a total of some of them (female + male, not age)
        for parts in combinations(numeric, size):
            if np.allclose(y, rows[list(parts)].sum(axis=1).to_numpy(dtype=float), atol=tolerance):
                return f"{target} = {' + '.join(parts)} on every row"
    return None


def check_fit_means_something(workspace: Path) -> list[CheckFailure]:
    """The trained model's failures: its target made of its covariates, an exact fit."""
    workspace = Path(workspace)
    failures = []
    plan = plan_of(workspace / "code" / "train.py")
    if plan is not None and plan.get("covariates"):
        try:
            frame = pd.read_csv(workspace / "data" / str(plan.get("table", "")))
        except (OSError, ValueError, UnicodeDecodeError):
            frame = None
        made = made_of(frame, str(plan.get("target", "")), list(plan["covariates"])) if frame is not None else None
        if made is not None:
            failures.append(
                CheckFailure(
                    "target_made_of_covariates",
                    f"The target {plan['target']} is made of the covariates (data/{plan['table']}): the model can only "
                    "return it, it explains nothing. Choose a target the covariates do not add up to, or another model.",
                    made,
                )
            )
    metrics = _metrics(workspace)
    exact = [f"{m} = {metrics[m]:g}" for m in ("r2_in_sample", "r2_holdout") if metrics.get(m, 0.0) >= EXACT_R2]
    exact += [f"{m} = 0" for m in _ZERO_ERRORS if m in metrics and metrics[m] == 0.0]
    if exact:
        failures.append(
            CheckFailure(
                "exact_fit",
                "results/metrics.csv shows an exact fit: no model of real data fits so; its target is most likely a copy "
                "or a total of its covariates. Check what the target is made of.",
                "; ".join(exact),
            )
        )
    return failures
