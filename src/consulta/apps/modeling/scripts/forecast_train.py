"""The model trainer's run: results/*.csv and figures/fit.png."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from model import fit, predict, terms

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

data = pd.read_csv("data/" + PLAN["table"])
target, h = PLAN["target"], PLAN["holdout"]
train, test = data.iloc[:-h], data.iloc[-h:]
beta, sigma = fit(train)
fitted = predict(beta, test, len(train))
actual = test[target].to_numpy(dtype=float)
mape = float(np.mean(np.abs((actual - fitted) / actual)) * 100)
rmse = float(np.sqrt(np.mean((actual - fitted) ** 2)))
label = PLAN["time"] or "row"
periods = test[PLAN["time"]].astype(str).tolist() if PLAN["time"] else [str(i) for i in range(len(train), len(data))]
pd.DataFrame({label: periods, "actual": actual.round(2), "fitted": fitted.round(2)}).to_csv(
    "results/backtest.csv", index=False
)

beta_all, sigma_all = fit(data)
in_sample = predict(beta_all, data, 0)
y = data[target].to_numpy(dtype=float)
r2 = 1 - float(np.sum((y - in_sample) ** 2) / np.sum((y - y.mean()) ** 2))
pd.DataFrame({"term": terms(PLAN["covariates"], PLAN["season"]), "estimate": np.round(beta_all, 4)}).to_csv(
    "results/coefficients.csv", index=False
)

season = PLAN["season"] or 1
future = pd.DataFrame(
    {
        c: [
            data[c].iloc[i::season].mean() if season > 1 else data[c].tail(h).mean()
            for i in [(len(data) + k) % season for k in range(h)]
        ]
        for c in PLAN["covariates"]
    },
    index=range(h),
)  # h rows even with no covariate
if PLAN["time"] and PLAN["season"] == 12:
    last = pd.Period(str(data[PLAN["time"]].iloc[-1]), freq="M")
    labels = [str(last + k + 1) for k in range(h)]
else:
    labels = [str(len(data) + k) for k in range(h)]
forecast = predict(beta_all, future, len(data))
pd.DataFrame(
    {
        label: labels,
        "forecast": forecast.round(2),
        "lower_95": (forecast - 1.96 * sigma_all).round(2),
        "upper_95": (forecast + 1.96 * sigma_all).round(2),
    }
).to_csv("results/forecast.csv", index=False)
peak = int(np.argmax(forecast))
metrics = [
    ("mape_holdout_pct", mape),
    ("rmse_holdout", rmse),
    ("r2_in_sample", r2),
    ("residual_sd", sigma_all),
    ("forecast_total", float(forecast.sum())),
    ("forecast_peak", float(forecast[peak])),
]
if PLAN["scenario_column"]:
    shifted = future.copy()
    shifted[PLAN["scenario_column"]] = shifted[PLAN["scenario_column"]] * PLAN["scenario_factor"]
    changed = predict(beta_all, shifted, len(data))
    metrics += [
        ("scenario_total", float(changed.sum())),
        ("scenario_change", float(changed.sum() - forecast.sum())),
        ("scenario_change_pct", float((changed.sum() / forecast.sum() - 1) * 100)),
    ]
pd.DataFrame({"metric": [m for m, _ in metrics], "value": [round(v, 2) for _, v in metrics]}).to_csv(
    "results/metrics.csv", index=False
)
pd.DataFrame({"peak_period": [labels[peak]], "peak_forecast": [round(float(forecast[peak]), 2)]}).to_csv(
    "results/peak.csv", index=False
)

fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(periods, actual, marker="o", label="actual")
ax.plot(periods, fitted, marker="x", label="model")
ax.set_title(PLAN["target_label"] or target)
ax.tick_params(axis="x", rotation=60)
ax.legend()
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("holdout MAPE", round(mape, 2))
