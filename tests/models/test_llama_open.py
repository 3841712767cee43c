"""llama.cpp's extra buffer types (AMX tiles) are left off on a CPU that advertises AMX: a VM that advertises it
without enabling the tile state kills the process with SIGILL at the first step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from consulta.models import _llama_cpu, _local
from consulta.models._llama_cpu import free_cores, running_threads, threads_for_now


class _Params:
    use_extra_bufts = True


def _fake_llama_cpp() -> Any:
    low = SimpleNamespace(llama_model_default_params=_Params)
    seen: list[bool] = []

    def llama(**kwargs: Any) -> list[bool]:
        seen.append(low.llama_model_default_params().use_extra_bufts)  # as llama-cpp-python reads them
        return seen

    return SimpleNamespace(llama_cpp=low, Llama=llama)


@pytest.mark.parametrize(("amx", "extra"), [(True, False), (False, True)])
def test_extra_buffers_only_without_amx(monkeypatch: pytest.MonkeyPatch, amx: bool, extra: bool) -> None:
    monkeypatch.setattr(_llama_cpu, "cpu_advertises_amx", lambda: amx)
    fake = _fake_llama_cpp()
    assert _local._open_llama(fake, model_path="m.gguf") == [extra]
    assert fake.llama_cpp.llama_model_default_params is _Params  # put back after the one call


def test_amx_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("flags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n", encoding="ascii")
    assert _llama_cpu.cpu_advertises_amx(info)
    info.write_text("flags\t\t: fpu avx2\n", encoding="ascii")
    assert not _llama_cpu.cpu_advertises_amx(info)
    assert not _llama_cpu.cpu_advertises_amx(tmp_path / "missing")


# ---- threads for the cores free now ---------------------------------------------------------------------------


def _samples(*running: int) -> Callable[[], int]:
    counts = iter(running)
    return lambda: next(counts)


@pytest.mark.parametrize(
    ("running", "free"),
    [((1, 1, 1), 2), ((2, 2, 2), 1), ((3, 3, 3), 0), ((3, 1, 3), 2), ((9, 9, 9), 0)],
)
def test_free_cores_counts_the_other_running_threads_at_their_fewest(running: tuple[int, ...], free: int) -> None:
    assert free_cores(2, running=_samples(*running), pause_s=0) == free


def test_running_threads_reads_proc_and_says_when_it_cannot(tmp_path: Path) -> None:
    (tmp_path / "loadavg").write_text("1.00 0.50 0.25 3/512 4242\n")
    assert running_threads(tmp_path / "loadavg") == 3
    assert running_threads(tmp_path / "missing") is None
    (tmp_path / "odd").write_text("nothing here\n")
    assert running_threads(tmp_path / "odd") is None
    assert free_cores(2, running=lambda: None) == 2


@pytest.mark.parametrize(("most", "free", "threads"), [(2, 2, 2), (2, 1, 1), (2, 0, 1), (4, 2, 2), (1, 2, 1)])
def test_a_step_takes_the_free_cores_at_least_one_at_most_its_own(most: int, free: int, threads: int) -> None:
    assert threads_for_now(most, free=lambda cores: free) == threads
