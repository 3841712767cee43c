"""Grey relational analysis: each alternative's grade of relation to the ideal sequence (the best value of each
normalised criterion), with the distinguishing coefficient ρ (0.5 by default)."""

import json

from family_io import criteria_matrix, ranked, run

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=config["criteria"])
    labels = [str(v) for v in frame[config["label_column"]]]
    z = criteria_matrix(frame, config["criteria"], set(config.get("cost_criteria") or []))
    rho = float(config.get("rho") or 0.5)
    delta = abs(z - z.max(axis=0))
    low, high = delta.min(), delta.max()
    xi = (low + rho * high) / (delta + rho * high) if high > 0 else delta * 0 + 1
    grade = xi.mean(axis=1)
    return {"grades": dict(zip(labels, grade.tolist(), strict=True)), "ranking": ranked(labels, grade), "rho": rho}


def draw(ax, config, tables, result):
    order = result["ranking"]
    ax.barh(order[::-1], [result["grades"][a] for a in order[::-1]])
    ax.set_xlabel("grey relational grade")


if __name__ == "__main__":
    run(CONFIG, solve, draw)
