"""The model as functions (the code translator's); run alone it fits the data once as a check."""

import json

import numpy as np
import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template


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
