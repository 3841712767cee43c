"""The model as functions (the code translator's); run alone it fits the data once as a check."""

import json

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template


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
