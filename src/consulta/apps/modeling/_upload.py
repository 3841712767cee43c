"""A problem a person brings through the page: its statement and data files uploaded into the session's own problem
folder (`<app data dir>/sessions/<digest of the session>/problem/`, which no other session reads), the tasks code
reads from the statement shown, corrected by the person (a task's text or kind changed, one dropped, one added:
`TASKS_FILE`) before the team starts. A session's runs work in workspaces of its own
(`<that folder>/../runs/<conversation>`) on a copy of the problem made when the conversation's first run starts.

Each upload is checked before it is put in place, and put in place atomically (the apps' shared `FileUpload`): a
plain file name (no folder part, no leading dot), a statement of text or markdown (`.md`, `.markdown`, `.txt`, UTF-8,
at most `MAX_STATEMENT_BYTES`) or a PDF (at most `MAX_PDF_BYTES`, read to text as a `--problem` folder's is:
`_inputs`), not empty and naming at least one task, and data files the problem loader reads (`.csv` tables, `.xlsx`
workbooks whose sheets are read as tables, at most `MAX_DATA_BYTES` each, at most `MAX_DATA_FILES`). A statement is
kept as it was uploaded, as `problem.md` or `problem.pdf` (a new one replaces either), a workbook as itself: the page
shows the files the person gave, and a run's workspace gets them with their text and tables (`prepare_workspace`). A
refusal is an `UploadRefused` (one line in the person's language, `modeling.upload.error.<code>`, or
`modeling.problem.<code>` for what the file readers refuse) and changes nothing. The statement is data: it is stored
and quoted, never followed.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...i18n import t
from ...runtime import ConsultaError
from .._def import AppEnv
from .._uploads import FileUpload
from ._files import write_atomic
from ._inputs import DATA_SUFFIXES, MAX_PDF_BYTES, PDF_SUFFIX, WORKBOOK_SUFFIX, pdf_statement, table_names
from ._problem import (
    MAX_DATA_BYTES,
    MAX_STATEMENT_BYTES,
    TASKS_FILE,
    ProblemError,
    _check_table,
    data_files,
    distinct_tables,
    load_problem,
    read_statement,
    statement_digest,
    title_and_lang,
    workspace_path,
)
from ._tasks import MAX_TASKS, MAX_TEXT, Asks, Task, statement_tasks

__all__ = [
    "FIELD",
    "MAX_DATA_FILES",
    "STATEMENT_SUFFIXES",
    "ProblemView",
    "TaskEdit",
    "UploadRefused",
    "clear_problem",
    "drop_data",
    "problem_source",
    "problem_view",
    "runs_folder",
    "save_data",
    "save_statement",
    "session_problem",
    "set_tasks",
]

FIELD = "file"
"""The multipart part an upload is sent in (and the field its errors name)."""
STATEMENT = "problem.md"
"""A text statement's name in the problem folder (what the problem loader reads), whatever it was uploaded as."""
STATEMENT_PDF = "problem.pdf"
"""A PDF statement's name there."""
TEXT_SUFFIXES = (".md", ".markdown", ".txt")
STATEMENT_SUFFIXES = (*TEXT_SUFFIXES, PDF_SUFFIX)
MAX_DATA_FILES = 10
ASKS: tuple[str, ...] = Asks.__args__  # type: ignore[attr-defined]
_META = ".upload.json"
"""The name the statement was uploaded under (hidden: not a file of the problem)."""
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class UploadRefused(ConsultaError):
    """An upload or a correction refused, nothing changed. `error_code`: `path_like_name`, `unsupported_file_type`,
    `file_too_large`, `empty_file`, `empty_statement`, `no_tasks`, `not_utf8`, `not_table`, `too_many_files`,
    `no_such_file`, `bad_tasks`, `table_clash` (a data file read as a table another one is read as), what the file
    readers refuse (`pdf_unreadable`, `pdf_encrypted`, `pdf_no_text`, `not_workbook`, `workbook_empty`, the bounds'
    `pdf_too_long`, `workbook_too_big`, `sheet_too_long`, …: a `ProblemError`'s reason, `of_file`, see `_inputs`), or
    a multipart reading code (`missing_file`, `unsupported_media_type`, `invalid_request`). `status`: the HTTP status
    it answers with."""

    code = "upload_refused"

    def __init__(self, error_code: str, *, status: int = 422, key: str | None = None, **values: Any) -> None:
        self.error_code = error_code
        self.status = status
        self.key = key or f"modeling.upload.error.{error_code}"
        self.values = {k: str(v) for k, v in values.items()}
        super().__init__(self.localized("en"))

    def localized(self, lang: str) -> str:
        values = {
            "statement_types": ", ".join(STATEMENT_SUFFIXES),
            "data_types": ", ".join(DATA_SUFFIXES),
            "max_files": MAX_DATA_FILES,
            "max_tasks": MAX_TASKS,
            "max_text": MAX_TEXT,
            **self.values,
        }
        return t(self.key, lang, **values)

    @classmethod
    def of_file(cls, error: ProblemError, name: str) -> UploadRefused:
        """A file reader's refusal of the upload `name` (in the words of `modeling.problem.<reason>`)."""
        status = 413 if error.reason == "too_big" else 422
        return cls(
            error.reason, status=status, key=f"modeling.problem.{error.reason}", **{**error.values, "file": name}
        )

    @classmethod
    def of(cls, error: Exception, name: str = "") -> UploadRefused:
        """The multipart reader's error (a ToolError: `file_too_large`, `unsupported_media_type`, `invalid_request`,
        `missing_file`) as a refusal; a refusal as it is."""
        if isinstance(error, UploadRefused):
            return error
        code = getattr(error, "error_code", "invalid_request")
        code = "body_too_large" if code == "file_too_large" else code  # the body's: its file's name is not known
        status = {"body_too_large": 413, "unsupported_media_type": 415}.get(code, 422)
        return cls(code, status=status, name=name, limit=_size(MAX_DATA_BYTES))


def _size(n: int) -> str:
    return f"{n / 1024**2:.0f} MB" if n >= 1024**2 else f"{max(n // 1024, 1)} kB"


def _lock(folder: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(folder.resolve(), threading.Lock())


# ---- where a session's problem and runs are ---------------------------------------------------------------------------


def _session_folder(env: AppEnv) -> Path | None:
    if env.session is None:
        return None
    digest = hashlib.sha256(env.session.encode("utf-8")).hexdigest()[:16]
    return Path(env.data_dir) / "sessions" / digest


def session_problem(env: AppEnv) -> Path | None:
    """The session's own problem folder (made if missing), or None for the machine's own user (the terminal)."""
    folder = _session_folder(env)
    if folder is None:
        return None
    (folder / "problem").mkdir(parents=True, exist_ok=True)
    return folder / "problem"


def runs_folder(problem: str | None, env: AppEnv) -> Path | None:
    """The folder of the runs' workspaces (the app's `data_path`): a session's own (whatever problem it works on),
    else that of the `--problem` folder, under the app's data folder (`workspace_path`)."""
    folder = _session_folder(env)
    if folder is not None:
        return folder / "runs"
    return workspace_path(env.data_dir, Path(problem)) if problem else None


def problem_source(problem: str | None, env: AppEnv) -> Path | None:
    """The problem a new run works on: the session's uploaded problem once it has a statement, else `--problem`."""
    folder = _session_folder(env)
    if folder is not None and _has_statement(folder / "problem"):
        return folder / "problem"
    return Path(problem) if problem else None


def _has_statement(folder: Path) -> bool:
    return (folder / STATEMENT).is_file() or (folder / STATEMENT_PDF).is_file()


# ---- what the page shows ----------------------------------------------------------------------------------------------


class DataFile(BaseModel):
    name: str
    size: int
    tables: list[str] = Field(default_factory=list)
    """The tables the team reads from it: a CSV is one, a workbook one a sheet (`<stem>.<sheet>.csv`)."""


class Limits(BaseModel):
    statement_types: list[str] = list(STATEMENT_SUFFIXES)
    data_types: list[str] = list(DATA_SUFFIXES)
    statement_bytes: int = MAX_STATEMENT_BYTES
    statement_pdf_bytes: int = MAX_PDF_BYTES
    data_bytes: int = MAX_DATA_BYTES
    data_files: int = MAX_DATA_FILES
    tasks: int = MAX_TASKS
    task_chars: int = MAX_TEXT
    asks: list[str] = list(ASKS)


class ProblemView(BaseModel):
    """The problem a new run of the session works on, as the page shows it."""

    source: Literal["upload", "server"] | None
    """`upload`: the session's own (editable); `server`: the one the server was started with; None: none yet."""
    statement_name: str | None = None
    """The name the statement was uploaded under."""
    title: str | None = None
    lang: str | None = None
    data_files: list[DataFile] = Field(default_factory=list)
    tasks: list[Task] = Field(default_factory=list)
    corrected: bool = False
    """The tasks are the person's corrections (else as code read them from the statement)."""
    ready: bool = False
    """The team can start on it: a statement naming a task, and data."""
    problem: str | None = None
    """Why it is not ready, or why the server's problem does not load (one line in the reader's language)."""
    limits: Limits = Field(default_factory=Limits)


def _statement(folder: Path) -> str | None:
    """The session's statement as text (a PDF's as it reads), None when it has none that reads."""
    try:
        return read_statement(folder)[0]
    except (OSError, ProblemError):
        return None


def problem_view(env: AppEnv, server_problem: str | None, lang: str) -> ProblemView:
    """What a new run of the session would work on (`problem_source`), with its tasks."""
    session = _session_folder(env)
    folder = session / "problem" if session is not None else None
    if folder is not None and _has_statement(folder):
        return _upload_view(folder, lang)
    if server_problem:
        try:
            loaded = load_problem(Path(server_problem))
        except ProblemError as error:
            return ProblemView(source="server", problem=error.localized(lang))
        return ProblemView(
            source="server", title=loaded.title, lang=loaded.lang, ready=True,
            tasks=loaded.tasks or statement_tasks(loaded.statement), corrected=loaded.tasks is not None,
            data_files=_data_files(Path(server_problem)),
        )  # fmt: skip
    view = ProblemView(source=None)
    if folder is not None and folder.is_dir():
        view.data_files = _data_files(folder)
        view.source = "upload" if view.data_files else None
    return view


def _data_files(folder: Path) -> list[DataFile]:
    """The folder's data files as the person gave them, each with the tables read from it (none when it does not
    read: the problem's line says why)."""
    files = []
    for path in data_files(folder):  # a CSV is not read here: load_problem checks it, once
        files.append(DataFile(name=path.name, size=path.stat().st_size, tables=_table_names(path)))
    return files


def _upload_view(folder: Path, lang: str) -> ProblemView:
    statement = _statement(folder) or ""
    tasks, corrected = _tasks_of(folder, statement)
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        name = str(meta.get("statement_name", STATEMENT)) if isinstance(meta, dict) else STATEMENT
    except (OSError, ValueError):
        name = STATEMENT
    title, lang_ = title_and_lang(statement, Path(name).stem)
    view = ProblemView(
        source="upload", statement_name=name, title=title, lang=lang_, data_files=_data_files(folder), tasks=tasks,
        corrected=corrected,
    )  # fmt: skip
    try:
        load_problem(folder, name=Path(name).stem)
        view.ready = bool(tasks)
    except ProblemError as error:
        view.problem = error.localized(lang) if error.reason != "no_data" else t("modeling.upload.needs_data", lang)
    return view


def _tasks_of(folder: Path, statement: str) -> tuple[list[Task], bool]:
    """The tasks the person corrected (for this statement), else those code reads from it."""
    try:
        data = json.loads((folder / TASKS_FILE).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("statement_sha256") == statement_digest(statement):
            return [Task.model_validate(row) for row in data["tasks"]][:MAX_TASKS], bool(data.get("corrected"))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return statement_tasks(statement), False


# ---- uploads ----------------------------------------------------------------------------------------------------------


def _plain(name: str | None) -> str:
    """`name` if it is a plain, visible file name, else UploadRefused `path_like_name`."""
    if not name:
        raise UploadRefused("missing_file", name="")
    if (
        Path(name).name != name
        or "\\" in name
        or name.startswith(".")
        or name in (".", "..")
        or any(ord(c) < 32 for c in name)
        or len(name) > 120
    ):
        raise UploadRefused("path_like_name", name=name[:80])
    return name


def _refuser(name: str, limit: int) -> Any:
    def refuse(code: str, message: str, hint: str | None) -> UploadRefused:
        return UploadRefused(code, status=413 if code == "file_too_large" else 422, name=name, limit=_size(limit))

    return refuse


def _check_statement(path: Path, name: str) -> None:
    """A statement upload's content: text (UTF-8) or a PDF that reads (`pdf_statement`), naming a task."""
    if Path(name).suffix.lower() == PDF_SUFFIX:
        try:
            text = pdf_statement(path, name=name)
        except ProblemError as error:
            raise UploadRefused.of_file(error, name) from None
    else:
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise UploadRefused("not_utf8", name=name, at=error.start) from None
        if "\x00" in text:
            raise UploadRefused("not_utf8", name=name, at=text.index("\x00"))
    if not text.strip():
        raise UploadRefused("empty_statement", name=name)
    if not statement_tasks(text):
        raise UploadRefused("no_tasks", name=name)


def _check_data(path: Path, name: str) -> None:
    """A data upload's content: a CSV table, or a workbook with a table in it (`workbook_tables`)."""
    try:
        if Path(name).suffix.lower() == WORKBOOK_SUFFIX:
            table_names(path, name=name)  # kept: the file in place is not read again
        else:
            _check_table(path)
    except ProblemError as error:
        if error.reason == "not_table":
            raise UploadRefused("not_table", name=name, detail=error.values.get("detail", "")) from None
        raise UploadRefused.of_file(error, name) from None


def _check_apart(folder: Path, path: Path, name: str) -> None:
    """A data upload (checked: `_check_data`) read as no table of the same name as one of the folder's other data
    files (`distinct_tables`: `table_clash`, as `--problem` refuses it); a file of its own name is the one it
    replaces. Called under the folder's lock, as the upload is put in place."""
    present = [(p.name, _table_names(p)) for p in data_files(folder) if p.name != name]
    try:
        distinct_tables([*present, (name, _table_names(path, name=name))])
    except ProblemError as error:
        raise UploadRefused.of_file(error, name) from None


def _table_names(path: Path, *, name: str | None = None) -> list[str]:
    """The tables a data file in place is read as (a CSV's name is its table's; a workbook's are kept from its check);
    none for a file that no longer reads (the problem's line says why)."""
    name = name or path.name
    if Path(name).suffix.lower() != WORKBOOK_SUFFIX:
        return [name]
    try:
        return table_names(path, name=name)
    except ProblemError:
        return []


class _Sink:
    """A `FileUpload` that, once committed, runs `after` (under the folder's lock) and returns its view."""

    def __init__(self, upload: FileUpload, after: Any) -> None:
        self.upload = upload
        self.after = after

    def write(self, chunk: bytes) -> None:
        self.upload.write(chunk)

    def commit(self) -> Any:
        return self.after(self.upload)

    def abort(self) -> None:
        self.upload.abort()


def save_statement(folder: Path, name: str | None) -> _Sink:
    """The sink of a statement uploaded as `name` into the session's problem `folder`: checked (see the module),
    put in place as `problem.md` (text) or `problem.pdf` (the other one removed); the tasks go back to those code
    reads from it. UploadRefused for a name or type refused at once (nothing written)."""
    name = _plain(name)
    suffix = Path(name).suffix.lower()
    if suffix not in STATEMENT_SUFFIXES:
        raise UploadRefused("unsupported_file_type", status=415, name=name, types=", ".join(STATEMENT_SUFFIXES))
    pdf = suffix == PDF_SUFFIX
    limit = MAX_PDF_BYTES if pdf else MAX_STATEMENT_BYTES
    target, other = (STATEMENT_PDF, STATEMENT) if pdf else (STATEMENT, STATEMENT_PDF)
    upload = FileUpload(
        folder, name, limit=limit, refuse=_refuser(name, limit), check=_check_statement, target=target
    )  # fmt: skip

    def after(upload: FileUpload) -> Path:
        with _lock(folder):
            path = upload.commit()
            (folder / other).unlink(missing_ok=True)
            write_atomic(folder / _META, json.dumps({"statement_name": name}, ensure_ascii=False).encode())
            (folder / TASKS_FILE).unlink(missing_ok=True)  # a new statement: its own tasks, as code reads them
            return path

    return _Sink(upload, after)


def save_data(folder: Path, name: str | None) -> _Sink:
    """The sink of a data file uploaded as `name` into the session's problem `folder`: a CSV table or a workbook
    holding one (the problem loader's checks) of at most MAX_DATA_BYTES, one of at most MAX_DATA_FILES (a file of the
    same name is replaced), read as no table another of its data files is read as (`table_clash`)."""
    name = _plain(name)
    if Path(name).suffix.lower() not in DATA_SUFFIXES:
        raise UploadRefused("unsupported_file_type", status=415, name=name, types=", ".join(DATA_SUFFIXES))
    present = {path.name for path in data_files(folder)}
    if name not in present and len(present) >= MAX_DATA_FILES:
        raise UploadRefused("too_many_files", name=name)

    def check(path: Path, name: str) -> None:
        _check_data(path, name)
        _check_apart(folder, path, name)

    upload = FileUpload(folder, name, limit=MAX_DATA_BYTES, refuse=_refuser(name, MAX_DATA_BYTES), check=check)

    def after(upload: FileUpload) -> Path:
        with _lock(folder):
            return upload.commit()

    return _Sink(upload, after)


def drop_data(folder: Path, name: str) -> None:
    """Remove the data file `name` from the session's problem (UploadRefused `no_such_file` when it has none: a
    name that could not be a file of it, a path among them, is none of its files either)."""
    with _lock(folder):
        held = {p.name: p for p in folder.iterdir() if p.is_file() and not p.is_symlink()} if folder.is_dir() else {}
        path = held.get(name)
        if path is None or path.suffix.lower() not in DATA_SUFFIXES:
            raise UploadRefused("no_such_file", status=404, name=name[:80])
        path.unlink()


def clear_problem(folder: Path) -> None:
    """Forget the session's uploaded problem (its runs keep their own copies)."""
    with _lock(folder):
        for path in folder.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


class TaskEdit(BaseModel):
    """A task as the person corrected it (its number is its place in the list)."""

    text: str = Field(max_length=4 * MAX_TEXT)
    asks: str = Field(max_length=40)


def set_tasks(folder: Path, edits: list[TaskEdit]) -> list[Task]:
    """Put the person's tasks on record for the session's statement (`TASKS_FILE`, written atomically): each a
    text of 1 to MAX_TEXT characters and a kind of `Asks`, 1 to MAX_TASKS of them; UploadRefused `bad_tasks`
    (naming the first that is not) or `no_statement`, nothing changed."""
    with _lock(folder):
        statement = _statement(folder)
        if statement is None:
            raise UploadRefused("no_statement", status=409)
        if not edits or len(edits) > MAX_TASKS:
            raise UploadRefused("bad_task_count", n=len(edits))
        tasks = []
        for number, edit in enumerate(edits, start=1):
            text = " ".join(edit.text.split())
            if not text or len(text) > MAX_TEXT:
                raise UploadRefused("bad_task_text", n=number, length=len(text))
            if edit.asks not in ASKS:
                raise UploadRefused("bad_task_kind", n=number, kind=re.sub(r"[^\w-]", "", edit.asks)[:40])
            tasks.append(Task(number=number, text=text, asks=edit.asks))  # type: ignore[arg-type]
        record = {
            "statement_sha256": statement_digest(statement),
            "corrected": True,
            "tasks": [task.model_dump() for task in tasks],
        }
        write_atomic(folder / TASKS_FILE, json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8"))
    return tasks
