"""The model as functions (the code translator's); run alone it fits the data once as a check."""

import json

import numpy as np
import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template


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
