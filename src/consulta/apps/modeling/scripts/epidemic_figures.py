"""The visualizer's figures from the result files."""

import json

import matplotlib.pyplot as plt
import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

projection = pd.read_csv("results/projection.csv")
fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(projection["day"], projection["new_reported"], label="projected new reported cases")
ax.set_xlabel("day")
ax.set_title(PLAN["target_label"] or PLAN["target"])
ax.legend()
fig.tight_layout()
fig.savefig("figures/forecast.png", dpi=120)
