"""Exponential smoothing (statsmodels Holt–Winters: additive trend, and a season when the problem's data has one)
of one series: checked on its last periods held out (MAPE), refitted on all of it and forecast ahead."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def smoothing(y, season):
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    seasonal = "add" if season and len(y) >= 2 * season + 2 else None
    return ExponentialSmoothing(y, trend="add", seasonal=seasonal, seasonal_periods=season if seasonal else None).fit()


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["value_column"]])
    if config.get("time_column"):
        frame = frame.sort_values(config["time_column"])
    y = frame[config["value_column"]].to_numpy(dtype=float)
    season, horizon = int(config.get("season") or 0), int(config.get("horizon") or 12)
    hold = max(1, min(len(y) // 5, horizon))
    check = smoothing(y[:-hold], season).forecast(hold)
    mape = float(np.mean(np.abs((y[-hold:] - check) / np.where(y[-hold:] != 0, y[-hold:], 1))) * 100)
    forecast = smoothing(y, season).forecast(horizon)
    return {
        "horizon": horizon, "season": season, "holdout": hold, "mape_holdout_pct": mape, "forecast": forecast.tolist(),
        "forecast_total": float(forecast.sum()), "last_forecast": float(forecast[-1]), "last_value": float(y[-1]),
        "points": len(y),
    }  # fmt: skip


def draw(ax, config, tables, result):
    y = tables[config["table"]][config["value_column"]].dropna().to_numpy(dtype=float)
    ax.plot(range(1, len(y) + 1), y, label="data")
    ax.plot(range(len(y) + 1, len(y) + 1 + result["horizon"]), result["forecast"], "--", label="forecast")
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
