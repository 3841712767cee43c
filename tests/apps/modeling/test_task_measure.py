"""A network task's quantity (issue 24): a capacity ("how many cars per minute at most") is a maximum flow's, a
distance or a route a shortest path's; the menu, the check of the modeler's choice and the gate each hold to it. A network's links go one way only when
the statement says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from consulta.apps.modeling._task_models import TaskModel, _menu_names, check_task_models, record
from consulta.apps.modeling._tasks import Task, measure_of, statement_tasks
from consulta.apps.modeling.families import ProblemData, measure_misfit, parse_choice
from consulta.apps.modeling.families._networks import stated_direction

ROADS = pd.DataFrame({"起点": ["A", "A", "B", "C", "B"], "终点": ["B", "C", "D", "D", "C"],
                      "距离_km": [4.0, 2.0, 5.0, 8.0, 1.0], "通行能力": [30, 20, 25, 15, 10]})  # fmt: skip
STATEMENT_ZH = (
    "某城市的道路网络见 `道路.csv`（每条道路的起点、终点、距离和通行能力，单位：辆/分钟）。\n\n"
    "任务一：求从 A 到 D 的最短路径及其长度。\n任务二：从 A 到 D 每分钟最多能通过多少辆车？\n"
)


@pytest.mark.parametrize(
    ("text", "measure"),
    [
        ("从 A 到 D 每分钟最多能通过多少辆车？", "capacity"),
        ("How many cars per minute at most can get from A to D?", "capacity"),
        ("Find the maximum flow of water from the reservoir to the town.", "capacity"),
        ("What is the throughput of the network, and where is its bottleneck?", "capacity"),
        ("求道路网的通行能力。", "capacity"),
        ("求从 A 到 D 的最短路径及其长度。", "distance"),
        ("Find the shortest route from the depot to the shop.", "distance"),
        ("How far is the shop from the depot by road?", "distance"),
        ("Rank the junctions by importance.", None),
        ("How many animals will there be in 2030?", None),
    ],
)
def test_the_task_says_whether_it_asks_a_capacity_or_a_distance(text: str, measure: str | None) -> None:
    assert measure_of(text) == measure


def test_a_shortest_path_for_a_capacity_is_refused_naming_max_flow_and_the_reverse() -> None:
    capacity, distance = "每分钟最多能通过多少辆车？", "Find the shortest route from A to D."
    assert "choose max_flow" in measure_misfit("shortest_path", capacity)
    assert "capacity" in measure_misfit("shortest_path", capacity)
    assert "choose shortest_path" in measure_misfit("max_flow", distance)
    assert measure_misfit("max_flow", capacity) == measure_misfit("shortest_path", distance) == ""
    assert measure_misfit("centrality", capacity) == ""  # a family that does not tell them apart


def test_the_menu_offers_each_task_the_family_of_its_quantity() -> None:
    data = ProblemData(tables={"道路.csv": ROADS}, statement=STATEMENT_ZH)
    route, flow = statement_tasks(STATEMENT_ZH)
    assert "shortest_path" in _menu_names(route, data) and "max_flow" not in _menu_names(route, data)
    assert "max_flow" in _menu_names(flow, data) and "shortest_path" not in _menu_names(flow, data)


def test_the_gate_rejects_a_shortest_path_that_ran_for_a_capacity(tmp_path: Path) -> None:
    task = Task(number=2, text="从 A 到 D 每分钟最多能通过多少辆车？", asks="policy")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "task2_shortest_path.json").write_text(json.dumps({"path": ["A", "D"]}), encoding="utf-8")
    model = TaskModel(task=task, status="ran", family="shortest_path", params={"family": "shortest_path"})

    class _Recorder:
        ws = tmp_path

        def _note(self, key: str, lines: list[Any]) -> None:
            pass

    record(_Recorder(), [model])  # type: ignore[arg-type]
    failures = check_task_models(tmp_path)
    assert [f.check for f in failures] == ["family_fits_task"] and "choose max_flow" in failures[0].message


@pytest.mark.parametrize(
    ("statement", "directed"),
    [
        ("某城市的道路网络见 `道路.csv`。", False),
        ("The roads of `roads.csv` link the junctions.", False),
        ("The streets of `roads.csv` are one-way, from the first junction to the second.", True),
        ("每条道路均为单向通行。", True),
        ("管网是一个有向图。", True),
        ("The network is a directed graph of pipes.", True),
        ("The network is an undirected graph of pipes.", False),
        ("道路为无向（双向通行）。", False),
        ("Each street is traffic in the direction from the first junction to the second.", True),
    ],
)
def test_a_network_goes_one_way_when_the_statement_says_so_whatever_the_modeler_guessed(
    statement: str, directed: bool
) -> None:
    ends = {"table": "道路.csv", "source_column": "起点", "target_column": "终点"}
    data = ProblemData(tables={"道路.csv": ROADS}, statement=statement)
    for family, guess in (("shortest_path", not directed), ("max_flow", not directed), ("centrality", not directed)):
        params = parse_choice({"family": family, **ends, "directed": guess})
        assert stated_direction(params, data).directed is directed  # type: ignore[attr-defined]
    topsis = parse_choice({"family": "topsis", "table": "t.csv"})
    assert stated_direction(topsis, data) is topsis  # no network: as it was


def test_a_direction_said_of_one_quantity_holds_for_the_family_that_reads_it() -> None:
    statement = "道路见 `道路.csv`（距离与每分钟的通行能力，通行能力按起点到终点的方向）。"
    data = ProblemData(tables={"道路.csv": ROADS}, statement=statement)
    ends = {"table": "道路.csv", "source_column": "起点", "target_column": "终点"}
    flow = parse_choice({"family": "max_flow", **ends, "capacity_column": "通行能力"})
    path = parse_choice({"family": "shortest_path", **ends, "weight_column": "距离_km", "directed": True})
    assert stated_direction(flow, data).directed is True  # type: ignore[attr-defined]
    assert stated_direction(path, data).directed is False  # type: ignore[attr-defined]
