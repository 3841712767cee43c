"""Running untrusted Python (a student's code) with limits: time, memory, output, files, no network."""

from ._sandbox import Limits, SandboxResult, StudentException, run_python

__all__ = ["Limits", "SandboxResult", "StudentException", "run_python"]
