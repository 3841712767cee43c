"""The validation gates (seed 002 §8: validation is not consultation): four fixed points of a run — the data is
ready, the code runs, the results are trained, the paper is written — each ending in a verdict APPROVED,
CONDITIONAL or REJECTED with its reasons, written as a validation record `validation/{gate}_{attempt}.md`.

The checks code can make come first (`code_checks`, see `_checks`); when one fails the verdict is REJECTED,
decided by code alone (`code_verdict`), before any model is asked. Otherwise the validator decides.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field

from ._checks import (
    CheckFailure,
    DataSpec,
    TableSpec,
    check_code_ran,
    check_data,
    check_files_exist,
    check_paper_figures,
    check_paper_numbers,
    check_table,
)
from ._files import create_once
from ._fit_checks import check_fit_means_something
from ._sandbox_run import run_record, run_script
from ._task_models import check_task_models

__all__ = [
    "GATES",
    "CheckFailure",
    "DataSpec",
    "Gate",
    "Status",
    "Verdict",
    "code_checks",
    "code_verdict",
    "read_validation_record",
    "record_path",
    "validation_records",
    "write_validation_record",
]

Gate = Literal["data_ready", "code_runs", "results_trained", "paper_written"]
GATES: tuple[Gate, ...] = ("data_ready", "code_runs", "results_trained", "paper_written")
Status = Literal["APPROVED", "CONDITIONAL", "REJECTED"]
MAX_ATTEMPTS = 3
"""Reworks a gate allows before the Director escalates to the person."""


class Verdict(BaseModel):
    """A gate's decision: `status` with its `reasons` (each one line), the `attempt` (1, 2, 3 …), and who decided:
    `code` (a check failed) or the `validator`."""

    gate: Gate
    status: Status
    reasons: list[str] = Field(default_factory=list)
    attempt: int = Field(1, ge=1)
    decided_by: Literal["code", "validator"] = "validator"
    decided_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


# ---- the checks of each gate --------------------------------------------------------------------------------------


def _data_ready(workspace: Path, spec: DataSpec | None) -> list[CheckFailure]:
    return check_files_exist(workspace, ["problem/*"]) + check_data(workspace, spec)


def _code_runs(workspace: Path, spec: DataSpec | None) -> list[CheckFailure]:
    """Every script ran to its end, as it is now: a script with no run on record, or changed since, is run now."""
    failures = check_files_exist(workspace, ["code/*.py"])
    runs = []
    for script in sorted((workspace / "code").glob("*.py")):
        record = run_record(script)
        if record is None or record.sha256 != hashlib.sha256(script.read_bytes()).hexdigest():
            record = run_script(workspace, script)
        detail = record.error or ""
        if record.stderr.strip():
            detail += ("; " if detail else "") + "stderr: " + record.stderr.strip().splitlines()[-1][:300]
        runs.append((script, record.ok, detail or f"exit status {record.returncode}"))
    return failures + check_code_ran(workspace, runs)


def _results_trained(workspace: Path, spec: DataSpec | None) -> list[CheckFailure]:
    failures = _code_runs(workspace, spec) + check_files_exist(workspace, ["results/*.csv", "figures/*.png"])
    for path in sorted((workspace / "results").glob("*.csv")):
        try:
            frame = pd.read_csv(path)
        except (ValueError, UnicodeDecodeError) as error:
            failures.append(CheckFailure("readable", f"results/{path.name} is not a readable CSV file.", str(error)))
            continue
        failures += [
            CheckFailure(f.check, f.message.replace(f"data/{path.name}", f"results/{path.name}"), f.evidence)
            for f in check_table(
                frame, TableSpec(file=path.name)
            )  # results: no NaN, no empty table, no duplicated rows
        ]
    failures += check_task_models(workspace)  # each task's family answers what the task asks
    return failures + check_fit_means_something(workspace)  # a model that explains nothing is no result


def _paper_written(workspace: Path, spec: DataSpec | None) -> list[CheckFailure]:
    failures = check_files_exist(workspace, ["paper/paper.md"])
    if failures:
        return failures
    failures += check_paper_numbers(workspace) + check_paper_figures(workspace)
    pdf, md = workspace / "paper" / "paper.pdf", workspace / "paper" / "paper.md"
    if not pdf.is_file():
        failures.append(
            CheckFailure(
                "files_exist",
                "paper/paper.pdf is missing: render the paper (render_pdf) before this gate.",
                "paper/paper.pdf: missing",
            )
        )
    elif pdf.stat().st_mtime < md.stat().st_mtime:
        failures.append(
            CheckFailure(
                "files_exist",
                "paper/paper.pdf is older than paper/paper.md: render the paper again.",
                "paper/paper.pdf older than paper/paper.md",
            )
        )
    return failures


_CHECKS: dict[str, Callable[[Path, DataSpec | None], list[CheckFailure]]] = {
    "data_ready": _data_ready,
    "code_runs": _code_runs,
    "results_trained": _results_trained,
    "paper_written": _paper_written,
}


def code_checks(gate: str, workspace: Path, *, spec: DataSpec | None = None) -> list[CheckFailure]:
    """The failures of the checks code makes at `gate` (empty: the validator decides). `spec` says what the data
    should satisfy (keys, sequences, counts, shares, totals); without it that is inferred from the data. The
    `code_runs` and `results_trained` gates run a script that has no run on record for its current text."""
    check = _CHECKS.get(gate)
    if check is None:
        raise ValueError(f"Unknown gate {gate!r}; the gates are {', '.join(GATES)}.")
    return check(Path(workspace), spec)


def code_verdict(gate: Gate, workspace: Path, *, attempt: int, spec: DataSpec | None = None) -> Verdict | None:
    """REJECTED, decided by code, when a check fails (one reason per failure: check, message, evidence); None when
    every check passes and the validator must decide."""
    failures = code_checks(gate, workspace, spec=spec)
    if not failures:
        return None
    reasons = [f"[{f.check}] {f.message} Evidence: {f.evidence}" for f in failures]
    return Verdict(gate=gate, status="REJECTED", reasons=reasons, attempt=attempt, decided_by="code")


# ---- the record ---------------------------------------------------------------------------------------------------

_FIELDS = {"gate": "关卡", "status": "结论", "attempt": "轮次", "decided_by": "判定方", "decided_at": "时间"}


def _markdown(verdict: Verdict) -> str:
    rows = "\n".join(f"| {label} | {getattr(verdict, key)} |" for key, label in _FIELDS.items())
    reasons = "\n".join(f"- {' '.join(r.split())}" for r in verdict.reasons) or "- （无）"
    return (
        f"# 验证记录: {verdict.gate} #{verdict.attempt}\n\n| 字段 | 值 |\n|------|------|\n{rows}\n\n---\n\n"
        f"## 结论\n\n{verdict.status}\n\n## 理由\n\n{reasons}\n"
    )


def record_path(workspace: Path, gate: str, attempt: int) -> Path:
    return Path(workspace) / "validation" / f"{gate}_{attempt}.md"


def write_validation_record(workspace: Path, verdict: Verdict) -> Path:
    """Write `validation/{gate}_{attempt}.md` (the seed's record style: a table, then the reasons) atomically and at
    most once: when a record of this gate and attempt exists (a resumed run deciding again) it is kept unchanged
    and its path returned — read it back with `read_validation_record`."""
    path = record_path(workspace, verdict.gate, verdict.attempt)
    create_once(path, _markdown(verdict).encode("utf-8"))
    return path


def read_validation_record(path: Path) -> Verdict:
    """The verdict a validation record holds (ValueError when the file is not one)."""
    text = Path(path).read_text(encoding="utf-8")
    labels = {label: key for key, label in _FIELDS.items()}
    values = {
        labels[m.group(1)]: m.group(2).strip()
        for m in re.finditer(r"^\| (\S+) \| (.*) \|$", text, re.M)
        if m.group(1) in labels
    }
    reasons_part = text.split("## 理由", 1)[1] if "## 理由" in text else ""
    reasons = [
        line[2:].strip() for line in reasons_part.splitlines() if line.startswith("- ") and line.strip() != "- （无）"
    ]
    try:
        return Verdict(reasons=reasons, **values)
    except ValueError as error:
        raise ValueError(f"{Path(path).name} is not a validation record: {error}") from None


def validation_records(workspace: Path) -> list[tuple[Path, Verdict]]:
    """Every validation record of the workspace that reads, by gate order then attempt."""
    found = []
    for path in (Path(workspace) / "validation").glob("*.md"):
        try:
            found.append((path, read_validation_record(path)))
        except (ValueError, OSError):
            continue
    return sorted(found, key=lambda item: (GATES.index(item[1].gate), item[1].attempt))
