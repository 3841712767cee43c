"""Monte Carlo by resampling the observed values of one quantity (a day's demand): the total over a horizon, its
quantiles, and the probability it exceeds a capacity the problem gives (seeded: the same numbers on every run)."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    values = tables[config["table"]][config["column"]].dropna().to_numpy(dtype=float)
    horizon, runs = int(config.get("horizon") or 1), int(config.get("runs") or 20000)
    rng = np.random.default_rng(int(config.get("seed") or 1))
    totals = rng.choice(values, size=(runs, horizon), replace=True).sum(axis=1)
    capacity = float(config["capacity"])
    exceed = float((totals > capacity).mean())
    return {
        "runs": runs, "horizon": horizon, "capacity": capacity, "probability_exceed": exceed,
        "mean_total": float(totals.mean()), "p05": float(np.quantile(totals, 0.05)), "p95": float(np.quantile(totals, 0.95)), "interval_pct": 90,
        "tail_pct": 5,
        "observations": len(values),
    }  # fmt: skip


def draw(ax, config, tables, result):
    values = tables[config["table"]][config["column"]].dropna().to_numpy(dtype=float)
    rng = np.random.default_rng(int(config.get("seed") or 1))
    totals = rng.choice(values, size=(result["runs"], result["horizon"]), replace=True).sum(axis=1)
    ax.hist(totals, bins=50, color="lightsteelblue")
    ax.axvline(result["capacity"], c="red", ls="--")
    ax.set_xlabel(f"total over {result['horizon']} periods")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
