"""The library of model families the modeler chooses from, one per task: each family is one contract (`Family`): the
typed parameters it needs from the data and the statement (`Params`), a `check` that says in words why the data or
the statement do not support it, a script (`scripts/family_<name>.py`, run in the sandbox like the templates) that
writes `results/<out>.json` and `figures/<out>.png`, and the `sentences` code can say about that JSON.

Groups: structured populations (`leslie`), ODE systems (`lotka_volterra`, `pharmacokinetics`, `sir`), optimisation
(`linear_programme`, `assignment`, `transport`), networks (`shortest_path`, `max_flow`, `centrality`), stochastic
models (`markov_chain`, `queue`, `monte_carlo`), evaluation and decision (`ahp`, `topsis`, `entropy_weight`,
`grey_relational`), statistics and forecasting (`gm11`, `kmeans`, `regression`, `time_series`).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter, ValidationError

from .._tasks import horizon_of, measure_of
from ._base import GROUPS, SCRIPTS, Family, FamilyParams, Group, ProblemData, num, stated, stated_near, without_unit
from ._evaluation import (
    Ahp,
    AhpParams,
    EntropyWeight,
    EntropyWeightParams,
    GreyRelational,
    GreyRelationalParams,
    Topsis,
    TopsisParams,
    stated_costs,
    with_ahp_weights,
)
from ._networks import (
    Centrality,
    CentralityParams,
    MaxFlow,
    MaxFlowParams,
    ShortestPath,
    ShortestPathParams,
    stated_direction,
)
from ._ode import LotkaVolterra, LotkaVolterraParams, Pharmacokinetics, PharmacokineticsParams, Sir, SirParams
from ._optimisation import (
    Assignment,
    AssignmentParams,
    LinearProgramme,
    LinearProgrammeParams,
    Transport,
    TransportParams,
)
from ._population import Leslie, LeslieParams
from ._statistics import (
    Gm11,
    Gm11Params,
    KMeansClusters,
    KMeansParams,
    Regression,
    RegressionParams,
    TimeSeries,
    TimeSeriesParams,
)
from ._stochastic import MarkovChain, MarkovChainParams, MonteCarlo, MonteCarloParams, Queue, QueueParams

__all__ = [
    "FAMILIES",
    "GROUPS",
    "SCRIPTS",
    "Family",
    "FamilyChoice",
    "FamilyParams",
    "Group",
    "ProblemData",
    "choice_type",
    "family_named",
    "fitting",
    "measure_misfit",
    "num",
    "parse_choice",
    "as_stated",
    "stated",
    "with_ahp_weights",
    "without_unit",
]

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Leslie(),
        LotkaVolterra(),
        Pharmacokinetics(),
        Sir(),
        LinearProgramme(),
        Assignment(),
        Transport(),
        ShortestPath(),
        MaxFlow(),
        Centrality(),
        MarkovChain(),
        Queue(),
        MonteCarlo(),
        Ahp(),
        Topsis(),
        EntropyWeight(),
        GreyRelational(),
        Gm11(),
        KMeansClusters(),
        Regression(),
        TimeSeries(),
    )  # fmt: skip
}
"""Every family by name, in the order of their groups."""

FamilyChoice = Annotated[
    LeslieParams
    | LotkaVolterraParams
    | PharmacokineticsParams
    | SirParams
    | LinearProgrammeParams
    | AssignmentParams
    | TransportParams
    | ShortestPathParams
    | MaxFlowParams
    | CentralityParams
    | MarkovChainParams
    | QueueParams
    | MonteCarloParams
    | AhpParams
    | TopsisParams
    | EntropyWeightParams
    | GreyRelationalParams
    | Gm11Params
    | KMeansParams
    | RegressionParams
    | TimeSeriesParams,
    Field(discriminator="family"),
]
"""One task's choice: a family's parameters, told apart by `family` (the union's discriminator)."""
_CHOICE: TypeAdapter[Any] = TypeAdapter(FamilyChoice)


def family_named(name: str) -> Family:
    """The family called `name` (KeyError naming the families when there is none)."""
    if name not in FAMILIES:
        raise KeyError(f"No model family {name!r}; the families: {', '.join(FAMILIES)}.")
    return FAMILIES[name]


def parse_choice(value: Any) -> FamilyParams:
    """A choice (a dict, e.g. from a model's JSON) as its family's parameters; pydantic's ValidationError otherwise."""
    choice = _CHOICE.validate_python(value)
    assert isinstance(choice, FamilyParams)
    return choice


def fitting(asks: str) -> tuple[str, ...]:
    """The families that can answer a task asking for `asks` (every family when none says it can)."""
    names = tuple(n for n, f in FAMILIES.items() if asks in f.answers)
    return names or tuple(FAMILIES)


def as_stated(params: FamilyParams, data: ProblemData, *, task: str = "") -> FamilyParams:
    """`params` with what code reads from the statement in place of the modeler's guess: a network's direction
    (`stated_direction`), an evaluation's cost criteria (`stated_costs`), the family's `stated_only` parameters
    the statement does not state (their default: code finds them from the data) and the periods ahead that the
    task's text (`task`) states (`_tasks.horizon_of`, into the family's `horizon`)."""
    table = data.tables.get(params.table)
    columns = tuple(map(str, table.columns)) if table is not None else ()
    params = stated_costs(stated_direction(params, data), data.statement, columns)
    family = family_named(params.family)
    fixes: dict[str, Any] = {
        name: type(params).model_fields[name].default
        for name, words in family.stated_only.items()
        if getattr(params, name) and not stated_near(data.statement, getattr(params, name), words)
    }
    ahead = horizon_of(task) if family.horizon else None
    if ahead is not None:
        fixes[family.horizon] = ahead
    fixes = {k: v for k, v in fixes.items() if getattr(params, k) != v}
    if not fixes:
        return params
    try:  # within the parameter's bounds, else the modeler's value stands
        return type(params).model_validate({**params.model_dump(), **fixes})
    except ValidationError:
        fixes.pop(family.horizon, None)
        return type(params).model_validate({**params.model_dump(), **fixes}) if fixes else params


_MEASURE_WORDS = {
    "capacity": "a capacity (the most that can pass through the network: a maximum flow)",
    "distance": "a distance or a route (the length of a way through the network: a shortest path)",
}


def measure_misfit(name: str, task_text: str) -> str:
    """Why family `name` does not give the quantity the task asks for (`_tasks.measure_of`: a capacity, a distance),
    naming the families that do; "" when it gives it, or either side does not tell them apart."""
    measure = measure_of(task_text)
    family = FAMILIES[name]
    if measure is None or not family.measures or measure in family.measures:
        return ""
    gives = " or ".join(_MEASURE_WORDS[m].split(" (")[0] for m in sorted(family.measures))
    fits = ", ".join(n for n, f in FAMILIES.items() if measure in f.measures)
    return f"the task asks for {_MEASURE_WORDS[measure]}; {name} gives {gives}: choose {fits}"


@cache
def choice_type(names: tuple[str, ...]) -> Any:
    """The union of these families' parameters (discriminated by `family`): the grammar a modeler's choice for a
    task is generated under, so it can name no other family and no field a family lacks."""
    params = tuple(family_named(n).Params for n in names)
    if len(params) == 1:
        return params[0]
    return Annotated[Union[params], Field(discriminator="family")]  # noqa: UP007
