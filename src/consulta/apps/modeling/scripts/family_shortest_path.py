"""Shortest path on a weighted graph (networkx, Dijkstra) between two nodes the problem names, from a table of edges."""

import json

import networkx as nx

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def graph(config, tables, weight):
    frame = tables[config["table"]]
    g = nx.DiGraph() if config.get("directed") else nx.Graph()
    for values in frame.to_dict("records"):
        g.add_edge(str(values[config["source_column"]]), str(values[config["target_column"]]),
                   weight=float(values[config[weight]]) if config.get(weight) else 1.0)  # fmt: skip
    return g


def solve(config, tables):
    g = graph(config, tables, "weight_column")
    start, end = str(config["start"]), str(config["end"])
    path = nx.dijkstra_path(g, start, end)
    return {
        "start": start, "end": end, "path": path, "length": float(nx.dijkstra_path_length(g, start, end)),
        "hops": len(path) - 1, "nodes": g.number_of_nodes(), "edges": g.number_of_edges(),
    }  # fmt: skip


def draw(ax, config, tables, result):
    g = graph(config, tables, "weight_column")
    where = nx.spring_layout(g, seed=1)
    nx.draw_networkx(g, where, ax=ax, node_size=250, font_size=7, node_color="lightgrey")
    on = list(zip(result["path"][:-1], result["path"][1:], strict=True))
    nx.draw_networkx_edges(g, where, edgelist=on, ax=ax, edge_color="red", width=2.5)
    ax.axis("off")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
