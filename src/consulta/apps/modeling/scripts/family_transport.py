"""The transportation problem (PuLP, solved in process by HiGHS): ship from each source (a row, with its supply) to
each destination (a column, with its demand from a row of the same table) at the least total cost."""

import json

import pulp

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    frame = tables[config["table"]].set_index(config["label_column"])
    frame.index = [str(i) for i in frame.index]
    demand_row = str(config["demand_row"])
    supply = frame[config["supply_column"]].drop(demand_row, errors="ignore").astype(float)
    destinations = [c for c in frame.columns if c != config["supply_column"]]
    demand = frame.loc[demand_row, destinations].astype(float)
    cost = frame.loc[list(supply.index), destinations].astype(float)
    problem = pulp.LpProblem("transport", pulp.LpMinimize)
    x = {
        (s, d): problem.add_variable(f"x_{i}_{j}", lowBound=0)
        for i, s in enumerate(supply.index)
        for j, d in enumerate(destinations)
    }
    problem += pulp.lpSum(cost.loc[s, d] * v for (s, d), v in x.items())
    for s in supply.index:
        problem += pulp.lpSum(x[s, d] for d in destinations) <= supply[s]
    for d in destinations:
        problem += pulp.lpSum(x[s, d] for s in supply.index) >= demand[d]
    problem.solve(pulp.HiGHS(msg=False))
    flows = [{"from": s, "to": d, "amount": float(v.value())} for (s, d), v in x.items() if (v.value() or 0) > 1e-9]
    return {
        "status": pulp.LpStatus[problem.status], "total_cost": float(pulp.value(problem.objective) or 0),
        "flows": flows, "supply": supply.to_dict(), "demand": demand.to_dict(),
    }  # fmt: skip


def draw(ax, config, tables, result):
    labels = [f"{f['from']}→{f['to']}" for f in result["flows"]]
    ax.barh(labels, [f["amount"] for f in result["flows"]])
    ax.set_xlabel("amount shipped")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
