"""A model family per task (issue 24): for each task the statement poses (`_tasks.statement_tasks`), the modeler
chooses a family of the library (`families`) with its parameters — a typed choice whose grammar offers only the
families that can give what the task asks for and that the data's shape and the statement's words point to, the
likeliest first (`_menu_names`) — and code checks that the data and the statement support it. A choice code turns
down goes back to the modeler once with the reasons and the family code offers instead (`_offer`); a second one that
fails makes the task "could not", with the reasons. A chosen family's script runs in the sandbox (`code/task<n>_<family>.py`, writing
`results/task<n>_<family>.json` and `figures/task<n>_<family>.png`); one that fails is set aside with its error.
The paper's section of each task is code's sentences from that JSON, or why it could not (`task_answer`).

Every decision is on record in the Director's memo (`notes.task_models`): the eval and the gates read it."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Literal, Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ._checks import CheckFailure
from ._files import write_atomic
from ._tasks import Task, TaskAnswer
from ._team import TeamAnswer
from .families import (
    FAMILIES,
    SCRIPTS,
    Family,
    FamilyParams,
    ProblemData,
    as_stated,
    choice_type,
    family_named,
    fitting,
    measure_misfit,
    parse_choice,
    with_ahp_weights,
    without_unit,
)


class Director(Protocol):
    """What choosing and running the tasks' models needs of the Director (`_director.Director`): a member's turn, the
    workspace, why an answer did not fit, and its script and note records."""

    ws: Path
    unfit: dict[str, str]

    async def turn(
        self, agent: str, mode: Any, *, step: str, task: str, prompt: str, output: type[TeamAnswer] | None = None
    ) -> TeamAnswer: ...

    def _write_script(self, name: str, source: str, *, origin: str) -> None: ...

    def _note(self, key: str, lines: list[str]) -> None: ...


__all__ = [
    "TaskModel",
    "check_task_models",
    "choose_models",
    "models_not_run",
    "models_run",
    "record",
    "recorded",
    "run_task_models",
    "task_answer",
]

NOTE = "task_models"
"""The memo's note holding each task's `TaskModel`."""


class TaskModel(BaseModel):
    """What the team did for one task: the family chosen and its parameters, or why it could not."""

    task: Task
    status: Literal["chosen", "ran", "could_not"]
    family: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    reasons: list[str] = Field(default_factory=list)
    """Why it could not (the checks' words, or the script's error)."""
    tries: int = 0
    offered: list[str] = Field(default_factory=list)
    """The families the menu offered, the likeliest first (on record: was the choice code's first?)."""

    @property
    def out(self) -> str:
        return f"task{self.task.number}_{self.family}"


def _required_choice(schema: dict[str, Any]) -> None:
    """The grammar must write a choice (the default None stands only for an answer that never fitted its form)."""
    schema["required"] = sorted({*schema.get("required", []), "choice"})
    choice = schema.get("properties", {}).get("choice", {})
    choice.pop("default", None)
    if "anyOf" in choice:
        choice["anyOf"] = [a for a in choice["anyOf"] if a.get("type") != "null"]
        if len(choice["anyOf"]) == 1:
            choice.update(choice.pop("anyOf")[0])


class _ChoiceBase(TeamAnswer):
    model_config = ConfigDict(extra="ignore", json_schema_extra=_required_choice)


def _choice_form(names: tuple[str, ...]) -> type[TeamAnswer]:
    """The modeler's answer for one task: the family's parameters (only these families), and why it fits."""
    model: type[TeamAnswer] = create_model(
        "FamilyChoiceWork",
        __base__=_ChoiceBase,
        why=(str, Field("", max_length=120, description="为什么这个模型能回答这一问")),
        choice=(choice_type(names) | None, Field(None, description="选用的模型及其参数（family 为模型名）")),
    )
    return model


def _menu_names(task: Task, data: ProblemData, earlier: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The families offered for `task`, the likeliest first (seen on the embedded model: a small model takes the
    menu's first family, a Leslie matrix for a workshop's production plan): of those that answer what it asks (and
    give the quantity it asks for: a capacity, a distance; `measure_misfit`), the
    ones some table has the shape for, less those whose subject the statement never names (code would turn them
    down), less those the statement uses no word of when some it does; ranked by the words of the task, then of the
    whole statement (the library's order on a tie), less those with under half the first one's words (a task's word
    counting twice: an assignment for a production plan that shares only "maximise" with it). After an earlier
    task chose a family (`earlier`) whose result gives weights, only the families taking them (`weighed_by`; seen on
    the embedded model: "Rank the four cars" after an AHP weighed the criteria, ranked by entropy weights instead).
    Each filter is skipped when it would leave nothing."""
    names = fitting(task.asks)
    names = tuple(n for n in names if FAMILIES[n].weighed_by & earlier) or names
    names = tuple(n for n in names if not measure_misfit(n, task.text)) or names
    names = tuple(n for n in names if not FAMILIES[n].data_misfit(data)) or names
    names = tuple(n for n in names if FAMILIES[n].named_in(data.statement)) or names
    names = tuple(n for n in names if FAMILIES[n].cue_hits(data.statement)) or names
    score = {n: _score(FAMILIES[n], task, data.statement) for n in names}
    ranked = sorted(names, key=score.__getitem__, reverse=True)  # a stable sort: ties keep the library's order
    weight = {n: 2 * score[n][0] + score[n][1] for n in ranked}
    return tuple(n for n in ranked if 2 * weight[n] >= weight[ranked[0]])  # far behind the first: not offered


def _score(family: Family, task: Task, statement: str) -> tuple[int, int]:
    """How strongly the words point to `family` for `task`: the task's words it has, one more for a family of a
    field the statement names (a herd by age, a drug, a disease: more telling than a method's word like "forecast"),
    then the whole statement's words it has."""
    field = 1 if family.subject and family.named_in(statement) else 0
    return len(family.cue_hits(task.text)) + field, len(family.cue_hits(statement))


def _menu(names: tuple[str, ...], task: Task, data: ProblemData, lang: str) -> str:
    lines = []
    for n in names:
        hits = FAMILIES[n].cue_words(f"{task.text}\n{data.statement}")[:4]
        said = f"（题目提到：{'、'.join(hits)}）" if hits else ""
        fit = [t for t, frame in data.tables.items() if not FAMILIES[n].table_misfit(frame)]
        tables = f"（可用的数据：{'、'.join(fit)}）" if fit and len(fit) < len(data.tables) else ""
        lines.append(f"- {n}: {FAMILIES[n].words(lang)}{said}{tables}")
    return "\n".join(lines)


def _choice_prompt(task: Task, names: tuple[str, ...], data: ProblemData) -> str:
    """What the modeler reads to choose a task's family: the task, the menu, the data files, the numbers the statement
    states (the only ones a limit, a level or a threshold may take) and the statement's start."""
    numbers = list(dict.fromkeys(re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?%?", data.statement)))
    return (
        f"第 {task.number} 问（要求：{task.asks}）：{task.text}\n\n可选的模型（按题目的用词与数据的形状排序，第一个最可能）：\n"
        f"{_menu(names, task, data, 'zh')}\n\n数据文件：\n{data.describe()}\n\n题目给出的数字：{'、'.join(numbers[:30]) or '无'}"
        f"\n\n题目：{data.statement[:600]}"
    )


def _misfit(name: str, data: ProblemData) -> bool:
    """Whether family `name` cannot fit the problem whatever its parameters (its subject unnamed, no table of its
    shape): a choice of it is not tried again."""
    return not FAMILIES[name].named_in(data.statement) or bool(FAMILIES[name].data_misfit(data))


def _offer(rejected: str, names: tuple[str, ...], task: Task, data: ProblemData) -> str:
    """The family code offers when `rejected` was turned down: the menu's first when the choice was another one or
    cannot fit at all (then the next); "" when the choice was the menu's first and only its parameters were wrong."""
    others = [n for n in names if n != rejected]
    if not others or (names[:1] == (rejected,) and not _misfit(rejected, data)):
        return ""
    best = FAMILIES[others[0]]
    hits = best.cue_words(f"{task.text}\n{data.statement}")[:4]
    said = f"; the problem speaks of {', '.join(hits)}" if hits else ""
    return f"the family the statement and the data fit: {best.name} ({best.title[0]}{said})"


async def choose_models(director: Director, tasks: list[Task], data: ProblemData) -> list[TaskModel]:
    """Each task's family, chosen by the modeler and checked by code (one retry with the reasons)."""
    chosen = []
    for task in tasks:
        earlier = frozenset(m.family for m in chosen if m.status == "chosen")
        names = offered = _menu_names(task, data, earlier)
        reasons: list[str] = []
        model = TaskModel(task=task, status="could_not", offered=list(offered))
        for attempt in (1, 2):
            retry = "" if not reasons else "\n上一次的选择不被数据或题目支持：\n" + "\n".join(f"- {r}" for r in reasons)
            answer = await director.turn(
                "modeler", "work", step=f"modeler:task{task.number}#{attempt}", output=_choice_form(names),
                task=f"为第 {task.number} 问选一个模型（family）并填写它的参数：表名、列名必须是数据中的，数字必须是题目给出的。{retry}",
                prompt=_choice_prompt(task, names, data),
            )  # fmt: skip
            raw = answer.model_dump().get("choice")
            if not raw:
                reasons = ["no model was chosen"] + (
                    [f"the modeler's answer did not fit its form ({director.unfit['modeler'][:160]})"]
                    if "modeler" in director.unfit
                    else []
                )
                model = TaskModel(task=task, status="could_not", reasons=reasons, tries=attempt, offered=list(offered))
                continue
            params = as_stated(_table_named(parse_choice(raw), data), data, task=task.text)
            measure = measure_misfit(params.family, task.text)
            reasons = [measure] if measure else []
            reasons += FAMILIES[params.family].supports(data, params)
            offer = _offer(params.family, names, task, data) if reasons else ""
            reasons += [offer] if offer else []
            if reasons and _misfit(params.family, data) and len(names) > 1:
                names = tuple(n for n in names if n != params.family)  # not offered again
            model = TaskModel(
                task=task, status="could_not" if reasons else "chosen", family=params.family,
                params=params.model_dump(), reasons=reasons, tries=attempt, offered=list(offered),
            )  # fmt: skip
            if not reasons:
                break
        chosen.append(model)
    return chosen


def _ahp_results(ws: Path, done: list[TaskModel]) -> dict[str, dict[str, Any]]:
    """The results of the AHPs that ran for earlier tasks of the run (`results/<out>.json` → its JSON), the earliest
    first: a later TOPSIS over the same criteria takes their weights (`with_ahp_weights`)."""
    found = {}
    for model in done:
        path = ws / "results" / f"{model.out}.json"
        if model.family == "ahp" and model.status == "ran" and path.is_file():
            try:
                found[f"results/{path.name}"] = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
    return found


async def run_task_models(director: Director, models: list[TaskModel]) -> list[TaskModel]:
    """Run each chosen family's script in the sandbox; one that fails is set aside (its script moved out of code/,
    so the gates' check that every script runs is not held up by a task the team could not do) with its error. A
    TOPSIS over the criteria an earlier task's AHP weighed uses the AHP's weights (`with_ahp_weights`)."""
    from ._team_code import run_in_sandbox

    ws = director.ws
    done = []
    for model in models:
        if model.status == "could_not" or (model.status == "ran" and (ws / "results" / f"{model.out}.json").is_file()):
            done.append(model)
            continue
        family = family_named(model.family)
        params = with_ahp_weights(parse_choice(model.params), _ahp_results(ws, done))
        model = model.model_copy(update={"params": params.model_dump()})
        director._write_script("family_io", (SCRIPTS / "family_io.py").read_text(encoding="utf-8"), origin="library")
        director._write_script(model.out, family.script(params, out=model.out), origin=f"library ({family.name})")
        ran = await run_in_sandbox(ws, model.out)
        if ran.ok and (ws / "results" / f"{model.out}.json").is_file():
            done.append(model.model_copy(update={"status": "ran"}))
            continue
        error = ran.error or (ran.stderr.strip().splitlines() or ["no result file"])[-1]
        aside = ws / "state" / "set_aside" / f"{model.out}.py"
        write_atomic(aside, (ws / "code" / f"{model.out}.py").read_bytes())
        (ws / "code" / f"{model.out}.py").unlink(missing_ok=True)
        (ws / "code" / f"{model.out}.run.json").unlink(missing_ok=True)
        done.append(model.model_copy(update={"status": "could_not", "reasons": [f"the script failed: {error[:300]}"]}))
    return done


_WORDS = {
    "en": {"model": "Model: {title} (`results/{out}.json`).", "not": "Not answered: {why}.", "none": "no model of the library was chosen",
           "task_model": "Task {n}: {title}.", "no_model": "Task {n}: no model of the library ran."},
    "zh-CN": {"model": "模型：{title}（`results/{out}.json`）。", "not": "未能回答：{why}。", "none": "没有选出模型库中的模型",
              "task_model": "问题 {n}：{title}。", "no_model": "问题 {n}：没有运行模型库中的模型。"},
}  # fmt: skip


def models_run(models: list[TaskModel], *, lang: str) -> list[str]:
    """The model of each task, in code's words (the paper's model section: what ran, not what was planned)."""
    w = _WORDS["zh-CN" if lang.startswith("zh") else "en"]
    return [
        w["task_model"].format(n=m.task.number, title=family_named(m.family).words(lang))
        if m.status == "ran"
        else w["no_model"].format(n=m.task.number)
        for m in models
    ]


def models_not_run(models: list[TaskModel]) -> list[str]:
    """What a text calls the library's families that ran for no task (`Family.names`), save a name that is part of
    one that ran: a sentence of the team naming one describes a model the paper has no result of."""
    ran = [n for m in models if m.status == "ran" for n in family_named(m.family).names()]
    others = (
        n for f in FAMILIES.values() if f.name not in {m.family for m in models if m.status == "ran"} for n in f.names()
    )
    return sorted({n for n in others if not any(n.lower() in r.lower() for r in ran)})


def _table_named(params: FamilyParams, data: ProblemData) -> FamilyParams:
    """`params` with its data file named as the problem names it, when the modeler's slip is plain: the name without
    `.csv`, in another case, or a name no file has (or none) when one file alone has the family's shape; then its
    columns (`_columns_named`). Anything else is for the check to say."""
    fixes = {}
    for field in ("table", "next_table"):
        name = str(getattr(params, field, "") or "")
        if field == "next_table" and not name:
            continue
        if name in data.tables:
            continue
        found = [t for t in data.tables if t.lower() in (name.lower(), f"{name.lower()}.csv")]
        if not found and field == "table":  # no such file: the one table of the family's shape, if only one is
            family = FAMILIES[params.family]
            found = [t for t, frame in data.tables.items() if not family.table_misfit(frame)]
        if len(found) == 1:
            fixes[field] = found[0]
    params = params.model_copy(update=fixes) if fixes else params
    return _columns_named(params, data)


_NEAR = 0.85
"""How alike (difflib's ratio) a column name the modeler wrote and the table's one column like it must be for the
slip to be plain: a letter more or less in a name of ten ("hare_thousands", "hares_thousands": 0.97); two columns
that like it: no mend."""


def _columns_named(params: FamilyParams, data: ProblemData) -> FamilyParams:
    """`params` with each column named as its table names it, when the modeler's slip is plain: another case, spaces
    around it, or a near miss of one column alone (`_NEAR`: seen on the embedded model, "hare_thousands" written
    twice for "hares_thousands", the retry's reason naming the columns notwithstanding); a label (the rows' names) that is a column of numbers or none of the table, when the table has
    one column of text alone (anything else is for the check to say)."""
    frame = data.tables.get(params.table)
    if frame is None:
        return params
    texts = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    by_lower: dict[str, list[str]] = {}
    for column in map(str, frame.columns):
        by_lower.setdefault(column.strip().lower(), []).append(column)

    def named(value: str) -> str:
        if value in frame.columns:
            return value
        found = by_lower.get(value.strip().lower(), [])
        if not found:  # the name the statement gives it, its unit set aside ("单价" for "单价_元")
            found = [c for c in map(str, frame.columns) if without_unit(c).lower() == value.strip().lower()]
        if not found:  # a near miss: one letter more or less ("hare_thousands" for "hares_thousands")
            found = difflib.get_close_matches(value.strip().lower(), list(by_lower), n=2, cutoff=_NEAR)
            found = by_lower[found[0]] if len(found) == 1 else []
        return found[0] if len(found) == 1 else value

    fixes: dict[str, Any] = {}
    for field, value in params.model_dump().items():
        if field == "label_column" and isinstance(value, str) and value and len(texts) == 1:
            label = named(value)
            fixes[field] = label if label in texts else texts[0]
        elif field.endswith("_column") and isinstance(value, str) and value:
            fixes[field] = named(value)
        elif field in _COLUMN_LISTS and isinstance(value, list):
            fixes[field] = [named(v) if isinstance(v, str) else v for v in value]
        elif field == "target" and isinstance(value, str) and value:
            fixes[field] = named(value)
    changed = {k: v for k, v in fixes.items() if getattr(params, k) != v}
    return params.model_copy(update=changed) if changed else params


_COLUMN_LISTS = ("resource_columns", "criteria", "cost_criteria", "columns", "covariates")
"""The parameters that list columns of the family's table."""


def task_answer(model: TaskModel, workspace: Path, *, lang: str) -> TaskAnswer:
    """The task's section: the family's sentences from its result JSON (and its figure), or why it could not."""
    w = _WORDS["zh-CN" if lang.startswith("zh") else "en"]
    path = Path(workspace) / "results" / f"{model.out}.json"
    if model.status == "ran" and path.is_file():
        family = family_named(model.family)
        result = json.loads(path.read_text(encoding="utf-8"))
        lines = [w["model"].format(title=family.words(lang), out=model.out), *family.sentences(result, lang=lang)]
        figure = Path(workspace) / "figures" / f"{model.out}.png"
        if figure.is_file():
            lines.append(f"![{family.words(lang)}](../figures/{figure.name})")
        return TaskAnswer(task=model.task, answered=True, text="\n\n".join(lines))
    why = "; ".join(model.reasons) or w["none"]
    return TaskAnswer(task=model.task, answered=False, text=w["not"].format(why=why.rstrip(".")))


def check_task_models(workspace: Path) -> list[CheckFailure]:
    """Each family that ran (`state/task_models.json`) can give what its task asks for, and its result file is there
    and reads."""
    failures = []
    for model in recorded(workspace):
        if model.status != "ran":
            continue
        family = FAMILIES.get(model.family)
        if family is None or model.task.asks not in family.answers:
            failures.append(
                CheckFailure(
                    "family_fits_task",
                    f"Task {model.task.number} asks for a {model.task.asks}; the model {model.family} gives none. "
                    "Choose a family that answers it.",
                    f"task {model.task.number}: {model.family}",
                )
            )
        measure = measure_misfit(model.family, model.task.text) if family is not None else ""
        if measure:
            failures.append(
                CheckFailure(
                    "family_fits_task",
                    f"Task {model.task.number}: {measure}.",
                    f"task {model.task.number}: {model.family}",
                )
            )
        path = Path(workspace) / "results" / f"{model.out}.json"
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            failures.append(
                CheckFailure(
                    "task_result", f"results/{path.name} is missing or unreadable: run the task's script.", str(error)
                )
            )
    return failures


def record(director: Director, models: list[TaskModel]) -> None:
    """Put the task models on record: the memo's note (a resumed run reads it) and `state/task_models.json` (the
    gates read it)."""
    rows = [m.model_dump(mode="json") for m in models]
    director._note(NOTE, rows)
    write_atomic(director.ws / "state" / "task_models.json", json.dumps(rows, ensure_ascii=False, indent=1).encode())


def recorded(workspace: Path) -> list[TaskModel]:
    """The task models `record` wrote into the workspace (none when there is no readable record)."""
    try:
        rows = json.loads((Path(workspace) / "state" / "task_models.json").read_text(encoding="utf-8"))
        return [TaskModel.model_validate(r) for r in rows]
    except (OSError, ValueError, ValidationError):
        return []
