"""One-compartment pharmacokinetics with first-order absorption and elimination, C(t) = A(e^(−ke·t) − e^(−ka·t)),
fitted to measured concentrations: elimination rate, half-life, peak, area under the curve, and when the
concentration falls below a threshold the problem gives."""

import json

import numpy as np
from scipy.optimize import brentq, curve_fit

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def curve(t, a, ka, ke):
    return a * (np.exp(-ke * t) - np.exp(-ka * t))


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["time_column"], config["concentration_column"]])
    t = frame[config["time_column"]].to_numpy(dtype=float)
    c = frame[config["concentration_column"]].to_numpy(dtype=float)
    late = t > t[np.argmax(c)]
    slope = np.polyfit(t[late], np.log(np.maximum(c[late], 1e-12)), 1)[0] if late.sum() >= 2 else -0.1
    ke0 = max(-slope, 1e-3)
    (a, ka, ke), _ = curve_fit(curve, t, c, p0=[c.max() * 2, ke0 * 5, ke0], bounds=(0, np.inf), maxfev=20000)
    if ka < ke:  # the same curve: the two rates are interchangeable up to the amplitude's sign
        ka, ke, a = ke, ka, -a
    tmax = float(np.log(ka / ke) / (ka - ke))
    fitted = curve(t, a, ka, ke)
    r2 = 1 - float(((c - fitted) ** 2).sum() / ((c - c.mean()) ** 2).sum())
    threshold = float(config.get("threshold") or 0)
    below = None
    if threshold and curve(tmax, a, ka, ke) > threshold:
        below = brentq(lambda s: curve(s, a, ka, ke) - threshold, tmax, tmax + 200 / ke)
    return {
        "ka": ka, "ke": ke, "half_life": np.log(2) / ke, "tmax": tmax, "cmax": curve(tmax, a, ka, ke),
        "auc": a * (1 / ke - 1 / ka), "threshold": threshold, "time_below_threshold": below, "r2": r2,
        "time": t.tolist(), "fitted": fitted.tolist(),
    }  # fmt: skip


def draw(ax, config, tables, result):
    frame = tables[config["table"]]
    ax.scatter(frame[config["time_column"]], frame[config["concentration_column"]], s=12, label="measured")
    t = np.linspace(0, max(result["time"]), 200)
    ka, ke = result["ka"], result["ke"]
    scale = result["cmax"] / (np.exp(-ke * result["tmax"]) - np.exp(-ka * result["tmax"]))
    ax.plot(t, curve(t, scale, ka, ke), label="one-compartment model")
    if result["threshold"]:
        ax.axhline(result["threshold"], ls="--", c="grey")
    ax.set_xlabel(config["time_column"])
    ax.set_ylabel(config["concentration_column"])
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
