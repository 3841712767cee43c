"""A linear or integer programme (PuLP, solved in process by HiGHS): one decision per row of a table (a product, an
activity), its objective coefficient, and the resources each unit uses against the limits the problem gives."""

import json

import pulp

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].dropna(subset=[config["objective_column"], *config["resource_columns"]])
    names = [str(v) for v in frame[config["name_column"]]]
    maximise = config.get("sense", "max") == "max"
    problem = pulp.LpProblem("plan", pulp.LpMaximize if maximise else pulp.LpMinimize)
    category = pulp.LpInteger if config.get("integer") else pulp.LpContinuous
    x = [problem.add_variable(f"x{i}", lowBound=0, cat=category) for i in range(len(names))]
    problem += pulp.lpSum(float(c) * v for c, v in zip(frame[config["objective_column"]], x, strict=True))
    rows = {}
    for column, limit in zip(config["resource_columns"], config["limits"], strict=True):
        use = pulp.lpSum(float(a) * v for a, v in zip(frame[column], x, strict=True))
        rows[column] = (use, float(limit))
        problem += (use <= limit) if maximise else (use >= limit), column
    problem.solve(pulp.HiGHS(msg=False))
    status = pulp.LpStatus[problem.status]
    used = {c: float(pulp.value(u) or 0) for c, (u, _) in rows.items()}
    return {
        "status": status, "objective": float(pulp.value(problem.objective) or 0), "sense": "max" if maximise else "min",
        "plan": {n: float(v.value() or 0) for n, v in zip(names, x, strict=True)}, "used": used,
        "limits": {c: lim for c, (_, lim) in rows.items()},
        "binding": [c for c, (_, lim) in rows.items() if abs(used[c] - lim) <= 1e-6 * max(1, abs(lim))],
        "integer": bool(config.get("integer")),
    }  # fmt: skip


def draw(ax, config, tables, result):
    ax.bar(list(result["plan"]), list(result["plan"].values()))
    ax.set_ylabel("optimal amount")
    ax.tick_params(axis="x", rotation=30)


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
