"""Grey forecasting GM(1,1) for a short, positive series: the development coefficient a and grey input b fitted on the
accumulated series, the fit's mean relative error and posterior-variance ratio C, and the forecast."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["value_column"]])
    if config.get("time_column"):
        frame = frame.sort_values(config["time_column"])
    x0 = frame[config["value_column"]].to_numpy(dtype=float)
    x1 = np.cumsum(x0)
    z = (x1[1:] + x1[:-1]) / 2
    a, b = np.linalg.lstsq(np.c_[-z, np.ones_like(z)], x0[1:], rcond=None)[0]
    horizon = int(config.get("horizon") or 3)
    k = np.arange(len(x0) + horizon)
    x1_hat = (x0[0] - b / a) * np.exp(-a * k) + b / a
    x0_hat = np.r_[x0[0], np.diff(x1_hat)]
    fitted, forecast = x0_hat[: len(x0)], x0_hat[len(x0) :]
    errors = x0 - fitted
    relative = float(np.mean(np.abs(errors[1:]) / np.abs(x0[1:])))
    c = float(errors[1:].std() / x0.std()) if x0.std() > 0 else 0.0
    times = frame[config["time_column"]].tolist() if config.get("time_column") else list(range(1, len(x0) + 1))
    step = times[-1] - times[-2] if len(times) > 1 and all(isinstance(t, int | float) for t in times[-2:]) else 1
    future = (
        [times[-1] + step * (i + 1) for i in range(horizon)]
        if isinstance(times[-1], int | float)
        else list(range(len(x0) + 1, len(x0) + horizon + 1))
    )
    return {
        "a": float(a), "b": float(b), "growth_rate": float(np.exp(-a) - 1), "mean_relative_error": relative,
        "posterior_ratio": c, "horizon": horizon, "forecast": dict(zip(map(str, future), forecast.tolist(), strict=True)),
        "fitted": fitted.tolist(), "points": len(x0), "last_forecast": float(forecast[-1]) if horizon else None,
    }  # fmt: skip


def draw(ax, config, tables, result):
    x0 = tables[config["table"]][config["value_column"]].dropna().to_numpy(dtype=float)
    ax.plot(range(1, len(x0) + 1), x0, "o", label="data")
    ax.plot(range(1, len(x0) + 1), result["fitted"], label="GM(1,1)")
    ax.plot(
        range(len(x0) + 1, len(x0) + 1 + result["horizon"]), list(result["forecast"].values()), "s--", label="forecast"
    )
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
