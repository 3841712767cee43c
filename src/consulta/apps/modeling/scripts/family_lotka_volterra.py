"""Lotka–Volterra predator–prey ODEs fitted to two series: dx/dt = αx − βxy, dy/dt = δxy − γy (least squares on the
solved trajectories, started from a regression of the growth rates), with the equilibrium and the cycle's period."""

import json

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def trajectory(p, t, start):
    a, b, g, d = p
    sol = solve_ivp(lambda _, z: [a * z[0] - b * z[0] * z[1], d * z[0] * z[1] - g * z[1]], (t[0], t[-1]), start,
                    t_eval=t, rtol=1e-6, atol=1e-6)  # fmt: skip
    return sol.y if sol.success and sol.y.shape[1] == len(t) else np.full((2, len(t)), 1e6)


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["prey_column"], config["predator_column"]])
    frame = frame.sort_values(config["time_column"])
    t = frame[config["time_column"]].to_numpy(dtype=float)
    x, y = frame[config["prey_column"]].to_numpy(dtype=float), frame[config["predator_column"]].to_numpy(dtype=float)
    rx, ry = np.gradient(np.log(x), t), np.gradient(np.log(y), t)  # per-capita rates: linear in the other species
    bx = np.linalg.lstsq(np.c_[np.ones_like(y), -y], rx, rcond=None)[0]
    by = np.linalg.lstsq(np.c_[x, -np.ones_like(x)], ry, rcond=None)[0]
    guess = np.abs([bx[0], bx[1], by[1], by[0]]) + 1e-6
    scale = np.r_[x, y].std()

    def residuals(logp):
        return (trajectory(np.exp(logp), t, [x[0], y[0]]) - np.vstack([x, y])).ravel() / scale

    fit = least_squares(residuals, np.log(guess), method="trf", x_scale=1.0, max_nfev=200)
    a, b, g, d = np.exp(fit.x)
    model = trajectory([a, b, g, d], t, [x[0], y[0]])
    observed = np.vstack([x, y])
    r2 = 1 - float(((observed - model) ** 2).sum() / ((observed - observed.mean(axis=1, keepdims=True)) ** 2).sum())
    return {
        "alpha": a, "beta": b, "gamma": g, "delta": d, "prey_equilibrium": g / d, "predator_equilibrium": a / b,
        "period": 2 * np.pi / np.sqrt(a * g), "r2": r2, "points": len(t), "time": t.tolist(),
        "prey_fitted": model[0].tolist(), "predator_fitted": model[1].tolist(),
    }  # fmt: skip


def draw(ax, config, tables, result):
    frame = tables[config["table"]].sort_values(config["time_column"])
    t = frame[config["time_column"]]
    ax.scatter(t, frame[config["prey_column"]], s=10, label=config["prey_column"])
    ax.scatter(t, frame[config["predator_column"]], s=10, label=config["predator_column"])
    ax.plot(result["time"], result["prey_fitted"])
    ax.plot(result["time"], result["predator_fitted"])
    ax.set_xlabel(config["time_column"])
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
