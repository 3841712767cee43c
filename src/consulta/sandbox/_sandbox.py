"""Run untrusted Python (a student's snippet) in a child process with limits: wall time, CPU time, memory, output
size; a temporary work folder holding copies of the files it may use; no network; no processes of its own.

The child is `python -I` (isolated: no user site, no environment's PYTHONPATH) running `_runner.py`, which confines
files, network and processes with an audit hook before the code runs. The parent adds OS limits (setrlimit) and,
where the system allows it, a network namespace of the child's own (`unshare -rn`). Whatever the code does, the
caller gets a `SandboxResult`; nothing the code writes outlives the call.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

__all__ = ["Limits", "SandboxResult", "StudentException", "run_python"]

_RUNNER = Path(__file__).with_name("_runner.py")


@dataclass(frozen=True, kw_only=True)
class Limits:
    wall_s: float = 10.0
    cpu_s: int = 5
    memory_mb: int = 768
    output_bytes: int = 20_000
    file_mb: int = 20
    """Largest file the code may write."""


class StudentException(BaseModel):
    type: str
    message: str
    line: int | None = None
    """The line of the snippet where it was raised (None when it came from the prelude)."""
    traceback: str


class SandboxResult(BaseModel):
    ok: bool
    """The code ran to its end without an exception."""
    stopped: Literal["wall_time", "cpu_time", "memory"] | None = None
    """A limit that ended it."""
    exception: StudentException | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: float
    network_isolated: bool
    """Whether the child had a network namespace of its own (besides the audit hook, which always refuses sockets)."""


@cache
def _unshare() -> list[str]:
    """`unshare -rn` when it works here (user + network namespace, no privileges needed), else nothing."""
    command = shutil.which("unshare")
    if command is None:
        return []
    try:
        probe = subprocess.run([command, "-rn", "true"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return [command, "-rn"] if probe.returncode == 0 else []


def _limit(limits: Limits) -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = limits.file_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_python(
    code: str,
    *,
    files: list[Path] | tuple[Path, ...] = (),
    prelude: str = "",
    limits: Limits = Limits(),
    work: Path | None = None,
) -> SandboxResult:
    """Run `code` (after `prelude`, e.g. loading the student's data) in a fresh work folder holding copies of
    `files` (by name), or in `work`, a folder of the caller's that keeps what the code writes there (the code may
    read and write that folder only). Blocking; bounded by `limits.wall_s`."""
    with tempfile.TemporaryDirectory(prefix="consulta-sandbox-") as root:
        work = Path(work) if work is not None else Path(root, "work")
        work.mkdir(exist_ok=True)
        for source in files:
            shutil.copyfile(source, work / source.name)
        request, result_path = Path(root, "request.json"), Path(root, "result.json")
        request.write_text(
            json.dumps({"work": str(work), "code": code, "prelude": prelude, "output_bytes": limits.output_bytes}),
            encoding="utf-8",
        )
        isolation = _unshare()
        command = [*isolation, sys.executable, "-I", str(_RUNNER), str(request), str(result_path)]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8", "HOME": str(work)}
        started = time.monotonic()
        proc = subprocess.Popen(
            command,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: _limit(limits),
            start_new_session=True,  # noqa: PLW1509 - setrlimit must run in the child
        )
        stopped = None
        try:
            out, err = proc.communicate(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            stopped = "wall_time"
        duration_ms = (time.monotonic() - started) * 1000
        report = _read(result_path)
        if stopped is None and proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and not report:
            stopped = "cpu_time"
        exception = StudentException(**report["exception"]) if report.get("exception") else None
        if exception is not None and exception.type == "MemoryError":
            stopped = "memory"
        return SandboxResult(
            ok=stopped is None and exception is None and proc.returncode == 0,
            stopped=stopped,
            exception=exception,
            stdout=report.get("stdout", ""),
            stderr=report.get("stderr", "") or err.decode("utf-8", "replace")[-limits.output_bytes :],
            duration_ms=duration_ms,
            network_isolated=bool(isolation),
        )


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
