"""TOPSIS: alternatives ranked by their closeness to the ideal and distance from the worst, on vector-normalised
criteria (a cost criterion: smaller is better) with an earlier AHP's weights of the same criteria, or entropy or equal
weights."""

import json

import numpy as np
from family_io import criteria_matrix, entropy_weights, ranked, run

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=config["criteria"])
    labels = [str(v) for v in frame[config["label_column"]]]
    criteria, cost = config["criteria"], set(config.get("cost_criteria") or [])
    x = frame[criteria].to_numpy(dtype=float)
    ahp = config.get("ahp_weights") or {}
    if ahp:
        w = np.array([float(ahp[c]) for c in criteria])
        w = w / w.sum()
    elif config.get("weighting") == "entropy":
        w = entropy_weights(criteria_matrix(frame, criteria, cost))
    else:
        w = np.full(len(criteria), 1 / len(criteria))
    weighting = "ahp" if ahp else config.get("weighting") or "equal"
    v = x / np.sqrt((x**2).sum(axis=0)) * w
    is_cost = np.array([c in cost for c in criteria])
    best = np.where(is_cost, v.min(axis=0), v.max(axis=0))
    worst = np.where(is_cost, v.max(axis=0), v.min(axis=0))
    d_best, d_worst = np.sqrt(((v - best) ** 2).sum(axis=1)), np.sqrt(((v - worst) ** 2).sum(axis=1))
    score = d_worst / np.where(d_best + d_worst > 0, d_best + d_worst, 1)
    return {"weights": dict(zip(criteria, w.tolist(), strict=True)), "scores": dict(zip(labels, score.tolist(), strict=True)),
            "ranking": ranked(labels, score), "weighting": weighting, "cost_criteria": sorted(cost),
            **({"weights_from": config.get("weights_from") or ""} if ahp else {})}  # fmt: skip


def draw(ax, config, tables, result):
    order = result["ranking"]
    ax.barh(order[::-1], [result["scores"][a] for a in order[::-1]])
    ax.set_xlabel("closeness to the ideal")


if __name__ == "__main__":
    run(CONFIG, solve, draw)
