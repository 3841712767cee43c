"""An evaluation's criteria as the statement says them (issue 24): which are costs (better low) code reads from the
statement's words and the criteria's names, the modeler's guess only where neither says anything."""

from __future__ import annotations

import pytest

from consulta.apps.modeling.families import as_stated, parse_choice

CRITERIA = ["quality", "on_time", "price", "commute_min"]


def _costs(statement: str, guess: list[str], criteria: list[str] = CRITERIA) -> list[str]:
    params = parse_choice({"family": "topsis", "table": "t.csv", "label_column": "name", "criteria": criteria, "cost_criteria": guess})  # fmt: skip
    return as_stated(params, statement).cost_criteria  # type: ignore[attr-defined, no-any-return]


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
    assert as_stated(params, "price lower is better") is params
