"""Named crash points: the places in a write's path where a test may kill the process, to prove that recovery
leaves the data and its record agreeing. A no-op in production.

A write path calls `crash_point("after_rename")` between its steps. When the environment variable
`CONSULTA_CRASH_AT` names that point, the process kills itself there with SIGKILL (nothing flushed, no handler run,
as a power cut or `kill -9` would leave it); otherwise the call does nothing.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CRASH_AT_ENV", "crash_point"]

CRASH_AT_ENV = "CONSULTA_CRASH_AT"
"""The environment variable naming the crash point at which a test's child process dies."""


def crash_point(name: str) -> None:
    """Die here (SIGKILL) if `CONSULTA_CRASH_AT` is `name`; else nothing."""
    if os.environ.get(CRASH_AT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
