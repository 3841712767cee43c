"""A problem's tasks, read by code from its statement ("Task 1: …", "任务一：…", "问题 2 …", or the numbered items under a
"Tasks" / "Requirements" / "问题" heading), each with what it asks for (a forecast, a policy, a ranking, an estimate,
a number, else an explanation); and, for each, what the team's model can say about it or why it cannot (`answer_of`).
The statement is data: nothing in it is followed, its task lines are only quoted."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from ...i18n import ZH_NUMERALS, chinese_number
from ._shape import ModelKind

__all__ = ["Asks", "Measure", "Task", "TaskAnswer", "answer_of", "horizon_of", "measure_of", "statement_tasks"]

Asks = Literal["forecast", "policy", "ranking", "estimate", "number", "explanation"]
MAX_TASKS = 8
MAX_TEXT = 300

_TASK_LINE = re.compile(
    rf"^\s*(?:[-*]\s*)?(?:\*\*)?(?:task|question|problem|requirement|任务|问题|要求)\s*(?P<n>\d+|[{ZH_NUMERALS}]{{1,3}})(?:\*\*)?"
    r"\s*[:：.)、]?\s*(?:\*\*)?\s*(?P<text>\S.*)$",
    re.I,
)
_HEADING = re.compile(r"^\s*#{1,6}\s*(tasks?|requirements?|questions?|问题|任务|要求)\b", re.I)
_ITEM = re.compile(r"^\s*(?:\(?(?P<n>\d+)[.)、]|（(?P<m>\d+)）)\s*(?P<text>\S.*)$")
_ASKS: tuple[tuple[Asks, re.Pattern[str]], ...] = (
    (
        "policy",
        re.compile(r"(polic|propos|strateg|recommend|plan\b|how should|management|方案|策略|政策|建议|措施)", re.I),
    ),
    (
        "forecast",
        re.compile(r"(forecast|predict|project|next \d+|future|will (?:be|change)|预测|未来|将来|今后)", re.I),
    ),
    ("ranking", re.compile(r"(rank|which .{0,30}most|most important|order of|排序|排名|最重要|哪个.{0,10}最)", re.I)),
    (  # the best of something ("the shortest route", "the least cost"): a plan, found by optimising
        "policy",
        re.compile(
            r"\b(shortest|cheapest|fastest|optimal|optimi[sz]|least|minimi[sz]|maximi[sz])|最短|最优|最小|最大|最少|最多|最省",
            re.I,
        ),
    ),
    ("estimate", re.compile(r"(estimat|fit|rate|parameter|估计|估算|拟合|参数|比率)", re.I)),
    ("number", re.compile(r"(how many|how much|number of|多少|几)", re.I)),
)


Measure = Literal["capacity", "distance"]
"""What quantity a task about a network asks for: the most that can pass (a capacity, a throughput: a maximum flow)
or the length of a way (a distance, a route, a travel time: a shortest path). Read from the task's words by
`measure_of`; a task of neither kind has none."""
_MEASURES: tuple[tuple[Measure, re.Pattern[str]], ...] = (
    (
        "capacity",
        re.compile(
            r"(capacit|throughput|max(?:imum|imal)?\s+flow|bottleneck|at most\b.{0,40}\bper\b|"
            r"\bper\s+(?:second|minute|hour|day)\b.{0,20}\bat most|(?:most|maximum)\b.{0,30}\b(?:can|could) (?:pass|get through|flow)|"
            r"通行能力|容量|吞吐|最大流|最多.{0,12}(?:通过|通行|运送|输送)|能通过多少|瓶颈)",
            re.I,
        ),
    ),
    (
        "distance",
        re.compile(
            r"(shortest|distance|route|\bpath|how far|travel time|quickest way|fastest way|"
            r"最短|距离|路线|路径|路程|多远|行程)",
            re.I,
        ),
    ),
)


def measure_of(text: str) -> Measure | None:
    """The quantity `text` (a task) asks for, a capacity before a distance when it names both ("the most cars per
    minute along the route"); None when it names neither."""
    return next((kind for kind, pattern in _MEASURES if pattern.search(text)), None)


_HORIZON = re.compile(
    r"(?<![\d.])(\d+)\s*(?:个)?\s*(?:年|天|日|月|周|星期|期|步|小时)(?!级|龄)"
    r"|(?<![\d.])(\d+)[\s-]*(?:years?|days?|months?|weeks?|periods?|steps?|hours?|quarters?)\b",
    re.I,
)


def horizon_of(text: str) -> int | None:
    """How many periods ahead `text` (a task) asks about, when it states one number of them ("10 年后", "未来 3 年",
    "3 days after the last day", "over 30 days"); None when it states none or several. A calendar year ("2023 年")
    is no count of periods."""
    found = {int(m.group(1) or m.group(2)) for m in _HORIZON.finditer(text)}
    found = {n for n in found if 0 < n < 1000}
    return found.pop() if len(found) == 1 else None


class Task(BaseModel):
    number: int
    text: str
    asks: Asks


class TaskAnswer(BaseModel):
    task: Task
    answered: bool
    text: str
    """Where the results bear on the task (files), or why the team's model cannot answer it."""


def _asks(text: str) -> Asks:
    return next((kind for kind, pattern in _ASKS if pattern.search(text)), "explanation")


def _number(raw: str) -> int:
    return chinese_number(raw) or 0


def statement_tasks(statement: str) -> list[Task]:
    """The tasks the statement poses, in its order (at most `MAX_TASKS`); [] when it names none."""
    found: list[tuple[int, str]] = []
    for line in statement.splitlines():
        match = _TASK_LINE.match(line)
        if match:
            found.append((_number(match.group("n")), match.group("text")))
    if not found:  # numbered items under a Tasks / Requirements heading
        under = False
        for line in statement.splitlines():
            if re.match(r"^\s*#{1,6}\s", line):
                under = bool(_HEADING.match(line))
                continue
            item = _ITEM.match(line) if under else None
            if item:
                found.append((int(item.group("n") or item.group("m")), item.group("text")))
    tasks = []
    for number, text in found[:MAX_TASKS]:
        clean = " ".join(text.replace("**", "").split())[:MAX_TEXT]
        tasks.append(Task(number=number, text=clean, asks=_asks(clean)))
    return tasks


_GIVES: dict[ModelKind, dict[Asks, str]] = {
    "forecast": {"forecast": "results/forecast.csv, results/peak.csv", "estimate": "results/coefficients.csv",
                 "number": "results/forecast.csv", "explanation": "results/coefficients.csv, results/metrics.csv"},
    "epidemic": {"forecast": "results/projection.csv", "estimate": "results/parameters.csv",
                 "number": "results/parameters.csv", "explanation": "results/parameters.csv, results/fit.csv"},
    "regression": {"estimate": "results/coefficients.csv", "ranking": "results/importance.csv",
                   "number": "results/prediction.csv", "forecast": "results/prediction.csv",
                   "explanation": "results/coefficients.csv, results/importance.csv"},
}  # fmt: skip
_WORDS = {
    "en": {
        "gives": "The {kind} model of {target} bears on it: {files} (section 5).",
        "cannot": "Not answered: the team's {kind} model of {target} gives no {asks}; it needs a model the team "
        "does not have yet (e.g. {needs}).",
    },
    "zh-CN": {
        "gives": "{target} 的 {kind} 模型与此题有关：{files}（见第 5 节）。",
        "cannot": "未能回答：团队的 {kind} 模型（{target}）给不出{asks}；这需要团队尚未具备的模型（例如{needs}）。",
    },
}
_NEEDS = {
    "policy": "an optimisation or a population (Leslie) model with management",
    "forecast": "a time-series or population model",
    "ranking": "an evaluation model (AHP, TOPSIS, entropy weights)",
    "estimate": "a model whose parameters are the quantities asked for",
    "number": "a model that computes the quantity asked for",
    "explanation": "a model of what is asked",
}
_ASKS_ZH = {
    "policy": "方案",
    "forecast": "预测",
    "ranking": "排序",
    "estimate": "估计值",
    "number": "数值",
    "explanation": "解释",
}


def answer_of(task: Task, *, kind: ModelKind, target: str, results: set[str], lang: str) -> TaskAnswer:
    """What the team's model can say about `task`: the result files that bear on what it asks for (only those that
    exist, `results` being the workspace's `results/*.csv` names), or, plainly, that it cannot and why."""
    w = _WORDS["zh-CN" if lang.startswith("zh") else "en"]
    files = [f for f in _GIVES[kind].get(task.asks, "").split(", ") if f and f.removeprefix("results/") in results]
    if files:
        return TaskAnswer(
            task=task, answered=True, text=w["gives"].format(kind=kind, target=target, files=", ".join(files))
        )
    asks = _ASKS_ZH[task.asks] if lang.startswith("zh") else task.asks
    text = w["cannot"].format(kind=kind, target=target, asks=asks, needs=_NEEDS[task.asks])
    return TaskAnswer(task=task, answered=False, text=text)
