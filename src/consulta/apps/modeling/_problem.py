"""A modeling problem and the run's workspace.

A problem is a folder holding its statement — `problem.md`, else `problem.json` (the public modeling benchmarks'
form, read unchanged: `background`, `problem_requirement`, `dataset_path`, `dataset_description`,
`variable_description`, `addendum`), else a PDF (`problem.pdf`, `statement.pdf`, or the folder's only PDF), read to
text (`_inputs`) — and its data files: CSV tables, and Excel workbooks (.xlsx) whose sheets are read as tables named
`<workbook's stem>.<sheet>.csv` (`_inputs`).

The runs of a problem live under `<app data dir>/runs/<folder name>-<id>` (the id a hash of the folder's resolved
path), each in a workspace of its own: `<that folder>/<thread id>`, the thread id being the id of the conversation's
first run. So two runs on one problem never share files, while a resumed run, and a message that continues its
conversation (the person's decision at an escalation), find the run's workspace again. The problem's files are copied
into the workspace's `problem/` folder, once, as the team reads them: a PDF statement's text as `problem.md`, each
workbook's tables as CSV files, the PDF and the workbooks themselves kept in `problem/original/` (the problem as it
was given; the team reads the text and tables).

A folder that is not a problem is refused with a `ProblemError` (one line in the person's language; the terminal
exits 2 before any run is recorded): missing or not a folder, a file in it the system does not let us read, without a
statement, without data, a statement or data file that is not UTF-8, a data file that is not a table (a CSV with a
header and at least one data row, each row as wide as the header), a data file over `MAX_DATA_BYTES` (50 MB: the
team's scripts load a table whole, within a 2 GB sandbox) or a statement over `MAX_STATEMENT_BYTES` (1 MB), and a PDF
or workbook `_inputs` refuses, and two data files read as tables of one name (`distinct_tables`: a CSV named like a
workbook sheet's table).

A problem may also hold `tasks.json` (`TASKS_FILE`): the tasks a person corrected on the page (`_upload`), for the
statement it names by its SHA-256 (tasks for another statement are not its tasks: the statement's own are read).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from ._files import write_atomic
from ._inputs import (
    DATA_SUFFIXES,
    MAX_DATA_BYTES,
    MAX_STATEMENT_BYTES,
    PDF_SUFFIX,
    TABLE_SUFFIX,
    WORKBOOK_SUFFIX,
    ProblemError,
    pdf_statement,
    size_text,
    table_names,
    workbook_tables,
)
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

TASKS_FILE = "tasks.json"
"""The tasks a person corrected: `{"statement_sha256": …, "tasks": [{"number", "text", "asks"}, …]}`."""
ORIGINALS = "original"
"""The folder of a workspace's `problem/` that keeps the PDF and workbooks the problem was given as."""


def _text(path: Path, limit: int) -> str:
    """`path`'s text: ProblemError when it is over `limit` bytes or not UTF-8."""
    size = path.stat().st_size
    if size > limit:
        raise ProblemError("too_big", file=path.name, size=size_text(size), limit=size_text(limit))
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


def statement_pdf(folder: Path) -> Path | None:
    """The PDF that is `folder`'s statement when it has no problem.md or problem.json: `problem.pdf`, else
    `statement.pdf`, else its only PDF; None when it has none; ProblemError `several_pdfs` when it has several and
    none of those names."""
    for name in ("problem.pdf", "statement.pdf"):
        if (Path(folder) / name).is_file():
            return Path(folder) / name
    pdfs = sorted(p for p in Path(folder).iterdir() if p.is_file() and _visible(p) and p.suffix.lower() == PDF_SUFFIX)
    if len(pdfs) > 1:
        raise ProblemError("several_pdfs", folder=folder, files=", ".join(p.name for p in pdfs[:6]))
    return pdfs[0] if pdfs else None


def read_statement(folder: Path) -> tuple[str, Path | None]:
    """`folder`'s statement as text (see the module), and the PDF it was read from (None: it is problem.md's text or
    problem.json's fields); ProblemError when it has none or it cannot be read."""
    folder = Path(folder)
    md, js = folder / "problem.md", folder / "problem.json"
    statement = _text(md, MAX_STATEMENT_BYTES) if md.is_file() else ""
    if not statement.strip() and js.is_file():
        try:
            data = json.loads(_text(js, MAX_STATEMENT_BYTES))
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise ProblemError("bad_json", file=js.name, fields=", ".join(_BENCHMARK_FIELDS))
        statement = _benchmark_text(data)
    if statement.strip():
        return statement, None
    pdf = statement_pdf(folder)
    if pdf is None:
        raise ProblemError("no_statement", folder=folder)
    return pdf_statement(pdf), pdf


def data_files(folder: Path) -> list[Path]:
    """`folder`'s data files (visible CSV tables and Excel workbooks), by name."""
    return sorted(
        p for p in Path(folder).iterdir() if p.is_file() and _visible(p) and p.suffix.lower() in DATA_SUFFIXES
    )


def tables_of(path: Path) -> list[str]:
    """The tables the team reads from the data file `path`: a CSV is one (checked: ProblemError `not_table`), a
    workbook one a sheet (`table_names`)."""
    if path.suffix.lower() == WORKBOOK_SUFFIX:
        return table_names(path)
    _check_table(path)
    return [path.name]


def distinct_tables(files: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """The tables the team reads, sorted, from each data file's name and the tables it is read as (`tables_of`);
    ProblemError `table_clash` when two files would be read as tables of one name, ignoring case (as a folder on macOS
    or Windows does): a CSV named like a workbook sheet's table (`<stem>.<sheet>.csv`), or two workbooks whose long
    names begin alike. Neither file is preferred nor renamed: which table the statement means, and whether the CSV is
    that sheet again, only the person knows (`file` is the later of the two in `files`, `other` the earlier)."""
    owners: dict[str, str] = {}
    tables: list[str] = []
    for name, read_as in files:
        for table in read_as:
            other = owners.setdefault(table.lower(), name)
            if other != name:
                raise ProblemError("table_clash", file=name, other=other, table=table)
            tables.append(table)
    return sorted(tables)


def _visible(path: Path) -> bool:
    return not path.name.startswith(".")


def load_problem(folder: Path, *, name: str | None = None) -> Problem:
    """The problem in `folder`, every file checked (ProblemError saying what is wrong when it is not one); its title
    is the statement's first heading, else `name` (the folder's name when not given). Its `data_files` are the tables
    the team reads (a workbook's as `table_names` calls them; in a workspace, the files `prepare_workspace` wrote)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ProblemError("not_folder" if folder.exists() else "missing", folder=folder)
    try:
        statement, _ = read_statement(folder)
        if not statement.strip():
            raise ProblemError("no_statement", folder=folder)
        files = data_files(folder)
        if not files:
            raise ProblemError("no_data", folder=folder)
        tables = distinct_tables((path.name, tables_of(path)) for path in files)
    except OSError as error:  # a file or the folder the system does not let us read (permissions, a broken disk)
        raise ProblemError("unreadable", file=error.filename or folder, detail=error.strerror or error) from None
    title, lang = title_and_lang(statement, name or folder.name)
    tasks = corrected_tasks(folder, statement)
    return Problem(title=title, statement=statement, data_files=tables, lang=lang, tasks=tasks)


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
    """Copy the problem into `workspace/problem/` as the team reads it (see the module: its statement as text, its
    corrected tasks, its tables; the PDF and workbooks it came as into `original/`) and make the output folders;
    files already there are kept (a resumed run, or the next message of its conversation, sees what it started with,
    even if the problem's folder changed since). The problem as the workspace holds it."""
    load_problem(problem)
    source, target = Path(problem), Path(workspace) / "problem"
    statement, pdf = read_statement(source)
    if pdf is not None:
        _put(target / ORIGINALS / pdf.name, pdf.read_bytes)
        _put(target / "problem.md", lambda: statement.encode("utf-8"))
    for path in sorted(source.iterdir()):
        if not path.is_file():
            continue
        if path.name in ("problem.md", "problem.json", TASKS_FILE) or path.suffix.lower() == TABLE_SUFFIX:
            _put(target / path.name, path.read_bytes)
        elif path.suffix.lower() == WORKBOOK_SUFFIX and _visible(path):
            _put(target / ORIGINALS / path.name, path.read_bytes)
            if not all((target / table).exists() for table in table_names(path)):
                for table in workbook_tables(path):
                    _put(target / table.name, lambda table=table: table.content)  # type: ignore[misc]
    for folder in ("data", "code", "results", "figures", "paper", "consultation", "validation", "state"):
        (Path(workspace) / folder).mkdir(parents=True, exist_ok=True)
    return load_problem(target, name=source.resolve().name)


def _put(dest: Path, content: Callable[[], bytes]) -> None:
    """Write `dest` (atomically) unless it is there."""
    if not dest.exists():
        write_atomic(dest, content())
