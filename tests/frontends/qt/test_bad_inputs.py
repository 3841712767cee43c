"""A desktop window whose app cannot start on what it was given (a bad inventory file) says so in the window's
language, in one line naming the file and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import WAIT_MS, make_settings


@pytest.mark.parametrize(
    ("lang", "start"),
    [
        ("en", "Could not start: The inventory file {path} is empty. Start it with"),
        ("zh-CN", "无法启动：库存文件 {path} 是空的。请以"),
    ],
)
def test_a_bad_inventory_is_said_in_the_windows_language(qtbot: Any, tmp_path: Path, lang: str, start: str) -> None:
    from consulta.frontends.qt import BridgeState, MainWindow

    path = tmp_path / "empty.yaml"
    path.write_bytes(b"")
    window = MainWindow(app="ln2", settings=make_settings(tmp_path, lang=lang), options={"inventory": str(path)})
    try:
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.failed, timeout=WAIT_MS)
        (line,) = window.chat.lines
        assert line.startswith(start.format(path=path)) and "\n" not in line
        assert path.read_bytes() == b""
    finally:
        window.close()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.stopped, timeout=WAIT_MS)


def test_an_inventory_broken_while_the_window_is_open_is_said_in_its_language(open_window: Any) -> None:
    from consulta.apps.ln2._desktop import GridPanel

    from .conftest import panel

    window = open_window(lang="zh-CN")
    grid = panel(window, GridPanel)
    grid.path.write_bytes(b"")
    grid.refresh()
    assert (
        grid.error.text().startswith(f"无法读取库存：库存文件 {grid.path} 是空的。") and "\n" not in grid.error.text()
    )
