"""The families offered for a task leave out those whose subject the statement never names: seen on the embedded
model (bench/results/modeling_eval.furniture_lp_en.f54723b.json), a workshop's production plan got a Leslie matrix
for both tasks, the menu's first family, with `profit` as the age column."""

from __future__ import annotations

import pandas as pd

from consulta.apps.modeling._task_models import _menu_names
from consulta.apps.modeling._tasks import statement_tasks
from consulta.apps.modeling.families import FAMILIES, ProblemData, fitting

WORKSHOP = (
    "## Background\nA workshop makes four products (`products.csv`). Each week it has 12 m3 of wood and 400 labour "
    "hours; management wants the most profit.\n\n## Tasks\nTask 1: Propose a weekly production plan that maximises profit.\n"
)
PRODUCTS = pd.DataFrame({"product": ["chair", "table", "desk"], "profit": [45, 80, 120], "wood_m3": [0.05, 0.15, 0.2]})


def test_a_production_plan_is_offered_no_leslie_matrix_nor_a_network_or_a_queue() -> None:
    (task,) = statement_tasks(WORKSHOP)
    menu = _menu_names(task, ProblemData(tables={"products.csv": PRODUCTS}, statement=WORKSHOP))
    assert menu[0] == "linear_programme"
    assert not {"leslie", "shortest_path", "max_flow", "queue"} & set(menu)
    assert set(menu) <= set(fitting(task.asks))


def test_an_age_structured_herd_is_offered_the_leslie_matrix_first() -> None:
    statement = "Task 1: Propose a yearly policy for the herd (counts by age)."
    (task,) = statement_tasks(statement)
    assert _menu_names(task, ProblemData(tables={}, statement=statement))[0] == "leslie"
    assert FAMILIES["leslie"].named_in("任务一：根据各年龄的雌鹿数量给出管理方案。")


def test_a_latin_subject_word_matches_at_a_words_start_only() -> None:
    leslie = FAMILIES["leslie"]
    assert not leslie.named_in("Management of the average storage usage.")  # "age" inside other words
    assert leslie.named_in("The ages of the animals") and FAMILIES["sir"].named_in("An INFECTION spreads")


def test_a_statement_that_names_no_subject_is_offered_every_family_that_answers() -> None:
    (task,) = statement_tasks("Task 1: How many?")
    data = ProblemData(tables={}, statement="Task 1: How many?")
    assert set(_menu_names(task, data)) == {n for n in fitting(task.asks) if not FAMILIES[n].subject}


def test_a_column_that_is_no_run_of_ages_is_no_leslie_age_column() -> None:
    statement = "Task 1: Propose a yearly management policy for the herd."
    params = {"family": "leslie", "table": "t.csv", "age_column": "profit", "count_column": "wood_m3"}
    data = ProblemData(tables={"t.csv": PRODUCTS}, statement=statement)
    (reason,) = FAMILIES["leslie"].supports(data, params)
    assert "no data file has the shape" in reason and "run of whole-number ages" in reason  # no table is one
    (reason,) = FAMILIES["leslie"].check(data, params)
    assert "not a run of ages" in reason
    herd = pd.DataFrame({"age": [0, 1, 2, 3, 5, 6, 7], "female": [400, 360, 330, 300, 250, 220, 200]})  # age 4 missing
    params = {**params, "age_column": "age", "count_column": "female"}
    assert FAMILIES["leslie"].supports(ProblemData(tables={"t.csv": herd}, statement=statement), params) == []


def test_a_reason_is_given_once_when_the_same_table_is_named_twice() -> None:
    # seen on the embedded model: "products.csv has no column 'age', 'count'" twice in the paper's section
    params = {
        "family": "leslie",
        "table": "t.csv",
        "next_table": "t.csv",
        "age_column": "years",
        "count_column": "count",
    }
    herd = pd.DataFrame({"age": [0, 1, 2, 3], "female": [400, 360, 330, 300]})
    data = ProblemData(tables={"t.csv": herd}, statement="Task 1: the herd by age.")
    (reason,) = FAMILIES["leslie"].supports(data, params)
    assert "no column 'years', 'count'" in reason
