"""A family's numbers as the statement and the task say them (issue 24): how far ahead a task asks ("10 年后", "3 days
after") sets the family's horizon, and a parameter the data give (a Leslie fecundity, a clustering's number of groups)
is not the modeler's to guess: a value the statement does not state gives way to code's estimate."""

from __future__ import annotations

from typing import Any

import pytest

from consulta.apps.modeling._tasks import horizon_of
from consulta.apps.modeling.families import ProblemData, as_stated, parse_choice, stated

DEER = "雌鹿从 2 岁开始繁殖（`鹿群_2022.csv`、`鹿群_2023.csv`）。\n任务一：估计存活率。\n任务二：预测 10 年后的总数。\n任务三：保持在 3000 只左右。"
LESLIE = {"family": "leslie", "table": "鹿群_2022.csv", "next_table": "鹿群_2023.csv", "age_column": "年龄",
          "count_column": "雌鹿数量", "breeding_age": 2, "target": 3000}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "ahead"),
    [
        ("预测不加管理时 10 年后鹿群的总数。", 10),
        ("预测未来 3 年的粮食产量。", 3),
        ("Forecast the chance of each kind of weather 3 days after the last day.", 3),
        ("How many tonnes should it hold so that 30 days' demand exceeds it with probability at most 5%?", 30),
        ("Forecast sales for the next 12 months.", 12),
        ("某县 2016—2023 年的粮食产量。", None),  # calendar years count no periods
        ("估计产量的年增长率。", None),
        ("雌鹿从 2 岁开始繁殖。", None),  # an age is no horizon
        ("Compare the 5-day and the 10-day forecasts.", None),  # two: the task does not say which
    ],
)
def test_a_task_says_how_many_periods_ahead_it_asks_about(text: str, ahead: int | None) -> None:
    assert horizon_of(text) == ahead


def _leslie(task: str, **guess: Any) -> Any:
    return as_stated(parse_choice({**LESLIE, **guess}), ProblemData(tables={}, statement=DEER), task=task)


def test_the_task_sets_the_projection_years_and_a_fecundity_nobody_stated_is_estimated() -> None:
    # seen on the embedded model: years 2 for "10 年后", fecundities 50, 1 and 10 for one herd whose data give 0.9
    params = _leslie("预测不加管理时 10 年后鹿群的总数。", years=2, fecundity=50)
    assert params.years == 10
    assert params.fecundity == 0  # 0: the script estimates it from the two years' counts
    # a task stating no horizon keeps the modeler's years; a fecundity the statement states is kept
    params = as_stated(
        parse_choice({**LESLIE, "years": 4, "fecundity": 0.9}),
        ProblemData(tables={}, statement=DEER + "每只繁殖雌鹿每年产仔 0.9 只。"),
        task="估计存活率。",
    )
    assert (params.years, params.fecundity) == (4, 0.9)  # type: ignore[attr-defined]
    # a number the statement states for something else is no fecundity (seen: 10, the statement's "10 年后")
    assert _leslie("每年应捕获多少只鹿？", fecundity=10).fecundity == 0


def test_a_horizon_beyond_the_parameters_bounds_leaves_the_modelers_value() -> None:
    params = as_stated(
        parse_choice({"family": "gm11", "table": "t.csv", "horizon": 3}),
        ProblemData(tables={}, statement="Output per year."),
        task="Forecast the next 50 years.",  # gm11 looks at most 20 periods ahead
    )
    assert params.horizon == 3  # type: ignore[attr-defined]


def test_a_number_of_groups_the_statement_does_not_state_is_left_to_the_data() -> None:
    statement = "A shop has 180 customers.\nTask 1: How many customer groups are there?\nTask 2: Spend by age."
    for k in (2, 3):  # "Task 2" states no 2
        params = parse_choice({"family": "kmeans", "table": "c.csv", "columns": ["age"], "k": k})
        assert as_stated(params, ProblemData(tables={}, statement=statement)).k == 0  # type: ignore[attr-defined]
    params = parse_choice({"family": "kmeans", "table": "c.csv", "columns": ["age"], "k": 4})
    said = ProblemData(tables={}, statement="Split the customers into 4 groups.")
    assert as_stated(params, said).k == 4  # type: ignore[attr-defined]


def test_a_tasks_own_number_states_nothing() -> None:
    assert not stated("Task 2: how many groups?\n任务3：排序。问题 4：多少？", 2)
    assert not stated("任务3：排序。", 3)
    assert stated("Task 2: hold 2 weeks of stock.", 2)
