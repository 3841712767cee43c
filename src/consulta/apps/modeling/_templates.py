"""The team's code when the model's does not do: template scripts (real Python files in `scripts/`, which a reader
can open, lint and run) chosen by the data's shape and filled with the plan (`_plan`).

Three kinds of model, chosen from the data's shape (`_shape.DataShape.kind`):
- `epidemic` (a column of new case counts): an SIR model fitted to the reported new cases by least squares;
- `forecast` (a time column whose values are (nearly) unique: a series): a linear model of trend, season and
  covariates, fitted with a holdout of the last periods, then refitted and projected with a 95 % interval;
- `regression` (anything else: rows are units, not times): a linear model of the target on the covariates (numeric,
  and categorical ones as indicator columns), with standard errors, a seeded random holdout of rows, each
  covariate's unique share of the explained variance (its importance), and the prediction, with its 95 % interval,
  for a case the problem gives (the modeler's values, each checked against the statement and the data).
Each is four scripts, each run in the sandbox by its phase: `code/clean_data.py` (`scripts/clean_data.py`:
problem/*.csv → data/*.csv, duplicates dropped, sorted, gaps in numbers interpolated), `code/model.py`
(`scripts/<kind>_model.py`: the model as functions; run alone, it checks itself on the data), `code/train.py`
(`scripts/<kind>_train.py`: results/*.csv and figures/fit.png) and `code/figures.py` (`scripts/<kind>_figures.py`:
the result figures). A template reads its plan from the line `PLAN = json.loads("{}")`, which `script` fills.
Every number the scripts write is rounded to 2 decimals, so the paper can quote the files exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from ._plan import Plan
from ._shape import ModelKind

__all__ = ["KINDS", "SCRIPTS", "KindSpec", "ScriptName", "script", "template_path"]

ScriptName = Literal["clean_data", "model", "train", "figures"]
SCRIPTS = Path(__file__).with_name("scripts")
"""The template scripts: `clean_data.py` (every kind's) and `<kind>_<name>.py`."""
_PLAN_LINE = 'PLAN = json.loads("{}")'


@dataclass(frozen=True, kw_only=True)
class KindSpec:
    """What the Director tells the team and the paper about one kind of model (its scripts are `template_path`)."""

    formula: str
    """The model in LaTeX, for the paper."""
    functions: frozenset[str]
    """What `code/model.py` must define for `code/train.py` (a code translator's draft is checked against it)."""
    figures: tuple[str, str]
    """The two figures the scripts make, in the order the paper shows them (and the visualizer captions them)."""
    figure_words: str
    """The two figures, as the visualizer is told."""
    holdout_words: str
    """What the model trainer's `holdout` counts, as it is told."""


KINDS: dict[ModelKind, KindSpec] = {
    "forecast": KindSpec(
        formula=r"y_t = \beta_0 + \beta_1 t + \sum_{s} \gamma_s D_{s,t} + \sum_{j} \delta_j x_{j,t} + \varepsilon_t",
        functions=frozenset({"fit", "predict", "terms"}), figures=("fit.png", "forecast.png"), figure_words="拟合图、预测图",
        holdout_words="检验期的期数（holdout，最后几期）",
    ),
    "epidemic": KindSpec(
        formula=r"S_{t+1} = S_t - \beta S_t I_t / N, \quad I_{t+1} = I_t + \beta S_t I_t / N - \gamma I_t, \quad R_0 = \beta / \gamma",
        functions=frozenset({"fit", "simulate"}), figures=("fit.png", "forecast.png"), figure_words="拟合图、预测图", holdout_words="检验期的期数（holdout）",
    ),
    "regression": KindSpec(
        formula=r"y_i = \beta_0 + \sum_{j} \beta_j x_{ij} + \varepsilon_i, \quad \varepsilon_i \sim N(0, \sigma^2)",
        functions=frozenset({"design", "fit", "predict", "terms"}), figures=("fit.png", "effects.png"),
        figure_words="检验集上预测值对实际值的散点图、各解释变量的重要性条形图", holdout_words="随机留出检验的行数（holdout）",
    ),
}  # fmt: skip


def template_path(name: ScriptName, kind: ModelKind) -> Path:
    """The template file of `code/<name>.py` for a model of `kind`."""
    return SCRIPTS / ("clean_data.py" if name == "clean_data" else f"{kind}_{name}.py")


@cache
def _template(path: Path) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.partition(_PLAN_LINE)
    if not sep:
        raise ValueError(f"{path} has no line {_PLAN_LINE!r} to write the plan into.")
    return head, tail.partition("\n")[2]


def script(name: ScriptName, plan: Plan) -> str:
    """The source of `code/<name>.py` for `plan`: its template with the plan written into its `PLAN` line."""
    head, tail = _template(template_path(name, plan.kind))
    data = json.dumps(plan.model_dump(), ensure_ascii=False)
    return f"{head}PLAN = json.loads({data!r})\n{tail}"
