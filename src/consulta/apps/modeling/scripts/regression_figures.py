"""The visualizer's figures from the result files."""

import json

import matplotlib.pyplot as plt
import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

importance = pd.read_csv("results/importance.csv").sort_values("unique_r2")
fig, ax = plt.subplots(figsize=(7, 0.5 * len(importance) + 1.5))
ax.barh(importance["covariate"].astype(str), importance["unique_r2"])
ax.set_xlabel("share of variance explained by this covariate alone (R² lost without it)")
ax.set_title(PLAN["target_label"] or PLAN["target"])
fig.tight_layout()
fig.savefig("figures/effects.png", dpi=120)
