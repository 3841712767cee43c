"""Maximum flow on a network of capacities (networkx, preflow-push) from a source to a sink the problem names, with the
minimum cut (the edges that limit it)."""

import json

import networkx as nx

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def graph(config, tables):
    frame = tables[config["table"]]
    g = nx.DiGraph()
    for values in frame.to_dict("records"):
        ends = (str(values[config["source_column"]]), str(values[config["target_column"]]))
        capacity = float(values[config["capacity_column"]])
        for u, v in [ends] if config.get("directed") else [ends, ends[::-1]]:  # a two-way link carries either way
            g.add_edge(u, v, capacity=g.get_edge_data(u, v, {}).get("capacity", 0.0) + capacity)
    return g


def solve(config, tables):
    g = graph(config, tables)
    source, sink = str(config["source"]), str(config["sink"])
    value, flows = nx.maximum_flow(g, source, sink)
    cut_value, (reach, rest) = nx.minimum_cut(g, source, sink)
    cut = [[u, v] for u in reach for v in g.successors(u) if v in rest]
    used = [{"from": u, "to": v, "flow": float(f)} for u, out in flows.items() for v, f in out.items() if f > 1e-9]
    return {"source": source, "sink": sink, "max_flow": float(value), "min_cut": sorted(cut),
            "cut_capacity": float(cut_value), "flows": used}  # fmt: skip


def draw(ax, config, tables, result):
    g = graph(config, tables)
    where = nx.spring_layout(g, seed=1)
    nx.draw_networkx(g, where, ax=ax, node_size=250, font_size=7, node_color="lightgrey")
    nx.draw_networkx_edges(g, where, edgelist=[tuple(e) for e in result["min_cut"]], ax=ax, edge_color="red", width=2.5)
    ax.axis("off")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
