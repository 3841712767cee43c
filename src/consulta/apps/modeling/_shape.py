"""The data's shape, as code sees it in the problem's raw CSV files: each table's columns and rows, and of the main
table which columns look like time, new cases, a target, an identifier or a category — hence the kind of model the data
calls for (`DataShape.kind`): `epidemic` (a column of new case counts), `forecast` (a series) or `regression` (rows
are units)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field

__all__ = ["SERIES_SHARE", "DataShape", "ModelKind", "describe_data"]

ModelKind = Literal["forecast", "epidemic", "regression"]
_TIME = re.compile(r"^(month|date|day|year|week|period|time|t|日期|月份|年份)$", re.I)
_CASES = re.compile(r"(new_cases|new_reported|daily_cases|cases_new|新增)", re.I)
_TARGET = re.compile(r"(total|demand|load|consumption|sales|cases|price|用电|需求|总|价格)", re.I)
_ID = re.compile(r"(^id$|_id$|^id_|编号|序号|^no\.?$|^index$)", re.I)
_MAX_LEVELS = 12
"""A text column with at most this many values (and fewer than half the rows) is a categorical covariate."""
SERIES_SHARE = 0.9
"""A time column is a series' when at least this share of the rows have a value of their own (else rows are units)."""


class DataShape(BaseModel):
    """What code sees in the raw data: each table's columns and rows; of the main table, which columns look like
    time, cases, a target, an identifier or a category, and each numeric column's range."""

    tables: dict[str, list[str]]
    rows: dict[str, int]
    main_table: str
    time: str | None
    numeric: list[str]
    cases: str | None
    target: str | None
    series: bool = True
    """The time column gives (nearly) every row a time of its own: the rows are a series."""
    ids: list[str] = Field(default_factory=list)
    """Numeric columns that identify rows (by name, or unique consecutive integers): never covariates."""
    categorical: dict[str, list[str]] = Field(default_factory=dict)
    """Text columns with few values, each with its values (sorted; the first is the baseline)."""
    ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """Each numeric column's smallest and largest value."""

    @property
    def kind(self) -> ModelKind:
        """The model this data calls for: `epidemic` (new cases), `forecast` (a series) or `regression` (units)."""
        if self.cases:
            return "epidemic"
        return "forecast" if self.time is not None and self.series else "regression"


def _is_id(name: str, values: pd.Series) -> bool:
    if _ID.search(name):
        return True
    clean = values.dropna()
    if len(clean) < 10 or not pd.api.types.is_integer_dtype(clean):
        return False
    ordered = clean.sort_values().to_numpy()
    return bool(clean.is_unique and (ordered[1:] - ordered[:-1] == 1).all())


def describe_data(problem_dir: Path) -> DataShape:
    """The shape of the problem's CSV files; the main table is the one with the most rows."""
    tables, rows, frames = {}, {}, {}
    for path in sorted(Path(problem_dir).glob("*.csv")):
        frame = frames[path.name] = pd.read_csv(path)
        tables[path.name] = [str(c) for c in frame.columns]
        rows[path.name] = len(frame)
    if not tables:
        raise ValueError("The problem has no CSV data.")
    main = max(rows, key=lambda name: rows[name])
    frame = frames[main]
    time = next((str(c) for c in frame.columns if _TIME.match(str(c).strip())), None)
    series = time is not None and frame[time].nunique() >= SERIES_SHARE * max(1, len(frame))
    columns = {str(c): frame[c] for c in frame.columns}
    ids = [c for c, v in columns.items() if c != time and pd.api.types.is_numeric_dtype(v) and _is_id(c, v)]
    numeric = [c for c, v in columns.items() if pd.api.types.is_numeric_dtype(v) and c != time and c not in ids]
    categorical = {
        c: sorted(str(x) for x in v.dropna().unique()) for c, v in columns.items()
        if c != time and not pd.api.types.is_numeric_dtype(v) and not _ID.search(c) and 2 <= v.nunique() <= min(_MAX_LEVELS, len(frame) // 2)
    }  # fmt: skip
    ranges = {c: (float(columns[c].min()), float(columns[c].max())) for c in numeric if columns[c].notna().any()}
    cases = next((c for c in numeric if _CASES.search(c)), None)
    target = cases or next(
        (c for c in numeric if _TARGET.search(c) and not c.endswith("_c")), numeric[-1] if numeric else None
    )
    return DataShape(
        tables=tables, rows=rows, main_table=main, time=time, numeric=numeric, cases=cases, target=target, series=series,
        ids=ids, categorical=categorical, ranges=ranges,
    )  # fmt: skip
