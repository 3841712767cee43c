"""The model trainer's run: results/*.csv and figures/fit.png."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from model import fit, simulate

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

data = pd.read_csv("data/" + PLAN["table"])
cases = data[PLAN["target"]].to_numpy(dtype=float)
(beta, gamma, i0), found = fit(data)
fitted = PLAN["reporting_rate"] * simulate(beta, gamma, i0, len(cases), PLAN["population"])
day = data[PLAN["time"]].tolist() if PLAN["time"] else list(range(1, len(cases) + 1))
pd.DataFrame({"day": day, "observed": cases.round(2), "fitted": fitted.round(2)}).to_csv("results/fit.csv", index=False)
horizon = 240
path = simulate(beta, gamma, i0, horizon, PLAN["population"])
reported = PLAN["reporting_rate"] * path
peak = int(np.argmax(reported))
rmse = float(np.sqrt(np.mean((fitted - cases) ** 2)))
jac = found.jac
try:
    cov = np.linalg.inv(jac.T @ jac) * float(np.sum(found.fun**2)) / max(1, len(cases) - 3)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
except np.linalg.LinAlgError:
    se = np.array([np.nan, np.nan, np.nan])
rows = [
    ("beta", beta),
    ("gamma", gamma),
    ("R0", beta / gamma),
    ("beta_se", se[0]),
    ("gamma_se", se[1]),
    ("peak_day", peak + 1),
    ("peak_new_reported", reported[peak]),
    ("final_share_infected", path.sum() / PLAN["population"]),
    ("rmse", rmse),
]
pd.DataFrame({"parameter": [r for r, _ in rows], "value": [round(float(v), 4) for _, v in rows]}).fillna(0).to_csv(
    "results/parameters.csv", index=False
)
pd.DataFrame({"day": list(range(1, horizon + 1)), "new_reported": reported.round(2)}).to_csv(
    "results/projection.csv", index=False
)

fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(day, cases, "o", markersize=3, label="reported")
ax.plot(day, fitted, label="SIR fit")
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("R0", round(beta / gamma, 2))
