"""k-means clustering (scipy's kmeans2, k-means++ starts, the best of 10 seeded runs) of the rows on standardised
columns: k given, or chosen between 2 and 6 by the silhouette; each cluster's size and centre in the data's own units.
(scikit-learn's KMeans reads /proc, which the sandbox does not allow.)"""

import json

import numpy as np
from scipy.cluster.vq import kmeans2
from scipy.spatial.distance import cdist

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def silhouette(z, labels):
    """The mean silhouette of the rows (a row alone in its cluster scores 0)."""
    d = cdist(z, z)
    scores = []
    for i, own in enumerate(labels):
        same = (labels == own) & (np.arange(len(z)) != i)
        if not same.any():
            scores.append(0.0)
            continue
        a = d[i, same].mean()
        b = min(d[i, labels == other].mean() for other in set(labels.tolist()) if other != own)
        scores.append((b - a) / max(a, b))
    return float(np.mean(scores))


def best_of(z, k, seed):
    """The run of k-means (of 10 seeded ones) with the least within-cluster sum of squares."""
    best = None
    for run in range(10):
        centres, labels = kmeans2(z, k, minit="++", seed=seed + run)
        inertia = float(((z - centres[labels]) ** 2).sum())
        if len(set(labels.tolist())) == k and (best is None or inertia < best[0]):
            best = (inertia, centres, labels)
    return best


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=config["columns"])
    x = frame[config["columns"]].to_numpy(dtype=float)
    mean, sd = x.mean(axis=0), np.where(x.std(axis=0) > 0, x.std(axis=0), 1)
    z = (x - mean) / sd
    seed = int(config.get("seed") or 1)
    fits = {}
    for k in [int(config["k"])] if config.get("k") else range(2, min(6, len(x) - 1) + 1):
        found = best_of(z, k, seed)
        if found is not None:
            fits[k] = (silhouette(z, found[2]), found)
    k = max(fits, key=lambda n: fits[n][0])
    score, (_, centres, raw) = fits[k]
    order = np.argsort(-np.bincount(raw, minlength=k))  # cluster 1 is the largest
    rename = {int(old): new + 1 for new, old in enumerate(order)}
    labels = [rename[int(v)] for v in raw]
    centres = centres * sd + mean
    label_column = config.get("label_column") or ""
    names = (
        [str(v) for v in frame[label_column]] if label_column in frame.columns else [str(i + 1) for i in range(len(x))]
    )
    return {
        "k": k, "silhouette": score, "silhouettes": {str(n): float(s) for n, (s, _) in fits.items()},
        "sizes": {str(c): labels.count(c) for c in range(1, k + 1)},
        "centres": {str(rename[i]): dict(zip(config["columns"], centres[i].tolist(), strict=True)) for i in range(k)},
        "members": {str(c): [n for n, lab in zip(names, labels, strict=True) if lab == c][:12] for c in range(1, k + 1)},
    }  # fmt: skip


def draw(ax, config, tables, result):
    frame = tables[config["table"]].dropna(subset=config["columns"])
    a, b = config["columns"][0], config["columns"][min(1, len(config["columns"]) - 1)]
    ax.scatter(frame[a], frame[b], s=10, c="lightgrey")
    for c, centre in result["centres"].items():
        ax.scatter(centre[a], centre[b], s=120, marker="X", label=f"cluster {c}")
    ax.set_xlabel(a)
    ax.set_ylabel(b)
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
