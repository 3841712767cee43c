"""Running code that is not ours (a student's snippet, the modeling team's scripts) confined by the operating system
(bubblewrap: namespaces, an unprivileged uid, read-only system, one writable work folder, no network) with limits:
time, memory, output, files, processes. Where the OS cannot confine it, it is not run (`SandboxUnavailable`)."""

from ._sandbox import Limits, SandboxResult, SandboxUnavailable, StudentException, run_python, sandbox_available

__all__ = ["Limits", "SandboxResult", "SandboxUnavailable", "StudentException", "run_python", "sandbox_available"]
