"""llama.cpp's extra buffer types (AMX tiles) are left off on a CPU that advertises AMX: a VM that advertises it
without enabling the tile state kills the process with SIGILL at the first step."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from consulta.models import _llama_cpu, _local


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
