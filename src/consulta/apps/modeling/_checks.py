"""Checks that code can make on a run's workspace, each a named failure with its evidence: files exist; the cleaned
data has no NaN, no duplicated rows or keys, no gaps in a sequence that should be complete, no impossible values;
the team's code ran without error; every number the paper gives is in a result file (or the problem statement);
every figure the paper cites exists. When one fails, the gate is REJECTED by code alone (see `_gates`).

What is a key, a sequence, a count, a share or a total is read from a `DataSpec` when one is given, else inferred
from the columns' names and values (`infer_table_spec`), so any problem's data is checked without a model.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CheckFailure",
    "DataSpec",
    "TableSpec",
    "check_code_ran",
    "check_data",
    "check_files_exist",
    "check_paper_figures",
    "check_paper_numbers",
    "number_tracer",
    "check_table",
    "infer_table_spec",
    "paper_numbers",
    "result_values",
]

MAX_EVIDENCE = 8
"""At most this many offending rows or values are named in one failure's evidence."""
MAX_TABLE_BYTES = 50 * 1024 * 1024
"""A data or result file over this size is not read (a failure names it)."""


@dataclass(frozen=True)
class CheckFailure:
    """One check that failed: `check` names it (e.g. `duplicate_keys`), `message` says what is wrong and what to do,
    `evidence` shows it (the file, the rows, the values)."""

    check: str
    message: str
    evidence: str


class TableSpec(BaseModel):
    """What one cleaned-data table should satisfy. `file` is relative to the workspace's `data/` folder."""

    model_config = ConfigDict(extra="forbid")

    file: str
    keys: list[str] = Field(default_factory=list, description="Columns whose values identify a row (no two rows alike)")
    sequence: str | None = Field(
        None,
        description="A column that should run without gaps (years, dates, ids), within each group of the other keys",
    )
    nonnegative: list[str] = Field(default_factory=list, description="Counts and amounts: never below 0")
    shares: list[str] = Field(default_factory=list, description="Fractions: between 0 and 1")
    percents: list[str] = Field(default_factory=list, description="Percentages: between 0 and 100")
    totals: dict[str, list[str]] = Field(
        default_factory=dict, description="A total column -> the columns it is the sum of"
    )


class DataSpec(BaseModel):
    """The tables of `data/` and what each should satisfy; a table not named is checked by inference."""

    model_config = ConfigDict(extra="forbid")

    tables: list[TableSpec] = Field(default_factory=list)


# ---- files --------------------------------------------------------------------------------------------------------


def check_files_exist(workspace: Path, patterns: Iterable[str]) -> list[CheckFailure]:
    """Each glob pattern (relative to the workspace) matches at least one non-empty file."""
    failures = []
    for pattern in patterns:
        found = [p for p in sorted(workspace.glob(pattern)) if p.is_file()]
        if not found:
            failures.append(
                CheckFailure(
                    "files_exist", f"No file matches {pattern}: write it before this gate.", f"{pattern}: missing"
                )
            )
        elif all(p.stat().st_size == 0 for p in found):
            names = ", ".join(p.relative_to(workspace).as_posix() for p in found[:MAX_EVIDENCE])
            failures.append(
                CheckFailure("files_exist", f"The files matching {pattern} are empty.", f"{names}: 0 bytes")
            )
    return failures


def _read_csv(path: Path, workspace: Path) -> tuple[pd.DataFrame | None, CheckFailure | None]:
    name = path.relative_to(workspace).as_posix()
    if path.stat().st_size > MAX_TABLE_BYTES:
        return None, CheckFailure(
            "readable",
            f"{name} is over {MAX_TABLE_BYTES // 2**20} MB; keep tables smaller.",
            f"{name}: {path.stat().st_size} bytes",
        )
    try:
        return pd.read_csv(path), None
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as error:
        return None, CheckFailure("readable", f"{name} is not a readable CSV file: fix its format.", f"{name}: {error}")


# ---- data ---------------------------------------------------------------------------------------------------------

_SEQUENCE = re.compile(
    r"^(year|yr|month|date|day|week|quarter|period|time|t|ts|timestamp|id|index|no|年份?|月份?|日期|时间)$|_(year|month|date|day|week|id)$",
    re.I,
)
_GROUP = re.compile(
    r"(region|province|state|city|county|country|district|zone|area|node|site|facility|station|warehouse|store|plant|sector|category|group|name|code|地区|省|城市|站点|类别)",
    re.I,
)
_COUNT = re.compile(
    r"(count|number|^num|^n_|cases|infect|recover|death|deaths|hospital|patients|susceptible|population|pop$|demand|load|consumption|sales|gdp|revenue|cost|price|"
    r"quantity|qty|volume|capacity|distance|weight|_kwh|_mwh|_gwh|_twh|_mw$|_gw$|_kg$|_km$|_tons?$|人数|数量|病例|人口|需求|用电|负荷|距离)",
    re.I,
)
_SHARE = re.compile(r"(share|proportion|fraction|ratio_of|占比|比例)", re.I)
_PERCENT = re.compile(r"(pct|percent|percentage|百分比)", re.I)
_TOTAL = re.compile(r"(^total|_total$|^sum_|_sum$|^all_|合计|总计|总量)", re.I)


def infer_table_spec(frame: pd.DataFrame, file: str) -> TableSpec:
    """What `frame` should satisfy, read from its columns: a sequence column (years, dates, ids by name and values),
    group columns (regions, sites … by name) that with the sequence make the key, counts by name (never negative),
    shares and percentages by name, and a total column with the numeric columns that add up to it in most rows."""
    columns = [str(c) for c in frame.columns]
    sequence = next((c for c in columns if _SEQUENCE.search(c) and _sequence_values(frame[c]) is not None), None)
    groups = [c for c in columns if c != sequence and _GROUP.search(c) and not pd.api.types.is_float_dtype(frame[c])]
    keys = [*groups, sequence] if sequence else []
    if keys and frame.duplicated(subset=keys).mean() > 0.1:  # not a key of this table (e.g. a log of events)
        keys = []
    numeric = [c for c in columns if c not in keys and c != sequence and pd.api.types.is_numeric_dtype(frame[c])]
    shares = [c for c in numeric if _SHARE.search(c) and not _PERCENT.search(c)]
    percents = [c for c in numeric if _PERCENT.search(c)]
    counts = [c for c in numeric if _COUNT.search(c) and c not in shares and c not in percents]
    totals = {}
    for total in (c for c in numeric if _TOTAL.search(c)):
        parts = _parts_of(
            frame,
            total,
            [c for c in numeric if c != total and c not in shares and c not in percents and not _TOTAL.search(c)],
        )
        if parts:
            totals[total] = parts
    return TableSpec(
        file=file, keys=keys, sequence=sequence, nonnegative=counts, shares=shares, percents=percents, totals=totals
    )


def _parts_of(frame: pd.DataFrame, total: str, candidates: list[str]) -> list[str]:
    """The columns `total` is the sum of in most rows: those sharing its name's stem if they add up, else all the
    candidates if they do."""
    stem = _TOTAL.sub("", total).strip("_").lower()
    tries = [[c for c in candidates if stem and stem in c.lower()], candidates]
    for parts in tries:
        if len(parts) >= 2 and _agreeing(frame, total, parts).mean() >= 0.5:
            return parts
    return []


def _agreeing(frame: pd.DataFrame, total: str, parts: list[str]) -> pd.Series:
    summed = frame[parts].sum(axis=1, min_count=len(parts))
    scale = frame[total].abs().clip(lower=1.0)
    return ((summed - frame[total]).abs() <= 1e-6 * scale + 0.5 * 10.0 ** -_decimals(frame[total])).fillna(False)


def _decimals(column: pd.Series) -> int:
    """How many decimals the column's values are written with (at most 6)."""
    values = column.dropna().head(200)
    places = [
        len(f"{v:.6f}".rstrip("0").split(".")[1]) for v in values if isinstance(v, (int, float)) and math.isfinite(v)
    ]
    return max(places, default=0)


def _sequence_values(column: pd.Series) -> tuple[str, pd.Series] | None:
    """The column as a sequence: ("int", integers) or ("date", timestamps), or None when it is neither."""
    values = column.dropna()
    if values.empty:
        return None
    if pd.api.types.is_integer_dtype(values) or (pd.api.types.is_float_dtype(values) and (values % 1 == 0).all()):
        return "int", values.astype("int64")
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        text = values.astype(str)
        if not text.str.match(r"^\d{4}([-/]\d{1,2}){1,2}([ T].*)?$").all():
            return None
        parsed = pd.to_datetime(text.str.replace("/", "-"), errors="coerce", format="mixed")
        return ("date", parsed) if parsed.notna().all() else None
    if pd.api.types.is_datetime64_any_dtype(values):
        return "date", values
    return None


def _missing_in_sequence(values: pd.Series) -> list[str]:
    """The values a complete sequence from min to max would have that `values` lacks."""
    kind = _sequence_values(values)
    if kind is None:
        return []
    sort, series = kind
    unique = sorted(set(series))
    if len(unique) < 3:
        return []
    if sort == "int":
        steps = pd.Series(unique).diff().dropna()
        step = int(steps.mode().iloc[0])
        if step <= 0:
            return []
        present = set(unique)
        return [str(v) for v in range(unique[0], unique[-1] + 1, step) if v not in present]
    stamps = pd.DatetimeIndex(unique)
    days = pd.Series(stamps).diff().dropna().dt.days
    step_days = int(days.mode().iloc[0])
    if 28 <= step_days <= 31:
        freq, fmt = ("MS" if all(s.day == 1 for s in stamps) else "ME"), "%Y-%m"
    elif 365 <= step_days <= 366:
        freq, fmt = ("YS" if all(s.month == 1 and s.day == 1 for s in stamps) else "YE"), "%Y"
    elif 90 <= step_days <= 92:
        freq, fmt = ("QS" if all(s.day == 1 for s in stamps) else "QE"), "%Y-%m"
    elif step_days >= 1:
        freq, fmt = f"{step_days}D", "%Y-%m-%d"
    else:
        return []
    expected = pd.date_range(stamps[0], stamps[-1], freq=freq)
    present = set(stamps)
    return [s.strftime(fmt) for s in expected if s not in present]


def _rows(frame: pd.DataFrame, mask: pd.Series) -> str:
    """The first offending rows, as CSV line numbers (header = line 1) with their values."""
    picked = frame[mask].head(MAX_EVIDENCE)
    lines = [f"line {int(i) + 2}: " + ", ".join(f"{k}={v}" for k, v in row.items()) for i, row in picked.iterrows()]
    more = int(mask.sum()) - len(picked)
    return "; ".join(lines) + (f"; … {more} more" if more > 0 else "")


def check_table(frame: pd.DataFrame, spec: TableSpec) -> list[CheckFailure]:
    """The failures of one table against its spec (names in the spec that the table lacks are failures too)."""
    name = f"data/{spec.file}"
    failures: list[CheckFailure] = []
    named = {
        *spec.keys,
        *([spec.sequence] if spec.sequence else []),
        *spec.nonnegative,
        *spec.shares,
        *spec.percents,
        *spec.totals,
    }
    named |= {c for parts in spec.totals.values() for c in parts}
    absent = sorted(c for c in named if c not in frame.columns)
    if absent:
        return [
            CheckFailure(
                "columns",
                f"{name} lacks the columns {', '.join(absent)}.",
                f"{name} has: {', '.join(map(str, frame.columns))}",
            )
        ]
    if frame.empty:
        return [CheckFailure("empty_table", f"{name} has no rows.", f"{name}: header only")]
    nulls = frame.isna()
    if nulls.any().any():
        counts = ", ".join(f"{c}: {int(n)}" for c, n in nulls.sum().items() if n)
        failures.append(
            CheckFailure(
                "no_nan",
                f"{name} has empty (NaN) cells: fill or drop them and say how in the paper.",
                f"{counts}; {_rows(frame, nulls.any(axis=1))}",
            )
        )
    duplicated = frame.duplicated(keep="first")
    if duplicated.any():
        failures.append(
            CheckFailure(
                "duplicate_rows",
                f"{name} has {int(duplicated.sum())} duplicated rows: drop them.",
                _rows(frame, duplicated),
            )
        )
    if spec.keys:
        keyed = frame.duplicated(subset=spec.keys, keep=False) & ~frame.duplicated(keep="first")
        if keyed.any() and frame[keyed].duplicated(subset=spec.keys, keep=False).any():
            failures.append(
                CheckFailure(
                    "duplicate_keys",
                    f"{name} has rows with the same {' + '.join(spec.keys)} but different values: keep one row per key.",
                    _rows(frame, keyed),
                )
            )
    if spec.sequence:
        groups = [k for k in spec.keys if k != spec.sequence]
        parts = frame.groupby(groups, dropna=False) if groups else [((), frame)]
        gaps = []
        for group, part in parts:
            missing = _missing_in_sequence(part[spec.sequence])
            if missing:
                label = ", ".join(
                    f"{g}={v}" for g, v in zip(groups, group if isinstance(group, tuple) else (group,), strict=False)
                )
                gaps.append(
                    f"{label + ': ' if label else ''}missing {', '.join(missing[:MAX_EVIDENCE])}{' …' if len(missing) > MAX_EVIDENCE else ''}"
                )
        if gaps:
            failures.append(
                CheckFailure(
                    "sequence_gaps",
                    f"{name}: {spec.sequence} should run without gaps: fill the missing periods or say why they are absent.",
                    "; ".join(gaps[:MAX_EVIDENCE]),
                )
            )
    for column in spec.nonnegative:
        bad = pd.to_numeric(frame[column], errors="coerce") < 0
        if bad.any():
            failures.append(
                CheckFailure(
                    "impossible_values",
                    f"{name}: {column} is a count or amount and cannot be negative.",
                    _rows(frame, bad),
                )
            )
    for column, top in [*((c, 1.0) for c in spec.shares), *((c, 100.0) for c in spec.percents)]:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = (values < 0) | (values > top)
        if bad.any():
            failures.append(
                CheckFailure(
                    "impossible_values",
                    f"{name}: {column} is a share and must lie between 0 and {top:g}.",
                    _rows(frame, bad),
                )
            )
    for total, parts in spec.totals.items():
        bad = ~_agreeing(frame, total, parts) & frame[[total, *parts]].notna().all(axis=1)
        if bad.any():
            failures.append(
                CheckFailure(
                    "totals_disagree",
                    f"{name}: {total} is not the sum of {' + '.join(parts)} in {int(bad.sum())} rows.",
                    _rows(frame, bad),
                )
            )
    return failures


def check_data(workspace: Path, spec: DataSpec | None = None) -> list[CheckFailure]:
    """Every CSV under `data/`, checked against its spec in `spec` or an inferred one."""
    given = {t.file: t for t in (spec.tables if spec else [])}
    failures = check_files_exist(workspace, ["data/*.csv"])
    for path in sorted((workspace / "data").glob("*.csv")):
        frame, failure = _read_csv(path, workspace)
        if failure is not None:
            failures.append(failure)
            continue
        assert frame is not None
        failures += check_table(frame, given.get(path.name) or infer_table_spec(frame, path.name))
    for missing in sorted(set(given) - {p.name for p in (workspace / "data").glob("*.csv")}):
        failures.append(
            CheckFailure(
                "files_exist", f"data/{missing} is named in the data spec but missing.", f"data/{missing}: missing"
            )
        )
    return failures


# ---- code ---------------------------------------------------------------------------------------------------------


def check_code_ran(workspace: Path, runs: Iterable[tuple[Path, bool, str]]) -> list[CheckFailure]:
    """Each (script, ok, detail): a script that failed (its error as evidence)."""
    return [
        CheckFailure(
            "code_ran",
            f"{script.relative_to(workspace).as_posix()} did not run to its end: fix the error and run it again.",
            detail,
        )
        for script, ok, detail in runs
        if not ok
    ]


# ---- the paper ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperNumber:
    """A number the paper gives: its value, the tolerance its printed precision allows, its text, line and context."""

    value: float
    tolerance: float
    text: str
    line: int
    context: str
    percent: bool = False


_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<sign>[-−–]?)(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:[eE](?P<exp>[-+]?\d+))?"
    r"\s*(?P<unit>%|％|万|亿|million|billion|thousand)?(?![A-Za-z0-9_])",
    re.I,
)
_DATE = re.compile(r"\b\d{4}[-/]\d{1,2}(?:[-/]\d{1,2})?\b")
_REFERENCE = re.compile(r"(figure|fig\.|table|eq\.|equation|section|step|phase|model|图|表|式|第)\s*\(?$", re.I)
_SCALE = {"万": 1e4, "亿": 1e8, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_SMALL = 10
"""Whole numbers up to this are counting words (three scenarios, step 2) and are not checked."""


def _prose_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """The lines of the paper that carry its claims: not code blocks, not HTML comments; image and link targets,
    heading numbers and list markers blanked out."""
    fenced = False
    for number, line in enumerate(markdown.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"<!--.*?-->", " ", line)
        line = re.sub(r"\]\([^)]*\)", "] ", line)  # link and image targets
        line = re.sub(r"^\s*#+\s*[\d.]*", " ", line)  # heading and its number
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", " ", line)  # list markers
        line = re.sub(r"https?://\S+", " ", line)
        yield number, line


def paper_numbers(markdown: str) -> list[PaperNumber]:
    """The numbers the paper states, with their context: years and dates written as dates, references (Figure 2,
    表 3, Eq. (4)), numbers inside names (x1, R2) and small whole numbers are left out."""
    found = []
    for number, line in _prose_lines(markdown):
        line = _DATE.sub(lambda m: " " * len(m.group()), line)
        for match in _NUMBER.finditer(line):
            text = match.group("num")
            before = line[: match.start()].rstrip()
            if _REFERENCE.search(before) or before.endswith(("^", "_", "$x", "[")):
                continue
            value = float(text.replace(",", ""))
            decimals = len(text.split(".")[1]) if "." in text else 0
            unit = (match.group("unit") or "").lower()
            exponent = int(match.group("exp")) if match.group("exp") else 0
            if not unit and not exponent and decimals == 0 and value <= _SMALL:
                continue
            tolerance = 0.5 * 10.0**-decimals
            scale = _SCALE.get(unit, 1.0) * 10.0**exponent
            sign = -1.0 if match.group("sign") in ("-", "−") else 1.0
            context = line[max(0, match.start() - 40) : match.end() + 40].strip()
            found.append(
                PaperNumber(
                    sign * value * scale, tolerance * scale, match.group().strip(), number, context, unit in ("%", "％")
                )
            )
    return found


def _values_of_csv(path: Path) -> Iterator[float]:
    with path.open(encoding="utf-8", errors="replace", newline="") as f:
        for row in csv.reader(f):
            for cell in row:
                try:
                    value = float(cell.replace(",", "")) if cell.strip() else math.nan
                except ValueError:
                    continue
                if math.isfinite(value):
                    yield value


def _values_of_json(path: Path) -> Iterator[float]:
    """Every number a result JSON holds (a model family's result, `families`), at any depth."""
    try:
        stack: list[Any] = [json.loads(path.read_text(encoding="utf-8", errors="replace"))]
    except ValueError:
        return
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, int | float) and not isinstance(item, bool) and math.isfinite(item):
            yield float(item)


def result_values(workspace: Path) -> list[float]:
    """The numbers of the workspace's result files: `results/*.csv` cells and `results/*.json` values."""
    results = Path(workspace) / "results"
    found = [v for path in sorted(results.glob("*.csv")) for v in _values_of_csv(path)]
    return found + [v for path in sorted(results.glob("*.json")) for v in _values_of_json(path)]


def _values_of_text(text: str) -> Iterator[float]:
    for match in _NUMBER.finditer(text):
        value = float(match.group("num").replace(",", ""))
        scale = _SCALE.get((match.group("unit") or "").lower(), 1.0)
        yield value
        yield value * scale
        if match.group("sign") in ("-", "−"):
            yield -value * scale


class _Known:
    """Sorted values to look a printed number up in."""

    def __init__(self, values: Iterable[float]) -> None:
        self.values = sorted(set(values))

    def has(self, value: float, tolerance: float) -> bool:
        slack = tolerance + 1e-9 * max(1.0, abs(value))
        i = bisect.bisect_left(self.values, value - slack)
        return i < len(self.values) and self.values[i] <= value + slack


def _problem_text(workspace: Path) -> str:
    folder = workspace / "problem"
    texts = []
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.is_file() and path.suffix.lower() in (".md", ".txt", ".json", ".typ", ".tex"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


def _data_facts(workspace: Path) -> Iterator[float]:
    """What the paper may say of the data besides the results: each table's row count and the values of its key
    columns (years, ids, the first and last period)."""
    for path in sorted((workspace / "data").glob("*.csv")):
        frame, failure = _read_csv(path, workspace)
        if frame is None:
            continue
        yield float(len(frame))
        spec = infer_table_spec(frame, path.name)
        for column in dict.fromkeys([*spec.keys, *([spec.sequence] if spec.sequence else [])]):
            kind = _sequence_values(frame[column])
            if kind is None:
                continue
            sort, values = kind
            if sort == "int":
                yield from (float(v) for v in values)
            else:
                yield from (float(y) for y in values.dt.year)
            yield float(values.nunique())


def number_tracer(workspace: Path) -> Callable[[PaperNumber], bool]:
    """Whether a number the paper states is one `check_paper_numbers` accepts: a value of a result file (to the
    precision printed; a percentage may be the fraction ×100), of the problem statement, or a fact of the data."""
    known = _Known(result_values(workspace))
    given = _Known([*_values_of_text(_problem_text(workspace)), *_data_facts(workspace)])

    def traced(number: PaperNumber) -> bool:
        candidates = [(number.value, number.tolerance)]
        if number.percent:
            candidates.append((number.value / 100, number.tolerance / 100))
        return any(known.has(v, tol) or given.has(v, tol) for v, tol in candidates)

    return traced


def check_paper_numbers(workspace: Path) -> list[CheckFailure]:
    """Every number `paper/paper.md` states is a value of a result file (`results/*.csv`), to the precision it is
    printed with (a percentage may be the fraction ×100), or a number of the problem statement; each that is not is
    named with its line and context."""
    paper = workspace / "paper" / "paper.md"
    if not paper.is_file():
        return [
            CheckFailure(
                "files_exist", "paper/paper.md is missing: write the paper before this gate.", "paper/paper.md: missing"
            )
        ]
    results = sorted((workspace / "results").glob("*.csv")) + sorted((workspace / "results").glob("*.json"))
    traced = number_tracer(workspace)
    unknown = [n for n in paper_numbers(paper.read_text(encoding="utf-8", errors="replace")) if not traced(n)]
    if not unknown:
        return []
    evidence = "; ".join(f"line {n.line}: {n.text} in “{n.context}”" for n in unknown[:MAX_EVIDENCE])
    more = len(unknown) - MAX_EVIDENCE
    sources = ", ".join(p.relative_to(workspace).as_posix() for p in results) or "no result files"
    return [
        CheckFailure(
            "paper_numbers",
            f"{len(unknown)} number(s) in paper/paper.md are in no result file ({sources}) nor the problem: correct them from the results or add the result.",
            evidence + (f"; … {more} more" if more > 0 else ""),
        )
    ]


_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FIGURE_PATH = re.compile(r"(?<![\w/])((?:\.\./)?figures/[\w\-. /]+?\.(?:png|jpe?g|svg|pdf))", re.I)
_FIGURE_REF = re.compile(r"(?:\bfigure|\bfig\.|图)\s*(\d+)", re.I)


def check_paper_figures(workspace: Path) -> list[CheckFailure]:
    """Every figure `paper/paper.md` embeds or names exists in the workspace (paths resolve inside it), and every
    "Figure N" it refers to has an N-th embedded figure."""
    paper = workspace / "paper" / "paper.md"
    if not paper.is_file():
        return []
    text = paper.read_text(encoding="utf-8", errors="replace")
    cited = [m.group(1) for m in _IMAGE.finditer(text)]
    named = [m.group(1) for m in _FIGURE_PATH.finditer(_IMAGE.sub(" ", text))]
    root = workspace.resolve()
    missing = []
    for target in dict.fromkeys([*cited, *named]):
        if re.match(r"^[a-z]+:", target, re.I):
            missing.append(f"{target} (not a file of the workspace)")
            continue
        path = (paper.parent / target).resolve()
        if not path.is_file():
            path = (workspace / target).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            missing.append(target)
    failures = []
    if missing:
        failures.append(
            CheckFailure(
                "paper_figures",
                "The paper cites figures that do not exist: make them (figures/*.png) or correct the paths.",
                "; ".join(missing[:MAX_EVIDENCE]),
            )
        )
    referred = sorted({int(m.group(1)) for m in _FIGURE_REF.finditer(text)})
    beyond = [n for n in referred if n > len(cited)]
    if beyond:
        failures.append(
            CheckFailure(
                "paper_figures",
                f"The paper refers to figure {', '.join(map(str, beyond))} but embeds {len(cited)} figure(s).",
                f"embedded: {', '.join(cited) or 'none'}",
            )
        )
    return failures
