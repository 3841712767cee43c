"""SIR epidemic (discrete days) fitted to reported new cases by least squares: transmission β, recovery γ, the
reproduction number R0 = β/γ, the peak and the final size, projected past the data."""

import json

import numpy as np
from scipy.optimize import least_squares

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def new_cases(beta, gamma, days, population, first):
    s, i, out = population - first, float(first), []
    for _ in range(days):
        infected = beta * s * i / population
        s, i = s - infected, i + infected - gamma * i
        out.append(infected)
    return np.array(out)


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["cases_column"]])
    cases = frame[config["cases_column"]].to_numpy(dtype=float)
    population = float(config["population"])
    first = max(cases[0], 1.0)

    def residuals(p):  # β, γ and the infected at the start (on a log scale)
        return (new_cases(p[0], p[1], len(cases), population, np.exp(p[2])) - cases) / max(cases.max(), 1)

    fit = least_squares(residuals, [0.4, 0.15, np.log(first)], bounds=([1e-4, 1e-4, -5], [5, 2, np.log(population)]))
    beta, gamma, first = (float(v) for v in (fit.x[0], fit.x[1], np.exp(fit.x[2])))
    horizon = len(cases) + int(config.get("horizon") or 30)
    projection = new_cases(beta, gamma, horizon, population, first)
    fitted = projection[: len(cases)]
    r2 = 1 - float(((cases - fitted) ** 2).sum() / ((cases - cases.mean()) ** 2).sum())
    return {
        "beta": beta, "gamma": gamma, "r0": beta / gamma, "peak_day": int(np.argmax(projection)) + 1,
        "peak_new_cases": float(projection.max()), "total_infected": float(projection.sum()), "days": horizon,
        "r2": r2, "projection": projection.tolist(),
    }  # fmt: skip


def draw(ax, config, tables, result):
    cases = tables[config["table"]][config["cases_column"]].dropna().to_numpy()
    ax.bar(range(1, len(cases) + 1), cases, color="lightgrey", label="reported")
    ax.plot(range(1, len(result["projection"]) + 1), result["projection"], label="SIR")
    ax.set_xlabel("day")
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
