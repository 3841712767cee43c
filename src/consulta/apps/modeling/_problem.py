"""A modeling problem and the run's workspace.

A problem is a folder holding `problem.md` and/or `problem.json` (the public modeling benchmarks' form, read
unchanged: `background`, `problem_requirement`, `dataset_path`, `dataset_description`, `variable_description`,
`addendum`) and its data files (CSV). The runs of a problem live under `<app data dir>/runs/<folder name>-<id>` (the
id a hash of the folder's resolved path), each in a workspace of its own: `<that folder>/<thread id>`, the thread id
being the id of the conversation's first run. So two runs on one problem never share files, while a resumed run, and
a message that continues its conversation (the person's decision at an escalation), find the run's workspace again.
The problem's files are copied into the workspace's `problem/` folder, once.

A folder that is not a problem is refused with a `ProblemError` (one line in the person's language; the terminal
exits 2 before any run is recorded): missing, without a statement, without data, a statement or data file that is not
UTF-8, a data file that is not a table (a CSV with a header and at least one data row, each row as wide as the
header), a data file over `MAX_DATA_BYTES` (50 MB: the team's scripts load a table whole, within a 2 GB sandbox) or a
statement over `MAX_STATEMENT_BYTES` (1 MB).

A problem may also hold `tasks.json` (`TASKS_FILE`): the tasks a person corrected on the page (`_upload`), for the
statement it names by its SHA-256 (tasks for another statement are not its tasks: the statement's own are read).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...i18n import t
from ...runtime import ConfigError
from ._files import write_atomic
from ._tasks import MAX_TASKS, Task

__all__ = [
    "MAX_DATA_BYTES",
    "MAX_STATEMENT_BYTES",
    "TASKS_FILE",
    "Problem",
    "ProblemError",
    "load_problem",
    "prepare_workspace",
    "run_workspace",
    "workspace_path",
]

MAX_DATA_BYTES = 50 * 1024 * 1024
"""The largest data file a problem may hold."""
MAX_STATEMENT_BYTES = 1024 * 1024
"""The largest problem.md or problem.json."""
TASKS_FILE = "tasks.json"
"""The tasks a person corrected: `{"statement_sha256": …, "tasks": [{"number", "text", "asks"}, …]}`."""


class ProblemError(ConfigError):
    """A `--problem` folder that is not a problem: `reason` (`missing`, `no_statement`, `bad_json`, `no_data`,
    `not_utf8`, `not_table`, `too_big`, `bad_tasks`) and the values its message names; its words are the catalog's
    `modeling.problem.<reason>` in the person's language."""

    def __init__(self, reason: str, **values: Any) -> None:
        self.reason = reason
        self.values = {k: str(v) for k, v in values.items()}
        super().__init__(self.localized("en"))

    def localized(self, lang: str) -> str:
        return t(f"modeling.problem.{self.reason}", lang, **self.values)


def _size(n: int) -> str:
    return f"{n / 1024**2:.1f} MB" if n >= 1024**2 else f"{max(n // 1024, 1)} kB"


def _text(path: Path, limit: int) -> str:
    """`path`'s text: ProblemError when it is over `limit` bytes or not UTF-8."""
    size = path.stat().st_size
    if size > limit:
        raise ProblemError("too_big", file=path.name, size=_size(size), limit=_size(limit))
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ProblemError("not_utf8", file=path.name, at=error.start) from None


def _check_table(path: Path) -> None:
    """A data file must be a table: a header and at least one data row, every row as wide as the header."""
    text = _text(path, MAX_DATA_BYTES)
    if "\x00" in text:
        raise ProblemError("not_table", file=path.name, detail="NUL")
    try:
        rows = [row for row in csv.reader(io.StringIO(text)) if row]
    except csv.Error as error:
        raise ProblemError("not_table", file=path.name, detail=str(error)) from None
    if len(rows) < 2 or not any(cell.strip() for cell in rows[0]):
        raise ProblemError("not_table", file=path.name, detail=f"{len(rows)} row(s)")
    width = len(rows[0])
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise ProblemError("not_table", file=path.name, detail=f"row {number}: {len(row)} ≠ {width}")


_DATA_SUFFIXES = (".csv",)
_BENCHMARK_FIELDS = (
    "background",
    "problem_requirement",
    "dataset_path",
    "dataset_description",
    "variable_description",
    "addendum",
)


class Problem(BaseModel):
    """What the team is given: a title, the statement as text (the markdown, or the benchmark JSON's fields written
    out), the data files (names within `problem/`) and the language the statement is written in."""

    title: str
    statement: str
    data_files: list[str] = Field(default_factory=list)
    lang: str = "en"
    tasks: list[Task] | None = None
    """The tasks as a person corrected them (`TASKS_FILE`); None: the statement's own, as code reads them."""


def statement_digest(statement: str) -> str:
    """The SHA-256 of a statement's text, which names it in `TASKS_FILE`."""
    return hashlib.sha256(statement.encode("utf-8")).hexdigest()


def corrected_tasks(folder: Path, statement: str) -> list[Task] | None:
    """The tasks of `folder`'s `TASKS_FILE` if it is there and was written for `statement` (another file of that
    name is not the page's record: ignored); ProblemError `bad_tasks` when the record's tasks do not read."""
    path = Path(folder) / TASKS_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(_text(path, MAX_STATEMENT_BYTES))
    except (ValueError, ProblemError):
        return None  # not the page's record (a file of the problem's own of that name)
    if not isinstance(data, dict) or data.get("statement_sha256") != statement_digest(statement):
        return None
    try:
        tasks = [Task.model_validate(row) for row in data["tasks"][:MAX_TASKS]]
    except (ValueError, KeyError, TypeError):
        raise ProblemError("bad_tasks", file=path.name) from None
    return tasks or None


def _benchmark_text(data: dict[str, object]) -> str:
    """The benchmark JSON's fields as a statement, in the benchmark's own order (fields it lacks are left out)."""
    parts = []
    for key in _BENCHMARK_FIELDS:
        value = data.get(key)
        if value in (None, "", [], {}):
            continue
        if isinstance(value, dict):
            body = "\n".join(f"- `{k}`: {v}" for k, v in value.items())
        elif isinstance(value, list):
            body = "\n".join(f"- `{v}`" for v in value)
        else:
            body = str(value)
        parts.append(f"## {key}\n\n{body}")
    return "\n\n".join(parts)


def load_problem(folder: Path, *, name: str | None = None) -> Problem:
    """The problem in `folder`, every file checked (ProblemError saying what is wrong when it is not one); its title
    is the statement's first heading, else `name` (the folder's name when not given)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ProblemError("missing", folder=folder)
    md, js = folder / "problem.md", folder / "problem.json"
    if not md.is_file() and not js.is_file():
        raise ProblemError("no_statement", folder=folder)
    statement = _text(md, MAX_STATEMENT_BYTES) if md.is_file() else ""
    if not statement and js.is_file():
        try:
            data = json.loads(_text(js, MAX_STATEMENT_BYTES))
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ProblemError("bad_json", file=js.name, fields=", ".join(_BENCHMARK_FIELDS))
        statement = _benchmark_text(data)
    if not statement.strip():
        raise ProblemError("no_statement", folder=folder)
    data_files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix.lower() in _DATA_SUFFIXES)
    if not data_files:
        raise ProblemError("no_data", folder=folder)
    for name in data_files:
        _check_table(folder / name)
    title, lang = title_and_lang(statement, name or folder.name)
    tasks = corrected_tasks(folder, statement)
    return Problem(title=title, statement=statement, data_files=data_files, lang=lang, tasks=tasks)


def title_and_lang(statement: str, name: str) -> tuple[str, str]:
    """A statement's title (its first heading, else `name`) and the language it is written in."""
    heading = re.search(r"^#\s+(.+)$", statement, re.M)
    title = heading.group(1).strip() if heading else name.replace("_", " ")
    return title, "zh-CN" if re.search(r"[\u4e00-\u9fff]", statement) else "en"


def workspace_path(data_dir: Path, problem: Path) -> Path:
    """The folder of `problem`'s runs under the app's data folder: `runs/<name>-<10 hex of its resolved path>` (each
    run's workspace is a folder in it, `run_workspace`)."""
    resolved = Path(problem).resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:10]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", resolved.name)[:40] or "problem"
    return Path(data_dir) / "runs" / f"{name}-{digest}"


def run_workspace(problem_runs: Path, thread_id: str) -> Path:
    """The workspace of the conversation `thread_id` under `problem_runs` (a `workspace_path`); ValueError for an id
    that is not one (it becomes a folder name)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", thread_id or ""):
        raise ValueError(f"{thread_id!r} is not a run id")
    return Path(problem_runs) / thread_id


def prepare_workspace(workspace: Path, problem: Path) -> Problem:
    """Copy the problem's statement, corrected tasks and data into `workspace/problem/` (files already there are
    kept: a resumed run, or the next message of its conversation, sees what it started with, even if the problem's
    folder changed since) and make the output folders; the problem as the workspace holds it."""
    load_problem(problem)
    target = Path(workspace) / "problem"
    for source in sorted(Path(problem).iterdir()):
        if source.is_file() and (
            source.suffix.lower() in _DATA_SUFFIXES or source.name in ("problem.md", "problem.json", TASKS_FILE)
        ):
            dest = target / source.name
            if not dest.exists():
                write_atomic(dest, source.read_bytes())
    for folder in ("data", "code", "results", "figures", "paper", "consultation", "validation", "state"):
        (Path(workspace) / folder).mkdir(parents=True, exist_ok=True)
    return load_problem(target, name=Path(problem).resolve().name)
