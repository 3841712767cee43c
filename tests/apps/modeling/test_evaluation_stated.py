"""An evaluation's criteria as the statement says them (issue 24): which are costs (better low) code reads from the
statement's words and the criteria's names, the modeler's guess only where neither says anything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from consulta.apps.modeling._task_models import TaskModel, _ahp_results
from consulta.apps.modeling._tasks import Task
from consulta.apps.modeling.families import ProblemData, as_stated, family_named, parse_choice, with_ahp_weights
from consulta.apps.modeling.families._evaluation import TopsisParams

from .test_families import _module

CRITERIA = ["quality", "on_time", "price", "commute_min"]


def _costs(statement: str, guess: list[str], criteria: list[str] = CRITERIA) -> list[str]:
    params = parse_choice({"family": "topsis", "table": "t.csv", "label_column": "name", "criteria": criteria, "cost_criteria": guess})  # fmt: skip
    return as_stated(params, ProblemData(tables={}, statement=statement)).cost_criteria  # type: ignore[attr-defined, no-any-return]


def test_every_criterion_put_among_the_costs_is_read_again_from_the_names() -> None:
    # no direction stated: a price and a time in minutes are costs by their names; quality and punctuality are not
    # said either way, so the modeler's word stands for them
    assert _costs("Suppliers are scored on quality, punctuality and price.", CRITERIA) == CRITERIA
    assert _costs("Suppliers are scored on quality, punctuality and price.", []) == ["price", "commute_min"]


@pytest.mark.parametrize(
    ("statement", "costs"),
    [
        ("Quality (higher is better), on_time (higher is better), price (lower is better), commute_min.",
         ["price", "commute_min"]),
        ("The quality and the on time rate should be high, while the price should be low.", ["price", "commute_min"]),
        ("For quality the lower the defect count, the better.", ["quality", "price", "commute_min"]),
    ],
)  # fmt: skip
def test_the_statement_says_which_criteria_are_costs_in_english(statement: str, costs: list[str]) -> None:
    assert _costs(statement, []) == costs


def test_the_statement_says_which_criteria_are_costs_in_chinese() -> None:
    criteria = ["质量评分", "准时率", "价格（元）", "耗时"]
    statement = "评价指标：质量评分越高越好，准时率越高越好，价格越低越好，耗时越短越好。"
    assert _costs(statement, criteria, criteria) == ["价格（元）", "耗时"]
    # a cost word in the name, said to be better high by the statement: the statement wins
    assert _costs("距离越大越好（隔离带）。", [], ["距离", "质量"]) == []


def test_a_family_without_criteria_is_left_as_it_is() -> None:
    params = parse_choice({"family": "gm11", "table": "t.csv"})
    assert as_stated(params, ProblemData(tables={}, statement="price lower is better")) is params


AHP = {"weights": {"Quality": 0.5, "Price": 0.3, "On_time": 0.2}, "ranking": ["Quality", "Price", "On_time"]}


def _topsis(criteria: list[str]) -> Any:
    return parse_choice({"family": "topsis", "table": "s.csv", "label_column": "name", "criteria": criteria, "cost_criteria": ["price"]})  # fmt: skip


def test_a_topsis_over_the_criteria_an_earlier_ahp_weighed_takes_its_weights(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "task1_ahp.json").write_text(json.dumps(AHP), encoding="utf-8")
    task = Task(number=1, text="Weigh the criteria.", asks="estimate")
    done = [TaskModel(task=task, status="ran", family="ahp", params={"family": "ahp"})]
    found = _ahp_results(tmp_path, done)
    assert list(found) == ["results/task1_ahp.json"]
    params = with_ahp_weights(_topsis(["quality", "on_time", "price"]), found)
    assert params.ahp_weights == {"quality": 0.5, "on_time": 0.2, "price": 0.3}  # type: ignore[attr-defined]
    assert params.weights_from == "results/task1_ahp.json"  # type: ignore[attr-defined]
    assert "ahp_weights" not in json.dumps(TopsisParams.model_json_schema())  # code's to set, not the modeler's
    other = _topsis(["quality", "price"])  # not the criteria the AHP weighed
    assert with_ahp_weights(other, found) is other
    assert _ahp_results(tmp_path, [done[0].model_copy(update={"status": "could_not"})]) == {}


def test_topsis_says_whose_weights_it_used_and_which_criteria_are_costs() -> None:
    frame = pd.DataFrame({"name": ["A", "B", "C"], "quality": [9.0, 7.0, 8.0], "on_time": [0.9, 0.95, 0.8],
                          "price": [120.0, 90.0, 100.0]})  # fmt: skip
    params = with_ahp_weights(_topsis(["quality", "on_time", "price"]), {"results/task1_ahp.json": AHP})
    result = _module("topsis").solve({**params.model_dump(), "out": "t"}, {"s.csv": frame})
    assert result["weighting"] == "ahp" and result["weights"] == pytest.approx({"quality": 0.5, "on_time": 0.2, "price": 0.3})  # fmt: skip
    en = family_named("topsis").sentences(result, lang="en")
    assert en[0].startswith("Criteria weights (the AHP's, from `results/task1_ahp.json`): quality 0.5")
    assert en[1] == "Cost criteria (smaller is better): price."
    zh = family_named("topsis").sentences(result, lang="zh-CN")
    assert "层次分析法" in zh[0] and zh[1] == "成本型指标（越小越好）：price。"
    plain = _module("topsis").solve({**_topsis(["quality", "price"]).model_dump(), "out": "t"}, {"s.csv": frame})
    assert plain["weighting"] == "entropy" and "weights_from" not in plain
    assert family_named("topsis").sentences(plain, lang="en")[0].startswith("Criteria weights (entropy weights):")


def test_a_ranking_after_an_ahp_is_offered_only_what_takes_its_weights() -> None:
    """Seen on the embedded model (fleet_ahp_en): task 1 weighed the criteria by AHP, and task 2 "Rank the four
    cars" was ranked by entropy weights, ignoring them; after a task chose an AHP, the ranking's menu is TOPSIS
    alone (it takes the AHP's weights), and without one it is as before."""
    from consulta.apps.modeling._task_models import _menu_names

    cars = pd.DataFrame({"car": ["A", "B", "C"], "cost": [10, 12, 9], "safety": [3, 4, 5], "comfort": [2, 3, 4]})
    data = ProblemData(tables={"cars.csv": cars}, statement="Task 1: weigh the criteria. Task 2: Rank the cars.")
    task = Task(number=2, text="Rank the cars.", asks="ranking")
    before = _menu_names(task, data)
    assert len(before) > 1 and "topsis" in before
    assert _menu_names(task, data, frozenset({"ahp"})) == ("topsis",)
    assert _menu_names(task, data, frozenset({"kmeans"})) == before


def test_a_direction_said_after_a_list_of_criteria_is_the_named_ones_and_the_rest_take_the_others() -> None:
    """Seen on the embedded model (suppliers_eval_zh): "质量得分、准时率、单价和服务评分（…），单价越低越好，其余越高越好"
    made quality, punctuality and service costs (the price's "越低" read as theirs) and the price, named "单价_元" in
    the data, a benefit."""
    criteria = ["质量得分", "准时率", "单价_元", "服务评分"]
    statement = "企业收集了六家供应商的质量得分、准时率、单价和服务评分（`供应商.csv`），单价越低越好，其余越高越好。"
    assert _costs(statement, ["质量得分", "准时率", "服务评分"], criteria) == ["单价_元"]
    english = "Each supplier has quality, on_time, price_usd and service; price is better lower, the others higher."
    assert _costs(english, ["quality"], ["quality", "on_time", "price_usd", "service"]) == ["price_usd"]
    rest_low = "质量、单价和工期：质量越高越好，其余越低越好。"
    assert _costs(rest_low, [], ["质量", "单价_元", "工期_天"]) == ["单价_元", "工期_天"]


def test_a_direction_word_belongs_to_a_column_of_the_table_even_when_the_task_leaves_it_out() -> None:
    """Seen on the embedded model (suppliers_eval_zh, task 1 weighing quality, punctuality and service only): "…单价和
    服务评分（…），单价越低越好，其余越高越好" made service a cost: the price, not among the task's criteria, was not
    seen as the owner of "越低"."""
    table = pd.DataFrame({"供应商": ["S1", "S2", "S3"], "质量得分": [92, 85, 78], "准时率": [0.9, 0.8, 0.7],
                          "单价_元": [120, 105, 98], "服务评分": [8.5, 7.9, 7.0]})  # fmt: skip
    statement = "企业收集了六家供应商的质量得分、准时率、单价和服务评分（`供应商.csv`），单价越低越好，其余越高越好。"
    choice = {"family": "entropy_weight", "table": "供应商.csv", "label_column": "供应商",
              "criteria": ["质量得分", "准时率", "服务评分"], "cost_criteria": ["服务评分"]}  # fmt: skip
    params = as_stated(parse_choice(choice), ProblemData(tables={"供应商.csv": table}, statement=statement))
    assert params.cost_criteria == []  # type: ignore[attr-defined]
