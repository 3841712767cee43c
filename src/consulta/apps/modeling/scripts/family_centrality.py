"""Centrality on a graph (networkx): which nodes matter most, by betweenness, degree or PageRank, from a table of
edges."""

import json

import networkx as nx

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made
MEASURES = {"betweenness": nx.betweenness_centrality, "degree": nx.degree_centrality, "pagerank": nx.pagerank}


def graph(config, tables):
    g = nx.DiGraph() if config.get("directed") else nx.Graph()
    for values in tables[config["table"]].to_dict("records"):
        g.add_edge(str(values[config["source_column"]]), str(values[config["target_column"]]))
    return g


def solve(config, tables):
    g = graph(config, tables)
    measure = config.get("measure") or "betweenness"
    score = MEASURES[measure](g)
    ranking = sorted(score, key=lambda n: (-score[n], n))
    top = int(config.get("top") or 5)
    return {"measure": measure, "ranking": ranking[:top], "scores": {n: float(score[n]) for n in ranking[:top]},
            "nodes": g.number_of_nodes(), "edges": g.number_of_edges()}  # fmt: skip


def draw(ax, config, tables, result):
    g = graph(config, tables)
    where = nx.spring_layout(g, seed=1)
    colours = ["red" if n in result["ranking"] else "lightgrey" for n in g.nodes]
    nx.draw_networkx(g, where, ax=ax, node_size=250, font_size=7, node_color=colours)
    ax.axis("off")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
