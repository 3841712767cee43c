"""What llama.cpp must leave off on this CPU, for every process that loads a GGUF (in process or a server we start)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["cpu_advertises_amx", "free_cores", "running_threads", "threads_for_now", "without_extra_buffer_types"]


def cpu_advertises_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        return " amx_tile" in cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return False


@contextmanager
def without_extra_buffer_types(llama_cpp: Any) -> Iterator[None]:
    """While inside, models `llama_cpp` loads leave llama.cpp's extra buffer types off on a CPU that advertises AMX.

    A virtual machine may advertise AMX (Sapphire Rapids and later) without letting a process use its tile state:
    llama.cpp's AMX buffer type then dies on its first `tilezero` with SIGILL (seen on the 2-core machines here).
    Without extra buffer types the weights stay in the AVX-512/AVX2 layout, which every such CPU runs.
    llama-cpp-python 0.3.36 has no argument for `use_extra_bufts`: its default model parameters are wrapped while
    inside (not thread-safe: callers serialise model loads). Elsewhere it changes nothing.
    """
    if not cpu_advertises_amx():
        yield
        return
    low = llama_cpp.llama_cpp
    defaults = low.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    low.llama_model_default_params = without_extra_buffers
    try:
        yield
    finally:
        low.llama_model_default_params = defaults


def running_threads(loadavg: Path = Path("/proc/loadavg")) -> int | None:
    """The threads running or runnable on the machine right now, the caller's included (None: not known here)."""
    try:
        return int(loadavg.read_text(encoding="ascii").split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def free_cores(
    cores: int, *, running: Callable[[], int | None] = running_threads, samples: int = 3, pause_s: float = 0.002
) -> int:
    """How many of `cores` no other thread is running on right now: `cores` minus the runnable threads besides the
    caller's own, the fewest of a few quick samples (a burst is not a load). Where that is not known: `cores`."""
    others: list[int] = []
    for i in range(samples):
        now = running()
        if now is None:
            return cores
        others.append(now - 1)  # the caller is running while it reads
        if i + 1 < samples:
            time.sleep(pause_s)
    return max(0, cores - min(others))


def threads_for_now(most: int, *, free: Callable[[int], int] = free_cores) -> int:
    """The threads a step of llama.cpp should use, at most `most`: the cores free right now, at least one.

    llama.cpp's threads meet at a barrier after every layer and spin while they wait: on a core another process
    also wants, each barrier waits for a descheduled thread, and two threads on 2 cores shared with one busy process
    took twice as long as one thread (the structured-output test: 62.7 s against 33.2 s; bench/bench_threads.py
    measures it). On cores nobody else uses, every thread helps."""
    return max(1, min(most, free(os.cpu_count() or most)))
