"""A modeling problem and the run's workspace.

A problem is a folder holding `problem.md` and/or `problem.json` (the public modeling benchmarks' form, read
unchanged: `background`, `problem_requirement`, `dataset_path`, `dataset_description`, `variable_description`,
`addendum`) and its data files (CSV). The runs of a problem live under `<app data dir>/runs/<folder name>-<id>` (the
id a hash of the folder's resolved path), each in a workspace of its own: `<that folder>/<thread id>`, the thread id
being the id of the conversation's first run. So two runs on one problem never share files, while a resumed run, and
a message that continues its conversation (the person's decision at an escalation), find the run's workspace again.
The problem's files are copied into the workspace's `problem/` folder, once.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from pydantic import BaseModel, Field

from ...runtime import ConfigError
from ._files import write_atomic

__all__ = ["Problem", "load_problem", "prepare_workspace", "run_workspace", "workspace_path"]

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


def load_problem(folder: Path) -> Problem:
    """The problem in `folder` (ConfigError saying what is missing when it is not one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            f"The problem folder {folder} does not exist: give --problem a folder holding problem.md or problem.json and the data."
        )
    md, js = folder / "problem.md", folder / "problem.json"
    if not md.is_file() and not js.is_file():
        raise ConfigError(f"{folder} has neither problem.md nor problem.json: put the problem statement there.")
    statement = md.read_text(encoding="utf-8") if md.is_file() else ""
    if not statement and js.is_file():
        try:
            data = json.loads(js.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ConfigError(f"{js} is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise ConfigError(
                f"{js} must be a JSON object with the benchmark's fields ({', '.join(_BENCHMARK_FIELDS)})."
            )
        statement = _benchmark_text(data)
    data_files = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix.lower() in _DATA_SUFFIXES)
    if not data_files:
        raise ConfigError(f"{folder} holds no data file (*.csv): put the problem's data next to its statement.")
    heading = re.search(r"^#\s+(.+)$", statement, re.M)
    title = heading.group(1).strip() if heading else folder.name.replace("_", " ")
    lang = "zh-CN" if re.search(r"[\u4e00-\u9fff]", statement) else "en"
    return Problem(title=title, statement=statement, data_files=data_files, lang=lang)


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
    """Copy the problem's statement and data into `workspace/problem/` (files already there are kept: a resumed run
    sees what it started with) and make the output folders; the problem as loaded."""
    loaded = load_problem(problem)
    target = Path(workspace) / "problem"
    for source in sorted(Path(problem).iterdir()):
        if source.is_file() and (
            source.suffix.lower() in _DATA_SUFFIXES or source.name in ("problem.md", "problem.json")
        ):
            dest = target / source.name
            if not dest.exists():
                write_atomic(dest, source.read_bytes())
    for folder in ("data", "code", "results", "figures", "paper", "consultation", "validation", "state"):
        (Path(workspace) / folder).mkdir(parents=True, exist_ok=True)
    return loaded
