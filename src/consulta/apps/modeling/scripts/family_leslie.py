"""Leslie matrix (an age-structured population) with harvesting: survival by age from two years' counts (or from one
year's age structure), fecundity of the breeding ages, the growth rate (the dominant eigenvalue), the stable age
structure, the projection without management, and the yearly proportional removal that holds the population level."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def counts(frame, age, count):
    """Counts by age 0..max: identical duplicate rows dropped, a repeated age averaged, a missing age interpolated."""
    rows = frame[[age, count]].dropna().drop_duplicates()
    repeated = sorted(int(a) for a in rows[age][rows[age].duplicated()].unique())
    series = rows.groupby(age)[count].mean()
    series.index = series.index.astype(int)
    full = series.reindex(range(int(series.index.min()), int(series.index.max()) + 1))
    filled = [int(a) for a in full.index[full.isna()]]
    return full.interpolate().to_numpy(dtype=float), [int(a) for a in full.index], repeated, filled


def solve(config, tables):
    n, ages, repeated, filled = counts(tables[config["table"]], config["age_column"], config["count_column"])
    later = config.get("next_table") or ""
    b = int(config.get("breeding_age") or 1)
    breeders = max(n[ages.index(b) :].sum(), 1e-9) if b in ages else max(n[1:].sum(), 1e-9)
    if later:
        m, _, repeated2, filled2 = counts(tables[later], config["age_column"], config["count_column"])
        k = min(len(n), len(m))
        survival = np.clip(m[1:k] / np.maximum(n[: k - 1], 1e-9), 0, 1)
        fecundity = float(config.get("fecundity") or m[0] / breeders)
        now = m[:k]
    else:
        repeated2, filled2, k = [], [], len(n)
        survival = np.clip(n[1:] / np.maximum(n[:-1], 1e-9), 0, 1)
        fecundity = float(config.get("fecundity") or n[0] / breeders)
        now = n
    size = len(survival) + 1
    leslie = np.zeros((size, size))
    leslie[0, [i for i in range(size) if ages[0] + i >= b]] = fecundity
    leslie[np.arange(1, size), np.arange(size - 1)] = survival
    values, vectors = np.linalg.eig(leslie)
    top = int(np.argmax(values.real))
    growth = float(values[top].real)
    stable = np.abs(vectors[:, top].real)
    stable = stable / stable.sum()
    years = int(config.get("years") or 10)
    harvest = max(0.0, 1 - 1 / growth) if growth > 0 else 0.0
    level = float(config.get("target") or now.sum())
    # a herd above the level to keep is first brought down to it (its age structure kept), then held there
    start = now * min(1.0, level / max(float(now.sum()), 1e-9))
    plain, managed = [float(now.sum())], [float(start.sum())]
    x, y = now.copy(), start.copy()
    for _ in range(years):
        x = leslie @ x
        y = (1 - harvest) * (leslie @ y)
        plain.append(float(x.sum()))
        managed.append(float(y.sum()))
    return {
        "ages": ages[:size], "survival": survival.tolist(), "fecundity": fecundity, "breeding_age": b,
        "growth_rate": growth, "stable_structure": stable.tolist(), "total_now": float(now.sum()), "years": years,
        "total_projected": plain[-1], "projection": plain, "harvest_rate": harvest, "level": level,
        "removals_per_year": harvest * growth * level, "first_removal": float(now.sum() - start.sum()),
        "managed_projection": managed, "total_managed": managed[-1],
        "repeated_ages": sorted(set(repeated + repeated2)), "filled_ages": sorted(set(filled + filled2)),
    }  # fmt: skip


def draw(ax, config, tables, result):
    ax.plot(result["projection"], marker="o", label="no management")
    ax.plot(result["managed_projection"], marker="s", label="proportional removal")
    ax.set_xlabel("year")
    ax.set_ylabel("total population")
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
