"""Python processes started to act at the same moment (several Consulta processes on one store)."""

from __future__ import annotations

import subprocess
import sys

READY = 'print("ready", flush=True)\n__import__("sys").stdin.readline()\n'
"""Put in a script where it should wait: the process says it is ready and waits for the go."""


def run_together(script: str, *args: str, n: int = 2, timeout: float = 120) -> list[str]:
    """Start `n` processes running `script` (which includes READY), let them all go at once, and return what each
    printed after its ready line. Fails with their error output if any of them fails."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    try:
        for p in procs:
            line = p.stdout.readline().strip()
            assert line == "ready", (line, p.stderr.read() if p.poll() is not None else "")
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0] * n, [err for _, err in outputs]
    return [out for out, _ in outputs]
