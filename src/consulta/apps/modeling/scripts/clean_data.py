"""The data engineer's cleaning: problem/*.csv -> data/*.csv (duplicates dropped, sorted, gaps interpolated).

Before any cleaning, each table's sequence (a whole-number column such as age or year, within each category of its
text columns) is checked: a value that appears more than once and a value missing from its steps go into
results/sequence_checks.csv, one row each (they are reported, and left as given unless the cleaning says otherwise).
"""

import glob
import json
import os

import pandas as pd

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

SEQUENCE_WORDS = (
    "age",
    "year",
    "month",
    "week",
    "day",
    "period",
    "stage",
    "step",
    "年龄",
    "年份",
    "月份",
    "阶段",
    "序号",
)
MAX_LEVELS = 12
"""A text column with at most this many values is a category (each has a sequence of its own)."""
SHARED_VALUES = 0.25
"""Categories each have a sequence of their own when this share of the table's rows repeat a value of another."""
UNIQUE_SHARE = 0.8
"""A sequence gives (nearly) every row of its category a value of its own."""
MAX_CHECKS = 20
"""Rows of results/sequence_checks.csv per table at most (the first ones)."""


def sequence_column(frame):
    """The table's sequence: a column named like one whose values are whole numbers, or None."""
    for column in frame.columns:
        values = frame[column].dropna()
        named = any(word in column.lower() for word in SEQUENCE_WORDS)
        if named and len(values) > 2 and pd.api.types.is_numeric_dtype(values) and (values == values.round()).all():
            return column
    return None


def sequence_checks(name, frame):
    """Values of the table's sequence that repeat or are missing, within each category of its text columns."""
    key = sequence_column(frame)
    if key is None:
        return []
    groups = [  # categories (sex, region …): a text column with few values; ids and dates are not
        c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() <= MAX_LEVELS
    ]
    if frame[key].dropna().duplicated().mean() < SHARED_VALUES:  # (nearly) each value once in the table: one
        groups = []  # sequence, whose text columns are states of its steps (a day's weather), not categories
    found = []
    for label, part in frame.groupby(groups, dropna=False) if groups else [("", frame)]:
        counts = part[key].dropna().astype(int).value_counts().sort_index()
        if counts.empty or len(counts) < UNIQUE_SHARE * counts.sum():  # values many rows share: an attribute
            continue
        steps = pd.Series(counts.index).diff().dropna()
        step = int(steps[steps > 0].mode().iloc[0]) if (steps > 0).any() else 1
        present = set(counts.index)
        missing = [v for v in range(int(counts.index.min()), int(counts.index.max()) + 1, step) if v not in present]
        if len(missing) > len(present):  # more gaps than values: numbers picked from a range, not a sequence
            continue
        where = " / ".join(str(v) for v in (label if isinstance(label, tuple) else (label,))) if groups else "all"
        for value, times in counts.items():
            if times > 1:
                found.append({"file": name, "column": key, "group": where, "value": int(value), "times": int(times)})
        found += [{"file": name, "column": key, "group": where, "value": value, "times": 0} for value in missing]
    return found[:MAX_CHECKS]


account, checks = [], []
for path in sorted(glob.glob("problem/*.csv")):
    frame = pd.read_csv(path)
    frame.columns = [str(c).strip() for c in frame.columns]
    checks += sequence_checks(os.path.basename(path), frame)
    before = len(frame)
    frame = frame.drop_duplicates()
    duplicates, no_target = before - len(frame), 0
    numeric = frame.select_dtypes("number").columns
    time = next((c for c in frame.columns if c.lower() in ("month", "date", "day", "year", "week", "period")), None)
    if PLAN["kind"] == "regression":  # rows are units: no order to follow; a row without the target says nothing
        if PLAN["target"] in frame.columns:
            no_target = int(frame[PLAN["target"]].isna().sum())
            frame = frame.dropna(subset=[PLAN["target"]]).reset_index(drop=True)
        method, missing = "median", int(frame[numeric].isna().sum().sum())
        frame[numeric] = frame[numeric].fillna(frame[numeric].median())
    else:
        if time is not None:
            kept = len(frame)
            frame = frame.drop_duplicates(subset=[time], keep="first").sort_values(time).reset_index(drop=True)
            duplicates += kept - len(frame)
        method, missing = "interpolation", int(frame[numeric].isna().sum().sum())
        frame[numeric] = frame[numeric].interpolate(limit_direction="both")
    frame.to_csv(os.path.join("data", os.path.basename(path)), index=False)
    account.append(
        {
            "file": os.path.basename(path),
            "rows_raw": before,
            "duplicates_dropped": duplicates,
            "rows_without_target_dropped": no_target,
            "missing_values_filled": missing,
            "fill_method": method,
            "rows_clean": len(frame),
        }
    )
    print(f"{os.path.basename(path)}: {before} rows -> {len(frame)}")
pd.DataFrame(account).to_csv("results/cleaning.csv", index=False)
if checks:
    pd.DataFrame(checks).to_csv("results/sequence_checks.csv", index=False)
