"""The entropy weight method: each criterion weighted by how much its (min–max normalised) values differ across the
alternatives, and the alternatives scored by the weighted sum."""

import json

from family_io import criteria_matrix, entropy_weights, ranked, run

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=config["criteria"])
    labels = [str(v) for v in frame[config["label_column"]]]
    z = criteria_matrix(frame, config["criteria"], set(config.get("cost_criteria") or []))
    w = entropy_weights(z)
    score = z @ w
    return {"weights": dict(zip(config["criteria"], w.tolist(), strict=True)), "scores": dict(zip(labels, score.tolist(), strict=True)),
            "ranking": ranked(labels, score), "top_criterion": ranked(config["criteria"], w)[0]}  # fmt: skip


def draw(ax, config, tables, result):
    ax.bar(list(result["weights"]), list(result["weights"].values()))
    ax.set_ylabel("entropy weight")
    ax.tick_params(axis="x", rotation=30)


if __name__ == "__main__":
    run(CONFIG, solve, draw)
