"""The desktop window serves the test-only `probe` app (tests/frontends/probe) with no edit under frontends/: its
panel is a tab of the window and hears the runtime's events; a request runs the planner, and the host's hand-over
brings the speaker's reply into the chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from consulta.config import Settings  # noqa: E402
from consulta.frontends.qt import BridgeState, MainWindow  # noqa: E402
from consulta.i18n import t  # noqa: E402
from consulta.runtime import Store  # noqa: E402

from ..probe import PROBE, write_script  # noqa: E402
from .conftest import WAIT_MS  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.desktop]


def test_the_probe_gets_a_desktop_window_with_its_panel_and_hand_over(qtbot: Any, tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path,
        database_url=f"sqlite:///{tmp_path}/consulta.db",
        model=f"scripted:{write_script(tmp_path)}",
        lang="en",
    )
    window = MainWindow(app=PROBE, settings=settings, options={"motto": "onwards"})
    window.show()
    try:
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.ready and window.panels_ready, timeout=WAIT_MS)
        (probe,) = window.panels
        assert probe.widget.text() == "onwards" and window.tabs.tabText(window.tabs.indexOf(probe.widget)) == "onwards"
        window.chat.input.setFocus()
        window.chat.input.insert("hello")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: any("Spoken!" in line for line in window.chat.lines), timeout=WAIT_MS)
        qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
        # The person reads their message and the speaker's reply: not the planner's note, not the speaker's prompt.
        you = [line for line in window.chat.lines if line.startswith(t("qt.chat.you", "en", text=""))]
        assert you == [t("qt.chat.you", "en", text="hello")]
        assert not any("planned" in line for line in window.chat.lines)
        # The planner's work shows as its step (the probe declares no words for its tool: the generic step).
        step = t("qt.chat.step", "en", step=t("web.step.generic", "en"))
        assert any(line.startswith(step + " · ") and line.endswith(" s") for line in window.chat.lines)  # its time
        assert not any("note" in line for line in window.chat.lines)
        assert window.chat.input.placeholderText() == t(
            "qt.chat.placeholder", "en"
        )  # the probe has no words of its own
        assert probe.widget.heard.count("run_started") == 2 and "run_ended" in probe.widget.heard
        first = window.turn_id
        assert first is not None and window.run_id != first  # the speaker's run is shown; the planner's is the turn
        window.chat.input.insert("again")
        qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
        qtbot.waitUntil(
            lambda: sum("Spoken!" in line for line in window.chat.lines) == 2 and not window.running, timeout=WAIT_MS
        )
        store = Store(settings.database_url)
        try:
            assert store.get_run(window.turn_id).parent_run_id == first  # the conversation of the planner's turn
        finally:
            store.close()
    finally:
        window.close()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
        window.deleteLater()
