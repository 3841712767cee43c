"""Runs inside the OS sandbox (bubblewrap, see `_sandbox.py`) as `python -I runner.py REQUEST RESULT`: drop to the
unprivileged uid, confine the code, run it, report what happened as JSON. It imports nothing of Consulta: the child
loads only the standard library.

First, before it reads the code: when started as root (the root route), `setgroups([])` and `setresgid`/`setresuid`
to the request's uid, then PR_SET_NO_NEW_PRIVS (no setuid binary can give anything back). Both files are opened
before that (their folder is root's).

Then the second wall, in this process, before the code runs (an audit hook cannot be removed once added):
- files: the code may read and write inside the work folder, and read the Python installation (imports); any other
  `open` is refused with PermissionError;
- network: creating, connecting or binding a socket and resolving names are refused (the parent also starts the
  child in a network namespace of its own when the system allows it);
- no new processes: subprocess, os.system, fork and exec are refused.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import sys
import traceback

_PR_SET_NO_NEW_PRIVS = 38

_NETWORK = {
    "socket.__new__",
    "socket.connect",
    "socket.bind",
    "socket.getaddrinfo",
    "socket.gethostbyname",
    "socket.sendto",
}
_PROCESSES = {
    "subprocess.Popen",
    "os.system",
    "os.fork",
    "os.forkpty",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "pty.spawn",
}


def _confine(work: str) -> None:
    work_dir = os.path.realpath(work) + os.sep
    installation = tuple(
        os.path.realpath(p) + os.sep
        for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__)}
    )
    devices = ("/dev/null", "/dev/urandom")

    def allowed(path: str, writing: bool) -> bool:
        real = os.path.realpath(path)
        if (real + os.sep).startswith(work_dir) or real in devices:
            return True
        return not writing and (real + os.sep).startswith(installation)

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = (*args, None, None)[:3]
            if isinstance(path, int) or path is None:
                return
            writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
            writing = any(c in str(mode or "") for c in "wax+") or bool((flags or 0) & writes)
            if not allowed(os.fsdecode(path), writing):
                raise PermissionError(
                    f"The sandbox allows files in the work folder only; {os.fsdecode(path)!r} is outside it."
                )
        if event in _NETWORK:
            raise PermissionError("The sandbox has no network.")
        if event in _PROCESSES or event.startswith("os.exec") or event.startswith("os.spawn"):
            raise PermissionError("The sandbox does not start processes.")

    sys.addaudithook(hook)


def _drop(uid: int | None) -> None:
    """Become `uid` (gid the same, no groups) when started as root; then no new privileges, whatever the route."""
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("the sandbox could not drop to its uid")
    if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SystemExit("the sandbox could not set no_new_privs")


def main() -> None:
    request_path, result_path = sys.argv[1], sys.argv[2]
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    # Open the result file before dropping (its folder is root's); write it whatever happens.
    with open(result_path, "w", encoding="utf-8") as result_file:
        _drop(request.get("uid"))
        work = request["work"]
        os.chdir(work)
        sys.path[:0] = [work]
        out, err = io.StringIO(), io.StringIO()
        result: dict = {"exception": None}
        _confine(work)
        sys.stdout, sys.stderr = out, err
        try:
            exec(compile(request["prelude"], "<prelude>", "exec"), namespace := {"__name__": "__main__"})
            exec(compile(request["code"], "<student>", "exec"), namespace)
        except BaseException as error:  # noqa: BLE001 - everything the code raises is its result
            frames = traceback.extract_tb(error.__traceback__)
            student = [f for f in frames if f.filename == "<student>"]
            result["exception"] = {
                "type": type(error).__name__,
                "message": str(error),
                "line": student[-1].lineno if student else None,
                "traceback": "".join(traceback.format_exception_only(type(error), error)).strip(),
            }
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        limit = int(request["output_bytes"])
        result["stdout"], result["stderr"] = out.getvalue()[:limit], err.getvalue()[:limit]
        json.dump(result, result_file, ensure_ascii=False, default=str)


if __name__ == "__main__":
    main()
