"""Running the team's code (`code/*.py` of a run's workspace) in the project's OS sandbox (`consulta.sandbox`): no
network, an unprivileged uid, wall time, CPU time, memory and process limits, files confined to a staging copy of the
workspace. Where the OS cannot give the sandbox, `run_script` raises `SandboxUnavailable` and nothing runs.

The script runs in a fresh staging folder holding copies of the workspace's `problem/`, `data/`, `code/`, `results/`
and `figures/` (the script's working directory; `__file__` is its path there). When it runs to its end, the CSVs it
wrote into `data/` and `results/` and the images it wrote into `figures/` are copied back into the workspace, each
file atomically; anything else it wrote is dropped, and so is anything that is not a regular file of its own (a
symbolic link, a hard link, a file under a folder the script replaced with a link): nothing taken back comes from
outside the staging folder, and it lands only at `<workspace>/<folder>/<name>`. A script that fails changes nothing in the workspace. Either way
the run is recorded in `code/<script>.run.json` (the script's sha256, the outcome, the files it produced), which the
`code_runs` gate reads.

Figures may carry Chinese text: a CJK font found on the system (Debian's fonts-noto-cjk) is copied into the staging
folder's `~/.fonts` (the sandbox reads nothing outside it) and put first in matplotlib's sans-serif list.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import tempfile
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from pydantic import BaseModel

from ...runtime import ToolError
from ...sandbox import Limits, run_python
from ._files import write_atomic

__all__ = ["OUTPUTS", "ScriptRun", "run_record", "run_script"]

DEFAULT_TIMEOUT = 120.0
"""Seconds a script may run (wall time); CPU time is held to the same."""
MEMORY_MB = 2048
OUTPUTS = {"data": (".csv",), "results": (".csv", ".json"), "figures": (".png", ".svg", ".jpg", ".jpeg")}
"""The folders a script's outputs are taken from, and the kinds of file taken."""
_INPUTS = ("problem", "data", "code", "results", "figures")
MAX_OUTPUT_BYTES = 20 * 1024 * 1024
"""A file bigger than this is not taken back (it is named in `ScriptRun.dropped`)."""
_CJK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
)
_PRELUDE = """
import os as _os, sys as _sys
_os.environ["MPLBACKEND"] = "Agg"
_os.environ["MPLCONFIGDIR"] = _os.path.abspath(".mplconfig")
_sys.path.insert(0, _os.path.abspath("code"))
__file__ = _os.path.abspath({script!r})
del _os, _sys
"""
_MATPLOTLIBRC = (
    "backend: Agg\nfont.family: sans-serif\nfont.sans-serif: {fonts}DejaVu Sans, Arial\naxes.unicode_minus: False\n"
)


class ScriptRun(BaseModel):
    """What running one script did. `returncode` is the exit status `python script.py` would have had (0 ran to its
    end; 1 raised; a negative signal number when a limit killed it); `outputs` are the workspace-relative paths of the
    files it produced (taken back only when `ok`)."""

    script: str
    ok: bool
    returncode: int
    stdout: str
    stderr: str
    outputs: list[str]
    error: str | None = None
    """The exception (type: message, line) or the limit that stopped it."""
    stopped: str | None = None
    dropped: list[str] = []
    """Files it wrote that were not taken back (not an output kind, or too big)."""
    duration_ms: float = 0.0
    sha256: str = ""
    """Of the script that ran."""
    finished_at: str = ""


def _inside_code(workspace: Path, script: Path) -> Path:
    code = (workspace / "code").resolve()
    path = (script if script.is_absolute() else workspace / script).resolve()
    if not path.is_relative_to(code) or path.suffix != ".py":
        raise ToolError(
            "script_outside_code",
            f"{script} is not a Python file in the run's code/ folder.",
            hint="Write the script as code/<name>.py and run that.",
            field="script",
        )
    if not path.is_file():
        raise ToolError(
            "script_not_found",
            f"{path.relative_to(code.parent).as_posix()} does not exist.",
            hint="Write the script first, then run it.",
            field="script",
        )
    return path


@cache
def _cjk_font() -> Path | None:
    return next((Path(p) for p in _CJK_FONTS if Path(p).is_file()), None)


def _stage(workspace: Path, stage: Path) -> dict[str, str]:
    """Copy the inputs into `stage`; returns the sha256 of every file copied (by relative path)."""
    copied = {}
    for folder in _INPUTS:
        source = workspace / folder
        target = stage / folder
        target.mkdir(parents=True, exist_ok=True)
        if not source.is_dir():
            continue
        for path in sorted(source.rglob("*")):
            if path.is_file() and not path.is_symlink() and not path.name.startswith("."):
                dest = target / path.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
                copied[dest.relative_to(stage).as_posix()] = _sha256(dest)
    font = _cjk_font()
    fonts = ""
    if font is not None:
        (stage / ".fonts").mkdir()
        shutil.copyfile(font, stage / ".fonts" / font.name)
        fonts = "Noto Sans CJK JP, Noto Sans CJK SC, WenQuanYi Micro Hei, Droid Sans Fallback, "
    (stage / ".mplconfig").mkdir()
    (stage / ".mplconfig" / "matplotlibrc").write_text(_MATPLOTLIBRC.format(fonts=fonts), encoding="utf-8")
    return copied


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _regular_files(stage: Path) -> tuple[list[Path], list[Path]]:
    """The regular files under `stage` and the other entries the walk met (links, hard-linked files, devices), never
    through a link: a folder the script replaced with a link is not entered, a link is not a file, and a file with
    other names (a hard link) is not taken."""
    found, others = [], []
    for folder, dirs, files in os.walk(stage, followlinks=False):
        others += [Path(folder, d) for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            path = Path(folder, name)
            info = path.lstat()
            (found if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 else others).append(path)
    return sorted(found), sorted(others)


def _read_inside(stage: Path, rel: Path) -> bytes:
    """The bytes of the regular file `rel` under `stage`, opened without following a link (checked again: nothing
    runs in the sandbox any more, but the file is read through its resolved path only if that is where it lies)."""
    path = stage / rel
    if path.resolve() != path.absolute() or not path.resolve().is_relative_to(stage.resolve()):
        raise OSError(f"{rel} is not a file of the staging folder")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise OSError(f"{rel} is not a regular file of its own")
        return f.read(MAX_OUTPUT_BYTES + 1)


def _produced(stage: Path, copied: dict[str, str]) -> tuple[list[Path], list[str]]:
    """The files the script wrote or changed in the staging folder: (outputs to take back, the others)."""
    regular, others = _regular_files(stage)
    taken, dropped = [], [p.relative_to(stage).as_posix() for p in others]
    for path in regular:
        rel = path.relative_to(stage)
        top = rel.parts[0]
        if top.startswith(".") or copied.get(rel.as_posix()) == _sha256(path):
            continue
        kinds = OUTPUTS.get(top)
        if kinds and len(rel.parts) == 2 and path.suffix.lower() in kinds and path.stat().st_size <= MAX_OUTPUT_BYTES:
            taken.append(rel)
        elif top != "code" or path.suffix != ".pyc":
            dropped.append(rel.as_posix())
    return taken, dropped


def run_record(script: Path) -> ScriptRun | None:
    """The last recorded run of `script` (a path in a workspace's code/ folder), or None."""
    path = script.with_name(script.name.removesuffix(".py") + ".run.json")
    try:
        return ScriptRun.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_script(
    workspace: Path, script: Path, *, timeout: float = DEFAULT_TIMEOUT, memory_mb: int = MEMORY_MB
) -> ScriptRun:
    """Run `script` (in the workspace's `code/` folder; relative paths are relative to the workspace) in the sandbox
    with these limits, take back its outputs when it ran to its end, record the run next to the script and return
    it. A path outside `code/` or a missing script is a ToolError (nothing run, nothing written)."""
    workspace = Path(workspace)
    path = _inside_code(workspace, Path(script))
    rel = path.relative_to(workspace.resolve()).as_posix()
    with tempfile.TemporaryDirectory(prefix="consulta-modeling-") as root:
        stage = Path(root, "work")
        stage.mkdir()
        copied = _stage(workspace, stage)
        limits = Limits(
            wall_s=timeout,
            cpu_s=max(1, int(timeout)),
            memory_mb=memory_mb,
            output_bytes=20_000,
            file_mb=MAX_OUTPUT_BYTES // 2**20,
        )
        source = path.read_bytes()
        result = run_python(
            source.decode("utf-8", errors="replace"), prelude=_PRELUDE.format(script=rel), limits=limits, work=stage
        )
        taken, dropped = _produced(stage, copied)
        outputs = []
        if result.ok:
            for item in taken:
                try:
                    data = _read_inside(stage, item)
                except OSError:
                    dropped.append(item.as_posix())
                    continue
                write_atomic(workspace / item, data)
                outputs.append(item.as_posix())
    error = None
    if result.exception is not None:
        line = f" (line {result.exception.line})" if result.exception.line else ""
        error = f"{result.exception.type}: {result.exception.message}{line}"
    elif result.stopped:
        error = f"stopped: the {result.stopped.replace('_', ' ')} limit was reached"
    returncode = 0 if result.ok else (-int(signal.SIGKILL) if result.stopped else 1)
    run = ScriptRun(
        script=rel,
        ok=result.ok,
        returncode=returncode,
        stdout=result.stdout,
        stderr=result.stderr,
        outputs=outputs,
        error=error,
        stopped=result.stopped,
        dropped=dropped if result.ok else [],
        duration_ms=round(result.duration_ms, 1),
        sha256=hashlib.sha256(source).hexdigest(),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    write_atomic(
        path.with_name(path.name.removesuffix(".py") + ".run.json"), run.model_dump_json(indent=2).encode("utf-8")
    )
    return run
