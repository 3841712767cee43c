"""Analytic hierarchy process: the weights of the criteria (or alternatives) from a pairwise comparison matrix (the
principal eigenvector), with the consistency index and ratio (consistent when CR < 0.1)."""

import json

import numpy as np
from family_io import ranked, run

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made
RANDOM_INDEX = [0, 0, 0.58, 0.9, 1.12, 1.24, 1.32, 1.41, 1.45, 1.49, 1.51, 1.54, 1.56, 1.57, 1.59]


def solve(config, tables):
    frame = tables[config["table"]].set_index(config["label_column"])
    labels = [str(i) for i in frame.index]
    a = frame[[c for c in frame.columns if str(c) in labels] or list(frame.columns)].to_numpy(dtype=float)
    values, vectors = np.linalg.eig(a)
    top = int(np.argmax(values.real))
    w = np.abs(vectors[:, top].real)
    w = w / w.sum()
    n = len(a)
    # λmax ≥ n for a positive reciprocal matrix: below n only through entries written rounded (0.33 for 1/3)
    ci = max(0.0, float(values[top].real) - n) / (n - 1) if n > 1 else 0.0
    cr = ci / RANDOM_INDEX[n - 1] if n - 1 < len(RANDOM_INDEX) and RANDOM_INDEX[n - 1] else 0.0
    return {"weights": dict(zip(labels, w.tolist(), strict=True)), "ranking": ranked(labels, w), "lambda_max": float(values[top].real),
            "ci": ci, "cr": cr, "consistent": cr < 0.1, "size": n}  # fmt: skip


def draw(ax, config, tables, result):
    ax.bar(list(result["weights"]), list(result["weights"].values()))
    ax.set_ylabel("weight")


if __name__ == "__main__":
    run(CONFIG, solve, draw)
