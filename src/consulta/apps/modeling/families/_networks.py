"""Networks and graphs (networkx): shortest path, maximum flow, centrality."""

from __future__ import annotations

import re
from typing import Any, Literal

import pandas as pd
from pydantic import Field

from ._base import Family, FamilyParams, ProblemData, columns_problem, num, zh

__all__ = [
    "Centrality",
    "CentralityParams",
    "MaxFlow",
    "MaxFlowParams",
    "ShortestPath",
    "ShortestPathParams",
    "stated_direction",
]


_GRAPH = ("network", "node", "graph", "edge", "vertex", "vertices", "link", "connect", "网络", "节点", "图论", "顶点",
          "连接", "连通")  # fmt: skip
"""Words of any statement about a graph: every network family's subject (the rest tell them apart)."""


class _Edges(FamilyParams):
    source_column: str = Field("", max_length=60, description="边的起点列")
    target_column: str = Field("", max_length=60, description="边的终点列")
    directed: bool = Field(False, description="边是否单向（由题目的用词决定：单向、有向、one-way、directed）")


def _not_edges(frame: pd.DataFrame) -> str:
    """Why `frame` is no list of edges ("" when two of its columns, names or whole numbers, share at least half
    the values of each: the nodes a row links)."""
    ends = [c for c in frame.columns if not pd.api.types.is_float_dtype(frame[c])]
    values = {c: {str(v) for v in frame[c].dropna()} for c in ends}
    for i, a in enumerate(ends):
        for b in ends[i + 1 :]:
            common = values[a] & values[b]
            if common and len(common) * 2 >= max(len(values[a]), len(values[b])) and len(frame) >= 2:
                return ""
    return "it needs a row per link: two columns naming the nodes it joins"


_ONE_WAY = re.compile(
    r"one[- ]way|(?<![A-Za-z])directed(?![A-Za-z])|in the direction (?:of|from)|单向|单行|有向|按[^，,。；;]{0,12}方向",
    re.I,
)
"""The words of a statement whose links go one way only ("undirected", 无向, 双向 are not among them)."""
_TWO_WAY = re.compile(r"two[- ]way|both (?:ways|directions)|either direction|undirected|双向|无向|两个方向", re.I)
"""The words of a statement whose links go both ways."""


def _heads(column: str) -> set[str]:
    """What a statement calls a column: its name, and its head before a unit ("距离" of "距离_km")."""
    head = re.split(r"[_（(\[]", column, maxsplit=1)[0].strip()
    return {c for c in (column, head) if c}


def stated_direction(params: FamilyParams, data: ProblemData) -> FamilyParams:
    """`params` of a network family with `directed` as the statement says it, not as the modeler guessed: one-way
    when a clause of the statement uses a word for it (`_ONE_WAY`) and no word for both ways, and names no column of
    the table or the one the family reads (a capacity "按起点到终点的方向" makes the flow one-way, not the distances);
    else both ways (roads, pipes and links of no stated direction). Any other family's `params` as they are."""
    if not isinstance(params, _Edges):
        return params
    frame = data.tables.get(params.table)
    columns = [str(c) for c in frame.columns] if frame is not None else []
    ends = {params.source_column, params.target_column}
    own = {str(v) for k, v in params.model_dump().items() if k.endswith("_column") and v and v not in ends}
    directed = False
    for clause in re.split(r"[，,。；;\n]|\.(?:\s|$)", data.statement):
        if not _ONE_WAY.search(clause) or _TWO_WAY.search(clause):
            continue
        named = {c for c in columns if c not in ends and any(h.lower() in clause.lower() for h in _heads(c))}
        if not named or named & own:
            directed = True
    return params.model_copy(update={"directed": directed})


class _Network(Family):
    """A family that reads a list of edges."""

    def table_misfit(self, frame: pd.DataFrame) -> str:
        return _not_edges(frame)


def _nodes(data: ProblemData, p: _Edges) -> set[str]:
    frame = data.tables[p.table]
    return {str(v) for v in frame[p.source_column]} | {str(v) for v in frame[p.target_column]}


def _edges_problem(data: ProblemData, p: _Edges, numbers: list[str], ends: list[str]) -> list[str]:
    reasons = columns_problem(data, p.table, [p.source_column, p.target_column], numeric=False, min_rows=2)
    reasons += columns_problem(data, p.table, numbers) if not reasons and numbers else []
    if reasons:
        return reasons
    nodes = _nodes(data, p)
    return [f"node {e!r} is not in the graph of {p.table}" for e in ends if e not in nodes]


class ShortestPathParams(_Edges):
    family: Literal["shortest_path"] = "shortest_path"
    weight_column: str = Field("", max_length=60, description="边的长度／费用列")
    start: str = Field("", max_length=60, description="起点")
    end: str = Field("", max_length=60, description="终点")


class ShortestPath(_Network):
    name = "shortest_path"
    group = "network"
    title = ("Shortest path (Dijkstra)", "最短路径（Dijkstra）")
    aliases = ("Dijkstra",)
    answers = frozenset({"policy", "number"})
    measures = frozenset({"distance"})
    Params = ShortestPathParams
    outputs = ("path", "length")
    subject = (
        *_GRAPH, "path", "route", "road", "distance", "shortest", "travel", "journey", "flight", "trip", "路", "距离",
        "最短", "行程", "航线",
    )  # fmt: skip

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = ShortestPathParams.model_validate(params)
        reasons = _edges_problem(data, p, [p.weight_column] if p.weight_column else [], [p.start, p.end])
        if not reasons and p.weight_column and (data.tables[p.table][p.weight_column] < 0).any():
            reasons.append(f"{p.weight_column} has negative lengths: Dijkstra needs lengths ≥ 0")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        path = " → ".join(result["path"])
        if zh(lang):
            return [
                f"从 {result['start']} 到 {result['end']} 的最短路径：{path}，总长度 {num(result['length'])}（{num(result['hops'])} 段）。"
            ]
        return [f"The shortest path from {result['start']} to {result['end']}: {path}, of total length {num(result['length'])} ({num(result['hops'])} legs)."]  # fmt: skip


class MaxFlowParams(_Edges):
    family: Literal["max_flow"] = "max_flow"
    capacity_column: str = Field("", max_length=60, description="边的容量列")
    source: str = Field("", max_length=60, description="源点")
    sink: str = Field("", max_length=60, description="汇点")


class MaxFlow(_Network):
    name = "max_flow"
    group = "network"
    title = ("Maximum flow and minimum cut", "最大流与最小割")
    answers = frozenset({"number", "policy", "explanation"})
    measures = frozenset({"capacity"})
    Params = MaxFlowParams
    outputs = ("max_flow", "min_cut")
    subject = (
        *_GRAPH, "flow", "capacit", "road", "pipe", "traffic", "throughput", "bottleneck", "vehicles per", "流",
        "通行能力", "容量", "管道", "能通过", "瓶颈", "道路",
    )  # fmt: skip

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = MaxFlowParams.model_validate(params)
        return _edges_problem(data, p, [p.capacity_column], [p.source, p.sink])

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        cut = ", ".join(f"{u}→{v}" for u, v in result["min_cut"])
        if zh(lang):
            return [f"从 {result['source']} 到 {result['sink']} 的最大流为 {num(result['max_flow'])}。", f"限制它的最小割：{cut}（容量合计 {num(result['cut_capacity'])}）。"]  # fmt: skip
        return [f"The maximum flow from {result['source']} to {result['sink']} is {num(result['max_flow'])}.", f"The minimum cut that limits it: {cut} (capacity {num(result['cut_capacity'])})."]  # fmt: skip


class CentralityParams(_Edges):
    family: Literal["centrality"] = "centrality"
    measure: Literal["betweenness", "degree", "pagerank"] = "betweenness"
    top: int = Field(5, ge=1, le=20, description="列出前几名")


class Centrality(_Network):
    name = "centrality"
    group = "network"
    title = ("Network centrality", "网络中心性")
    answers = frozenset({"ranking", "explanation"})
    Params = CentralityParams
    outputs = ("ranking", "scores")
    subject = (*_GRAPH, "road", "junction", "intersection", "hub", "路", "枢纽", "交叉口")

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = CentralityParams.model_validate(params)
        return _edges_problem(data, p, [], [])

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        top = ", ".join(f"{n} ({num(result['scores'][n])})" for n in result["ranking"])
        if zh(lang):
            return [
                f"按 {result['measure']} 中心性，最重要的节点依次为：{top}（共 {num(result['nodes'])} 个节点、{num(result['edges'])} 条边）。"
            ]
        return [f"By {result['measure']} centrality the most central nodes are: {top} (of {num(result['nodes'])} nodes and {num(result['edges'])} edges)."]  # fmt: skip
