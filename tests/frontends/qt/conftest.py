"""Desktop tests run Qt offscreen (set before anything imports Qt); each window gets a fresh home, database and
inventory copy, and is closed — runs stopped, loop thread ended — when its test ends."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported by pytest-qt or the tests

import json
import shutil
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from consulta.config import Settings

SCRIPTS = resources.files("consulta.apps.ln2").joinpath("data", "scripts")
AMBIGUOUS = SCRIPTS.joinpath("ambiguous_thaw.yaml")
SAMPLE = resources.files("consulta.apps.ln2").joinpath("data", "sample_inventory.yaml")
WAIT_MS = 15_000


def make_settings(tmp_path: Path, *, script: Path | None = None, lang: str = "en") -> Settings:
    with resources.as_file(AMBIGUOUS) as ambiguous:
        model = f"scripted:{script or ambiguous}"
    return Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=model, lang=lang)


def copy_inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.yaml"
    with resources.as_file(SAMPLE) as sample:
        shutil.copyfile(sample, path)
    return path


def write_script(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def open_window(qtbot: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Open a desktop window on a tmp inventory; wait until its host is ready. Closed gracefully afterwards."""
    from consulta.frontends.qt import BridgeState, MainWindow

    windows: list[MainWindow] = []

    def open_(*, script: Path | None = None, lang: str = "en", question_timeout: float = 300.0) -> MainWindow:
        inventory = copy_inventory(tmp_path)
        window = MainWindow(
            app="ln2",
            settings=make_settings(tmp_path, script=script, lang=lang),
            options={"inventory": str(inventory), "question_timeout": question_timeout},
        )
        windows.append(window)  # not qtbot.addWidget: it would delete the window before it has stopped
        window.show()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.ready and window.panels_ready, timeout=WAIT_MS)
        return window

    yield open_
    for window in windows:
        window.close()
        qtbot.waitUntil(lambda w=window: w.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
        assert not window.bridge.thread_alive
        window.deleteLater()


def panel(window: Any, kind: type[Any]) -> Any:
    """The window's app panel of type `kind` (ln2's GridPanel, AuditPanel)."""
    return next(p.widget for p in window.panels if isinstance(p.widget, kind))
