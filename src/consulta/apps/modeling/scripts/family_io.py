"""What every family's script shares: its tables read (data/*.csv, cleaned, else problem/*.csv), its result written
(results/<out>.json, every float rounded to 4 significant digits, so the paper quotes the file exactly) and its figure
drawn (figures/<out>.png). Run alone it does nothing."""

import glob
import json
import math
import os

import pandas as pd


def tables():
    """Each CSV of the problem by file name: the cleaned copy in data/ when there is one."""
    found = {}
    for folder in ("problem", "data"):  # data/ last: a cleaned table stands in for its original
        for path in sorted(glob.glob(folder + "/*.csv")):
            frame = pd.read_csv(path)
            frame.columns = [str(c).strip() for c in frame.columns]
            found[os.path.basename(path)] = frame
    return found


def rounded(value):
    """`value` with every float rounded to 4 significant digits (NaN and infinities become None)."""
    if isinstance(value, dict):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        value = value.item()
    if isinstance(value, float):
        return None if not math.isfinite(value) else float(f"{value:.4g}")
    return value


def run(config, solve, draw=None):
    """solve(config, tables) → results/<out>.json; draw(ax, config, tables, result) → figures/<out>.png."""
    data = tables()
    result = rounded(solve(config, data))
    os.makedirs("results", exist_ok=True)
    with open(f"results/{config['out']}.json", "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
    if draw is not None:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.4, 4))
        draw(ax, config, data, result)
        fig.tight_layout()
        os.makedirs("figures", exist_ok=True)
        fig.savefig(f"figures/{config['out']}.png", dpi=120)
    print(json.dumps(result, ensure_ascii=False)[:2000])


def criteria_matrix(frame, criteria, cost=()):
    """The alternatives × criteria as numbers in [0, 1], larger better (a cost criterion reversed), by min–max."""
    import numpy as np

    x = frame[list(criteria)].to_numpy(dtype=float)
    low, high = x.min(axis=0), x.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    z = (x - low) / span
    for j, c in enumerate(criteria):
        if c in cost:
            z[:, j] = 1 - z[:, j]
    return z


def entropy_weights(z):
    """Entropy weights of the criteria (columns of z ≥ 0): a criterion whose values differ more weighs more."""
    import numpy as np

    p = (z + 1e-12) / (z + 1e-12).sum(axis=0)
    e = -(p * np.log(p)).sum(axis=0) / np.log(len(z))
    d = np.clip(1 - e, 0, None)
    return d / d.sum() if d.sum() > 0 else np.full(z.shape[1], 1 / z.shape[1])


def ranked(labels, scores):
    """Labels from the best score down (ties by label)."""
    return [label for _, label in sorted(zip((-s for s in scores), labels, strict=True))]
