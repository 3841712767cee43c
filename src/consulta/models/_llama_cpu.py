"""What llama.cpp must leave off on this CPU, for every process that loads a GGUF (in process or a server we start)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["cpu_advertises_amx", "without_extra_buffer_types"]


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
