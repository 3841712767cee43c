"""What every model family is: one contract (see `Family`), the data it is checked against (`ProblemData`), and the
helpers its checks and sentences share.

A family's script is a real file, `scripts/family_<name>.py`, with a line `CONFIG = json.loads("{}")` that
`Family.script` fills with the task's parameters (as `_templates` fills a template's PLAN line). The script defines
`solve(config, tables) -> dict` (the numbers; pure, so a test can call it on a known truth) and `draw(ax, config,
tables, result)` (its figure), and runs them through `scripts/family_io.py` (copied next to it as
`code/family_io.py`): it reads the tables (`data/*.csv`, else `problem/*.csv`), writes `results/<out>.json` with every
float rounded to 4 significant digits and `figures/<out>.png`. The sentences a family says about its results are
made from that JSON (numbers printed with `num`, which prints the file's value as it is), so the paper's numbers trace
to the result file.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from .._tasks import Asks, Measure

__all__ = [
    "GROUPS",
    "SCRIPTS",
    "Family",
    "FamilyParams",
    "Group",
    "ProblemData",
    "columns_problem",
    "measures",
    "num",
    "numeric_columns",
    "stated",
    "stated_near",
    "without_unit",
]

Group = Literal["population", "ode", "optimisation", "network", "stochastic", "evaluation", "statistics"]
GROUPS: tuple[Group, ...] = ("population", "ode", "optimisation", "network", "stochastic", "evaluation", "statistics")
SCRIPTS = Path(__file__).parent.parent / "scripts"
_CONFIG_LINE = 'CONFIG = json.loads("{}")'
Name = Field(max_length=60)
"""A table's or column's name, as the modeler writes it (bounded like every string a small model fills)."""


class ProblemData(BaseModel):
    """What a family is checked against: the problem's tables (file name → frame) and its statement."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tables: dict[str, pd.DataFrame]
    statement: str = ""

    @classmethod
    def load(cls, folder: Path, statement: str = "") -> ProblemData:
        """The CSV files of `folder` (unreadable ones left out: the data gate says why)."""
        tables = {}
        for path in sorted(Path(folder).glob("*.csv")):
            try:
                frame = pd.read_csv(path)
            except (ValueError, UnicodeDecodeError, OSError):
                continue
            frame.columns = [str(c).strip() for c in frame.columns]
            tables[path.name] = frame
        return cls(tables=tables, statement=statement)

    def describe(self) -> str:
        """The tables in one line each, for a prompt."""
        return "\n".join(f"{n}（{len(f)} 行）：{', '.join(map(str, f.columns))}" for n, f in self.tables.items())


def _every_field(schema: dict[str, Any]) -> None:
    """A model's grammar writes every parameter (each has a default for code, none is left to chance)."""
    schema["required"] = list(schema.get("properties", {}))


class FamilyParams(BaseModel):
    """The parameters the modeler fills for one task: `family` names it (the union's discriminator), `table` is the
    data file it reads; each family adds its own. Its JSON schema requires every field (a grammar made from it
    writes them all); validating a dict fills what is missing with the defaults."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_every_field)

    family: str
    table: str = Field("", max_length=60, description="数据文件名（如 data.csv）")


def num(value: Any) -> str:
    """A result's number as the result file holds it (4 significant digits at most: no digit added or lost)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:g}" if abs(value) < 1e15 else str(value)


_UNIT = re.compile(r"_(?:[\u4e00-\u9fff]{1,2}|usd|eur|yuan|rmb|km|kg|t|h|min|pct|percent)$", re.I)
"""A unit written after a column name's last "_" ("单价_元", "price_usd", "commute_min")."""


def without_unit(name: str) -> str:
    """A column's name as a text names it: its unit in brackets or after its last "_" set aside ("单价_元" → "单价",
    "价格（元）" → "价格"); the name itself when nothing is left."""
    head = re.split(r"[（(\[]", name, maxsplit=1)[0].strip() or name
    return _UNIT.sub("", head) or head


_TASK_LABEL = re.compile(
    r"(?<![A-Za-z])(?:task|question|problem|requirement|part)\s*\d+|(?:任务|问题|要求)\s*\d+", re.I
)


def stated(statement: str, value: float) -> bool:
    """Whether the statement states `value` (a number as written, thousands separators allowed, or a percentage); a
    task's own number ("Task 2:", "问题 2") states nothing."""
    statement = _TASK_LABEL.sub(" ", statement)
    found = [float(m.replace(",", "")) for m in re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", statement)]
    return any(abs(v - value) <= 1e-9 * max(1.0, abs(v)) or abs(v / 100 - value) <= 1e-9 for v in found)


def stated_near(statement: str, value: float, words: tuple[str, ...], *, reach: int = 20) -> bool:
    """Whether the statement states `value` (`stated`) within `reach` characters of one of `words` (matched without
    case, a Latin word at a word's start): "每只雌鹿每年产仔 0.9 只" states a fecundity, "10 年后" does not."""
    for word in words:
        pattern = (r"(?<![A-Za-z])" if word[:1].isascii() else "") + re.escape(word)
        for m in re.finditer(pattern, statement, re.I):
            if stated(statement[max(0, m.start() - reach) : m.end() + reach], value):
                return True
    return False


def columns_problem(
    data: ProblemData, table: str, columns: list[str], *, numeric: bool = True, min_rows: int = 1
) -> list[str]:
    """Why `table` cannot give these columns (missing table or column, text where numbers are needed, too few rows)."""
    if table not in data.tables:
        return [f"there is no data file {table!r} (the files: {', '.join(data.tables) or 'none'})"]
    frame = data.tables[table]
    reasons = []
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        reasons.append(
            f"{table} has no column {', '.join(map(repr, missing))} (its columns: {', '.join(frame.columns)})"
        )
    if numeric:
        text = [c for c in columns if c in frame.columns and not pd.api.types.is_numeric_dtype(frame[c])]
        if text:
            reasons.append(f"column {', '.join(map(repr, text))} of {table} is not numeric")
    if len(frame) < min_rows:
        reasons.append(f"{table} has {len(frame)} rows; this model needs at least {min_rows}")
    return reasons


class Family:
    """One model family's contract. A subclass sets `name` (its script is `scripts/family_<name>.py`), `group`,
    `title` (en, zh), `answers` (the kinds of task it can answer), `Params` (the typed parameters the modeler fills:
    a `FamilyParams` with `family: Literal[name]`) and `outputs` (the keys its result JSON always holds), and
    implements `check` (why the data and the statement do not support it) and `sentences` (what code can say about
    its results, from the result JSON only)."""

    name: ClassVar[str]
    group: ClassVar[Group]
    title: ClassVar[tuple[str, str]]
    answers: ClassVar[frozenset[Asks]]
    Params: ClassVar[type[FamilyParams]]
    outputs: ClassVar[tuple[str, ...]] = ()
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other names a text gives the family's model, besides its titles ("regression", "回归"): see `names`."""
    subject: ClassVar[tuple[str, ...]] = ()
    """Words (English and Chinese, matched without case) a statement of the family's kind uses, one of which it must
    use for the family to fit at all (a predator–prey model for a problem that names no predator or prey fits no
    task of it: seen on the embedded model, Lotka–Volterra on a herd's counts by age); () when the data alone
    decide: a family of a field (animals by age, a drug, a disease, predators, queues, a network) has them; a method
    that applies wherever its data fit (a programme, an evaluation, a regression) has `cues` instead."""
    measures: ClassVar[frozenset[Measure]] = frozenset()
    """The quantities of a network task (`_tasks.measure_of`) the family gives: a task asking for another one is not
    for it (a shortest path for "how many cars per minute at most"); empty: the family does not tell them apart."""
    weighed_by: ClassVar[frozenset[str]] = frozenset()
    """Families whose result an earlier task's run gives this one its weights from (TOPSIS: an AHP's): after a task
    chose one of them, a later task is offered only the families that take those weights (`_task_models._menu_names`),
    not one that would weigh the criteria again from the data."""
    horizon: ClassVar[str] = ""
    """The parameter counting the periods the family looks ahead (a Leslie projection's years, a forecast's periods, a
    chain's steps): a task stating how far ("10 年后", "3 days after") sets it, whatever the modeler wrote (seen on
    the embedded model: "预测 10 年后的总数" answered for 2 years); "" when the family has none."""
    stated_only: ClassVar[dict[str, tuple[str, ...]]] = {}
    """Parameters whose default means "code finds it from the data" (a Leslie fecundity, a clustering's number of
    groups), each with the words a statement stating it uses: a value the statement does not state near one of them
    (`stated_near`) is a guess and gives way to that default (seen on the embedded model: fecundities of 50, 1 and
    10 made up for three tasks of one herd, whose data give 0.9; the 10 was the statement's "10 年后")."""
    cues: ClassVar[tuple[str, ...]] = ()
    """Words a statement of the family's kind uses, ranking it in a task's menu but required of no statement (a
    family's `subject` words are its cues too; see `cue_hits`)."""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        """Why `data` (its tables and statement) does not support this family with `params`; [] when it does."""
        raise NotImplementedError

    def table_misfit(self, frame: pd.DataFrame) -> str:
        """Why this one table cannot be what the family reads, whatever the parameters (the shape of data it needs:
        a run of ages, an edge list, a square matrix …); "" when it can. The default: any table can."""
        return ""

    def data_misfit(self, data: ProblemData) -> str:
        """Why no table of the problem has the shape this family needs ("" when one has, or there is no table):
        what the menu leaves a family out for, and what is said when a choice of it is turned down."""
        misfits = {name: self.table_misfit(frame) for name, frame in data.tables.items()}
        if not misfits or not all(misfits.values()):
            return ""
        return (
            f"no data file has the shape {self.title[0]} needs ("
            + "; ".join(f"{name}: {why}" for name, why in misfits.items())[:400]
            + ")"
        )

    def cue_hits(self, text: str) -> list[str]:
        """The words of `subject` and `cues` that `text` uses (see `_SubjectWords`: "age" in "ages", not in
        "manage")."""
        return _hits(self.subject + self.cues, text)

    def cue_words(self, text: str) -> list[str]:
        """The words of `text` that `cue_hits` found, as the text writes them ("survival" for the stem "surviv")."""
        found = (_SUBJECT[word].search(text) for word in self.subject + self.cues)
        return list(dict.fromkeys(_word_at(text, m) for m in found if m))

    def named_in(self, statement: str) -> bool:
        """Whether `statement` names one of `subject` (always, when the family has none)."""
        return not self.subject or bool(_hits(self.subject, statement))

    def supports(self, data: ProblemData, params: Any) -> list[str]:
        """Why this family does not fit the problem: the statement names none of its `subject`, no table has the shape
        it needs, or its own `check` of the parameters."""
        if not self.named_in(data.statement):
            return [f"the problem names none of what {self.title[0]} models ({', '.join(self.subject[:4])} …)"]
        misfit = self.data_misfit(data)
        if misfit:
            return [misfit]
        return list(dict.fromkeys(self.check(data, params)))  # a reason once (a table named twice says it twice)

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        """What code can say about a result (the JSON the script wrote), each number as the file holds it."""
        raise NotImplementedError

    @property
    def script_path(self) -> Path:
        return SCRIPTS / f"family_{self.name}.py"

    def script(self, params: FamilyParams, *, out: str) -> str:
        """The source of the task's script: the family's file with its CONFIG line filled with `params` and the
        name `out` its result files take (`results/<out>.json`, `figures/<out>.png`)."""
        head, tail = _template(self.script_path)
        config = json.dumps({**params.model_dump(), "out": out}, ensure_ascii=False)
        return f"{head}CONFIG = json.loads({config!r})\n{tail}"

    def words(self, lang: str) -> str:
        return self.title[1] if lang.startswith("zh") else self.title[0]

    def names(self) -> tuple[str, ...]:
        """What a text calls this family, in both languages: each title, its head before a bracket ("线性回归" of
        "线性回归（最小二乘）", "Linear regression" of "Linear regression (OLS)"), and its `aliases`."""
        heads = (re.split(r"（| \(", t, maxsplit=1)[0].strip() for t in self.title)
        return tuple(dict.fromkeys([*self.title, *heads, *self.aliases]))


class _SubjectWords(dict[str, re.Pattern[str]]):
    """A subject word → its pattern (made once): a Latin word matches at a word's start (a stem: "infect" in
    "infection"), one of three letters or fewer, or one written with a final "$", only as a whole word or its plural
    ("age", "ages", not "agent" nor "flu" in "fluctuate"; "plan$" not in "plant"); other scripts anywhere."""

    def __missing__(self, word: str) -> re.Pattern[str]:
        latin = word[:1].isascii()
        stem = word.removesuffix("$")
        prefix = r"(?<![A-Za-z])" if latin else ""
        suffix = r"s?(?![A-Za-z])" if latin and (len(stem) <= 3 or stem != word) else ""
        pattern = self[word] = re.compile(prefix + re.escape(stem) + suffix, re.I)
        return pattern


_SUBJECT = _SubjectWords()


def _word_at(text: str, match: re.Match[str]) -> str:
    """The whole word a Latin stem's `match` starts (the match itself in other scripts)."""
    if not match.group()[:1].isascii():
        return match.group()
    end = re.compile(r"[A-Za-z-]*").match(text, match.end())
    return (match.group() + (end.group() if end else "")).lower()


def _hits(words: tuple[str, ...], text: str) -> list[str]:
    return [word.removesuffix("$") for word in words if _SUBJECT[word].search(text)]


@cache
def _template(path: Path) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    head, sep, tail = text.partition(_CONFIG_LINE)
    if not sep:
        raise ValueError(f"{path} has no line {_CONFIG_LINE!r} to write the task's parameters into.")
    return head, tail.partition("\n")[2]


def _is_index(series: pd.Series) -> bool:
    """Whether a numeric column only numbers the rows (1, 2, 3 … or evenly spaced times): no measurement."""
    values = series.dropna()
    if len(values) < 3 or not pd.api.types.is_numeric_dtype(values):
        return False
    steps = values.diff().dropna()
    return bool((steps > 0).all() and (steps - steps.iloc[0]).abs().max() <= 1e-9 * max(1.0, abs(steps.iloc[0])))


def numeric_columns(frame: pd.DataFrame) -> list[str]:
    return [str(c) for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]


def measures(frame: pd.DataFrame) -> list[str]:
    """The numeric columns that measure something (not a row number, not a time at even steps)."""
    return [c for c in numeric_columns(frame) if not _is_index(frame[c])]


def zh(lang: str) -> bool:
    return lang.startswith("zh")
