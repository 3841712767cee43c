"""Running the `consulta` command in the test's own process (its exit code and what it printed), for tests that
check what a person sees at the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from consulta.frontends.cli import main

__all__ = ["run_consulta"]


def run_consulta(
    argv: list[str],
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *,
    lang: str = "en",
) -> tuple[Any, str]:
    """`consulta ARGV` with CONSULTA_HOME `home` and CONSULTA_LANG `lang` (Qt offscreen): its exit code and everything
    it printed. It must exit (SystemExit): anything else would reach the terminal as a traceback."""
    for name, value in {
        "CONSULTA_HOME": str(home),
        "CONSULTA_LANG": lang,
        "COLUMNS": "80",
        "QT_QPA_PLATFORM": "offscreen",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["consulta", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    output = capsys.readouterr()
    return exited.value.code, output.out + output.err
