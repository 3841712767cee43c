"""The assignment problem: each row (a worker) to one column (a job) at the least total cost (or the greatest total
value), by the Hungarian method (scipy's linear_sum_assignment)."""

import json

from scipy.optimize import linear_sum_assignment

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].set_index(config["label_column"])
    cost = frame.to_numpy(dtype=float)
    rows, cols = linear_sum_assignment(cost, maximize=config.get("sense", "min") == "max")
    pairs = {str(frame.index[r]): str(frame.columns[c]) for r, c in zip(rows, cols, strict=True)}
    return {
        "pairs": pairs, "total": float(cost[rows, cols].sum()), "sense": config.get("sense", "min"),
        "costs": {str(frame.index[r]): float(cost[r, c]) for r, c in zip(rows, cols, strict=True)},
        "size": [int(cost.shape[0]), int(cost.shape[1])],
    }  # fmt: skip


def draw(ax, config, tables, result):
    frame = tables[config["table"]].set_index(config["label_column"])
    ax.imshow(frame.to_numpy(dtype=float), cmap="Blues")
    for r, row in enumerate(frame.index):
        c = list(frame.columns).index(result["pairs"][str(row)]) if str(row) in result["pairs"] else None
        if c is not None:
            ax.text(c, r, "●", ha="center", va="center", color="red")
    ax.set_xticks(range(len(frame.columns)), [str(c) for c in frame.columns], rotation=30)
    ax.set_yticks(range(len(frame.index)), [str(i) for i in frame.index])


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
