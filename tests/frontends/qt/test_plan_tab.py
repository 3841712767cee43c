"""The "Staged plan" tab is shown for an app whose agent stages plans (it has a plan executor, as an agent with write
tools must), first, behind the app's own main panel; an app that never stages plans (the test-only `probe`, which
names no app in the front end) has no such tab, and a plan that opens anyway brings the tab up with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from consulta.config import Settings  # noqa: E402
from consulta.frontends.qt import BridgeState, MainWindow  # noqa: E402
from consulta.i18n import t  # noqa: E402
from consulta.runtime import AskOpened  # noqa: E402

from ..probe import PROBE, write_script  # noqa: E402
from .conftest import WAIT_MS  # noqa: E402

pytestmark = [pytest.mark.desktop]


def test_an_app_that_stages_plans_has_the_plan_tab_first(open_window: Any) -> None:
    window = open_window()  # ln2: its writes are staged as plans
    assert window.bridge.host.agent.executor is not None
    assert window.tabs.indexOf(window.plan) == 0 and window.tabs.tabText(0) == t("qt.tab.plan", "en")
    assert window.tabs.currentWidget() is not window.plan  # the app's own panel first


def test_an_app_that_never_stages_plans_has_no_plan_tab(qtbot: Any, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db",
                        model=f"scripted:{write_script(tmp_path)}", lang="zh-CN")  # fmt: skip
    window = MainWindow(app=PROBE, settings=settings, options={"motto": "onwards"})
    window.show()
    try:
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.ready and window.panels_ready, timeout=WAIT_MS)
        assert window.bridge.host.agent.executor is None
        titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
        assert window.tabs.indexOf(window.plan) < 0 and t("qt.tab.plan", "zh-CN") not in titles
        assert titles == ["onwards"]  # the probe's own panel alone
        # a plan that opens all the same (an agent the window did not ask) is shown, not lost
        window._open_plan(AskOpened(run_id="r1", ask_id="a1", kind="plan", payload={"items": [{"preview": "x → y"}]}))
        assert window.tabs.indexOf(window.plan) == 0 and window.tabs.currentWidget() is window.plan
        assert window.plan.ask_id == "a1" and window.plan.items.item(0).text().endswith("x → y")
    finally:
        window.close()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
        window.deleteLater()
