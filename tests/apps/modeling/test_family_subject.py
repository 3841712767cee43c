"""A family fits only a problem that names what it models (`Family.subject`): seen on the embedded model, the
modeler chose Lotka–Volterra for a herd's counts by age (age as time, females as prey, males as predators), the
columns checked out, and the gates approved a predator–prey model of one species."""

from __future__ import annotations

import pandas as pd
import pytest

from consulta.apps.modeling.families import FAMILIES, ProblemData

HERD = pd.DataFrame(
    {"age": list(range(15)), "female": [800 - 40 * i for i in range(15)], "male": [700 - 45 * i for i in range(15)]}
)
PARAMS = {
    "family": "lotka_volterra",
    "table": "herd.csv",
    "time_column": "age",
    "prey_column": "female",
    "predator_column": "male",
}


@pytest.mark.parametrize(
    "statement",
    [
        "Task 1: Estimate the survival rate of each age from the two years' counts.",
        "任务一：根据两年的数量估计各年龄的存活率。",
    ],
)
def test_a_predator_prey_model_does_not_fit_a_problem_that_names_no_predator_or_prey(statement: str) -> None:
    data = ProblemData(tables={"herd.csv": HERD}, statement=statement)
    (reason,) = FAMILIES["lotka_volterra"].supports(data, PARAMS)
    assert "names none of what Lotka–Volterra" in reason


@pytest.mark.parametrize(
    "statement", ["Lynx (predator) and hare (prey) counts over 15 years.", "猞猁捕食野兔：15 年的数量。"]
)
def test_a_problem_that_names_them_is_checked_on_its_data(statement: str) -> None:
    data = ProblemData(tables={"herd.csv": HERD}, statement=statement)
    assert FAMILIES["lotka_volterra"].supports(data, PARAMS) == FAMILIES["lotka_volterra"].check(data, PARAMS)


def test_families_without_a_subject_are_decided_by_their_data() -> None:
    assert FAMILIES["linear_programme"].subject == () and FAMILIES["lotka_volterra"].subject
