"""Run untrusted Python (a student's snippet, the modeling team's scripts) confined by the operating system, with
limits: wall time, CPU time, memory, file size, process count, output size.

The design, in five lines:
1. The child is `bwrap` (bubblewrap): new mount, PID, network, IPC and UTS namespaces, no environment but a few
   variables, its own session, killed with its parent. Its file system is a tmpfs root holding read-only binds of
   `/usr`, the Python installation and the venv, a fresh `/proc`, `/dev` and `/tmp`, and one writable work folder.
2. The code runs as an unprivileged uid with no capabilities and `no_new_privs`; RLIMIT_NPROC caps its processes.
3. The PID namespace dies with its first process: nothing the code starts outlives the call.
4. Inside, `_runner.py` adds the audit hook of old (files, sockets, processes) as a second wall.
5. Where the OS cannot give this sandbox (no bwrap, no namespaces), the code does not run: `SandboxUnavailable`.

Two routes to the unprivileged uid, chosen by who runs the server:
- not root: `bwrap --unshare-user --uid 65534`: a user namespace, and the kernel counts RLIMIT_NPROC per user
  namespace (since 5.14), so the limit holds.
- root: a user namespace would map the sandbox's uid to kuid 0 outside, and the kernel exempts kuid 0 from
  RLIMIT_NPROC (`copy_process`), so a fork bomb would not be stopped. Instead bwrap runs privileged (root may mount)
  without a user namespace, keeping only CAP_SETUID and CAP_SETGID for its child; the runner's first act, before it
  reads the code, is `setgroups([])` and `setresgid`/`setresuid` to a fresh uid/gid of a high unused range (one per
  call, so RLIMIT_NPROC counts only this call's processes), then PR_SET_NO_NEW_PRIVS: the code runs with no
  capability and no way back. The work folder is chowned to that uid for the call and back afterwards. (Dropping to
  an unprivileged uid before bwrap does not work when the interpreter lives under a mode-700 home such as /root.)
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

__all__ = ["Limits", "SandboxResult", "SandboxUnavailable", "StudentException", "run_python", "sandbox_available"]

_RUNNER = Path(__file__).with_name("_runner.py")
_INSIDE = "/run/consulta"
"""Where the runner and its request/result folder are mounted inside the sandbox."""
_UID_BASE, _UID_SPAN = 2_100_000_000, 1 << 24
"""The range the per-call uids/gids are drawn from (root route): above any real account's or subuid range's ids."""
_NOBODY = 65534
_TMP_BYTES = 64 * 1024 * 1024
"""The size of the sandbox's /tmp (a tmpfs, in memory)."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    wall_s: float = 10.0
    cpu_s: int = 5
    memory_mb: int = 768
    output_bytes: int = 20_000
    file_mb: int = 20
    """Largest file the code may write."""
    processes: int = 32
    """Processes (and threads) the code may have at once, itself included."""


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
    network_isolated: bool = True
    """Always true: the code runs in a network namespace of its own (kept for readers of older results)."""


class SandboxUnavailable(RuntimeError):
    """The OS cannot give the sandbox here (no bwrap, or namespaces not allowed): the code was not run. `reason` is
    one English line saying why and what to do; `code` is `sandbox_unavailable` for callers' own words."""

    code = "sandbox_unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _ancestors(path: Path) -> list[str]:
    return [str(p) for p in reversed(path.parents) if str(p) != "/"]


def _base_args(*, as_root: bool) -> list[str]:
    """bwrap's arguments up to the work folder: namespaces, environment, the read-only system and Python."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed, so code is not run; install Debian's bubblewrap (scripts/setup does)."
        )
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if as_root:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user", "--uid", str(_NOBODY), "--gid", str(_NOBODY), "--cap-drop", "ALL"]
    args += ["--die-with-parent", "--new-session", "--clearenv", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        link = Path("/", name)
        if link.is_symlink():
            args += ["--symlink", os.readlink(link), str(link)]
        elif link.is_dir():
            args += ["--ro-bind", str(link), str(link)]
    # /tmp is memory: bounded, so that files there cannot exhaust the host's RAM (RLIMIT_AS does not count them).
    # Mounted before the Python binds: a venv under /tmp (a checkout there) must stay visible above it.
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(_TMP_BYTES), "--tmpfs", "/tmp"]
    made: set[str] = {"/tmp"}
    for prefix in sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}):
        # Parents of a bind are made 0755 (bwrap would make them 0700 as root, out of the dropped uid's reach).
        for parent in _ancestors(Path(prefix)):
            if parent not in made and not parent.startswith("/usr"):
                made.add(parent)
                args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", prefix, prefix]
    return args


def _python() -> str:
    """The interpreter's path with every link resolved but the venv's own (its pyvenv.cfg makes it the venv)."""
    return str(Path(sys.executable).parent.resolve() / Path(sys.executable).name)


class _Probe:
    """Whether bwrap can start a process here (None) or why not. A definite answer is kept for the process; a probe
    that could not finish in time (a machine too busy to start it) is not kept: the next call asks again."""

    TIMEOUT_S = 60.0

    def __init__(self) -> None:
        self._known: dict[bool, str | None] = {}

    def cache_clear(self) -> None:
        self._known.clear()

    def __call__(self, as_root: bool) -> str | None:
        if as_root in self._known:
            return self._known[as_root]
        try:
            args = _base_args(as_root=as_root)
        except SandboxUnavailable as refused:
            self._known[as_root] = refused.reason
            return refused.reason
        command = [*args, _python(), "-I", "-c", "pass"]
        try:
            probe = subprocess.run(command, capture_output=True, timeout=self.TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return f"bubblewrap did not start within {self.TIMEOUT_S:.0f} s (the machine is busy), so code is not run."
        except (OSError, subprocess.SubprocessError) as error:
            return f"bubblewrap could not be started ({error}), so code is not run."
        reason = None
        if probe.returncode != 0:
            said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = (
                f"bubblewrap cannot make its namespaces here ({said[-1] if said else probe.returncode}), so code is "
                "not run; allow user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run where they are."
            )
        self._known[as_root] = reason
        return reason


_probe = _Probe()


def sandbox_available() -> str | None:
    """None when code can run in the OS sandbox here, else the one-line reason it cannot."""
    return _probe(os.geteuid() == 0)


def _limit(limits: Limits) -> None:  # runs in the child between fork and exec
    os.umask(0o022)
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    memory = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = limits.file_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Root is exempt from it (bwrap's own forks); the dropped uid is not.
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Hand `root` and everything in it to uid/gid, never following a link (nothing runs in the sandbox any more
    when this hands it back, so nothing can swap a file for a link meanwhile)."""
    os.lchown(root, uid, gid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, gid)


def run_python(
    code: str,
    *,
    files: list[Path] | tuple[Path, ...] = (),
    prelude: str = "",
    limits: Limits = Limits(),
    work: Path | None = None,
) -> SandboxResult:
    """Run `code` (after `prelude`, e.g. loading the student's data) in the OS sandbox, in a fresh work folder holding
    copies of `files` (by name), or in `work`, a folder of the caller's that keeps what the code writes there (the
    code may read and write that folder only). Blocking; bounded by `limits.wall_s`. Raises SandboxUnavailable (and
    runs nothing) where the OS cannot give the sandbox."""
    as_root = os.geteuid() == 0
    if (reason := _probe(as_root)) is not None:
        raise SandboxUnavailable(reason)
    with tempfile.TemporaryDirectory(prefix="consulta-sandbox-") as root:
        work = Path(work).resolve() if work is not None else Path(root, "work")
        work.mkdir(exist_ok=True)
        for source in files:
            shutil.copyfile(source, work / source.name)
        io = Path(root, "io")
        io.mkdir(mode=0o700)
        uid = _UID_BASE + secrets.randbelow(_UID_SPAN) if as_root else None
        request = {"work": str(work), "code": code, "prelude": prelude, "output_bytes": limits.output_bytes, "uid": uid}
        Path(io, "request.json").write_text(json.dumps(request), encoding="utf-8")
        command = [
            *_base_args(as_root=as_root),
            *(a for parent in _ancestors(work) for a in ("--perms", "0755", "--dir", parent)),
            "--bind", str(work), str(work),
            "--bind", str(io), _INSIDE,
            "--ro-bind", str(_RUNNER), f"{_INSIDE}-runner.py",
            "--chdir", str(work),
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONIOENCODING", "utf-8",
            "--setenv", "HOME", str(work), "--setenv", "TMPDIR", "/tmp",
            _python(), "-I", f"{_INSIDE}-runner.py", f"{_INSIDE}/request.json", f"{_INSIDE}/result.json",
        ]  # fmt: skip
        if uid is not None:
            _chown_tree(work, uid, uid)
        started = time.monotonic()
        try:
            out, err, returncode, stopped = _supervise(command, work=work, limits=limits)
        finally:
            if uid is not None:
                _chown_tree(work, os.getuid(), os.getgid())
        duration_ms = (time.monotonic() - started) * 1000
        report = _read(Path(io, "result.json"))
        killed = {-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU, 128 + signal.SIGKILL}  # bwrap: 128 + signal
        if stopped is None and returncode in killed and not report:
            stopped = "cpu_time"
        exception = StudentException(**report["exception"]) if report.get("exception") else None
        if exception is not None and exception.type == "MemoryError":
            stopped = "memory"
        return SandboxResult(
            ok=stopped is None and exception is None and returncode == 0 and bool(report),
            stopped=stopped,
            exception=exception,
            stdout=report.get("stdout", ""),
            stderr=report.get("stderr", "") or err.decode("utf-8", "replace")[-limits.output_bytes :],
            duration_ms=duration_ms,
        )


def _supervise(command: list[str], *, work: Path, limits: Limits) -> tuple[bytes, bytes, int, str | None]:
    """Run bwrap to its end or to the wall-time limit (then kill its whole group: its PID namespace dies with it)."""
    proc = subprocess.Popen(
        command,
        cwd=work,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: _limit(limits),
        start_new_session=True,  # noqa: PLW1509 - setrlimit must run in the child
    )
    try:
        out, err = proc.communicate(timeout=limits.wall_s)
        return out, err, proc.returncode, None
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return out, err, proc.returncode, "wall_time"


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
