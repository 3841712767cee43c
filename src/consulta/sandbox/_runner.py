"""Runs inside the sandbox's child process (started as `python -I _runner.py REQUEST RESULT`): confine the code,
run it, report what happened as JSON. It imports nothing of Consulta: the child loads only the standard library.

Confinement, in this process, before the code runs (an audit hook cannot be removed once added):
- files: the code may read and write inside the work folder, and read the Python installation (imports); any other
  `open` is refused with PermissionError;
- network: creating, connecting or binding a socket and resolving names are refused (the parent also starts the
  child in a network namespace of its own when the system allows it);
- no new processes: subprocess, os.system, fork and exec are refused.
"""

from __future__ import annotations

import io
import json
import os
import sys
import traceback

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


def main() -> None:
    request_path, result_path = sys.argv[1], sys.argv[2]
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    work = request["work"]
    os.chdir(work)
    sys.path[:0] = [work]
    out, err = io.StringIO(), io.StringIO()
    result: dict = {"exception": None}
    # Open the result file before confining (it lies outside the work folder); write it whatever happens.
    with open(result_path, "w", encoding="utf-8") as result_file:
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
