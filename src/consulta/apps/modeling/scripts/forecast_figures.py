"""The visualizer's figures from the result files."""

import json

import matplotlib.pyplot as plt
import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

data = pd.read_csv("data/" + PLAN["table"])
forecast = pd.read_csv("results/forecast.csv")
label = forecast.columns[0]
fig, ax = plt.subplots(figsize=(9, 4))
history = data.tail(36)
ax.plot(
    history[PLAN["time"]].astype(str) if PLAN["time"] else history.index.astype(str),
    history[PLAN["target"]],
    label="history",
)
ax.plot(forecast[label].astype(str), forecast["forecast"], label="forecast")
ax.fill_between(forecast[label].astype(str), forecast["lower_95"], forecast["upper_95"], alpha=0.2, label="95%")
ax.set_xticks(ax.get_xticks()[::6])
ax.tick_params(axis="x", rotation=60)
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/forecast.png", dpi=120)
