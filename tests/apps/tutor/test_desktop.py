"""The tutor's desktop window offscreen on a real turn (scripted model, real runtime and store): the uploads panel
refuses a file of the wrong type (nothing copied) and copies a CSV; a message sent in the chat brings the
assistant's reply and the turn's cards (the packet, the consultation with its binding rule); in both languages."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before Qt is imported

from collections.abc import Callable, Iterator  # noqa: E402
from importlib import resources  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from consulta.config import Settings  # noqa: E402
from consulta.i18n import t  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.desktop]

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
STUDENT_DATA = "name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"
WAIT_MS = 20_000
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "qt"


@pytest.fixture
def open_window(qtbot: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    from consulta.frontends.qt import BridgeState, MainWindow

    windows: list[Any] = []

    def open_(lang: str) -> Any:
        with resources.as_file(SCRIPT) as script:
            settings = Settings(
                home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}", lang=lang
            )
        window = MainWindow(app="tutor", settings=settings)
        windows.append(window)
        window.show()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.ready and window.panels_ready, timeout=WAIT_MS)
        return window

    yield open_
    for window in windows:
        window.close()
        qtbot.waitUntil(lambda w=window: w.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
        window.deleteLater()


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_upload_then_a_turn_shows_its_cards(qtbot: Any, open_window: Any, tmp_path: Path, lang: str) -> None:
    from consulta.apps.tutor._desktop import TurnPanel, UploadsPanel

    window = open_window(lang)
    uploads = next(p.widget for p in window.panels if isinstance(p.widget, UploadsPanel))
    turn = next(p.widget for p in window.panels if isinstance(p.widget, TurnPanel))
    assert uploads.files.item(0).text() == t("tutor.web.uploads.empty", lang)
    folder = tmp_path / "apps" / "tutor" / "uploads"

    notes = tmp_path / "notes.md"
    notes.write_text("not a dataset", encoding="utf-8")
    assert uploads.upload_file(notes) is False
    types = t("web.list_separator", lang).join([".csv", ".tsv", ".txt", ".dat", ".xlsx", ".xls"])
    assert uploads.status.text() == t("tutor.web.error.unsupported_file_type", lang, name="notes.md", types=types)
    assert list(folder.iterdir()) == []

    data = tmp_path / "student_data.csv"
    data.write_text(STUDENT_DATA, encoding="utf-8")
    assert uploads.upload_file(data) is True
    assert (folder / "student_data.csv").read_text(encoding="utf-8") == STUDENT_DATA
    assert uploads.files.item(0).text().startswith("student_data.csv")

    window.chat.input.setFocus()
    window.chat.input.insert("我上传了数据，可以开始task_2_1吗？")
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "缺少列：age" in window.chat.transcript.toPlainText(), timeout=WAIT_MS)  # code says it
    qtbot.waitUntil(lambda: turn.turn is not None and turn.turn.assistant_status == "finished", timeout=WAIT_MS)
    shown = turn.view.toPlainText()
    assert t("tutor.web.packet.title", lang) in shown and t("tutor.web.packet.accepted", lang) in shown
    assert "task_2_1" in shown and t("tutor.web.task_status.blocked", lang) in shown
    assert t("tutor.web.verdict.not_suitable", lang) in shown and "consult_0001" in shown
    assert "dataset_not_suitable → require_new_dataset" in shown and t("tutor.web.consultation.updates", lang) in shown
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    window.tabs.setCurrentWidget(uploads)
    window.grab().save(str(ARTIFACTS / f"tutor-{lang}.png"))
