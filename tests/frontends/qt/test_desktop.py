"""The desktop window on a real run (scripted model, real runtime, store and inventory file), driven offscreen
through its widgets: the seed's question dialog, the staged plan, the grid, rollback, cancel, invalid answers,
asks closed elsewhere, and closing the window mid-question."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

import shiboken6  # noqa: E402
from pydantic_ai.messages import ModelRequest, ToolReturnPart  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLabel, QLineEdit  # noqa: E402

from consulta.apps import ln2  # noqa: E402
from consulta.apps.ln2._desktop import AuditPanel, GridPanel  # noqa: E402
from consulta.frontends.qt import BridgeState, MainWindow, QuestionDialog  # noqa: E402
from consulta.frontends.qt._chat import Tone  # noqa: E402
from consulta.i18n import t  # noqa: E402
from consulta.runtime import AskStatus, RunStatus, Store  # noqa: E402
from consulta.runtime._engine import load_messages  # noqa: E402

from .conftest import WAIT_MS, panel, write_script  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.desktop]

PROMPT = "帮我取一管K562"
OPTIONS = ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"]


def send(qtbot: Any, window: MainWindow, text: str) -> None:
    window.chat.input.setFocus()
    window.chat.input.insert(text)  # what an input method does (QTest cannot type CJK key by key)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)


def wait_dialog(qtbot: Any, window: MainWindow) -> QuestionDialog:
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=WAIT_MS)
    (dialog,) = window.dialogs.values()
    return dialog


def gone(dialog: QuestionDialog) -> bool:
    """The dialog is closed (and, once Qt has run its deferred deletes, destroyed)."""
    return not shiboken6.isValid(dialog) or not dialog.isVisible()


def on_host(qtbot: Any, window: MainWindow, work: Any) -> Any:
    """Run `work(host)` on the window's loop and return its value (the test waits; the window never does)."""
    with qtbot.waitCallback(timeout=WAIT_MS) as callback:
        assert window.bridge.call(work, on_done=callback, on_error=callback)
    (value,) = callback.args
    if isinstance(value, BaseException):
        raise value
    return value


def model_saw(qtbot: Any, window: MainWindow, run_id: str, tool_name: str) -> list[Any]:
    """The results of `tool_name` in the run's checkpointed conversation: what the model was given."""
    checkpoint = on_host(qtbot, window, lambda h: h.store.load_checkpoint(run_id))
    assert checkpoint is not None
    return [
        json.loads(part.content) if isinstance(part.content, str) else part.content
        for message in load_messages(checkpoint[1])
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool_name
    ]


def test_ambiguous_request_question_plan_approve_grid_and_rollback(qtbot: Any, open_window: Any) -> None:
    window: MainWindow = open_window()
    grid, audit = panel(window, GridPanel), panel(window, AuditPanel)
    original = grid.path.read_bytes()
    assert grid.cell_text(2, 1) == "K562-dTAG-BRD4"
    grid.table.cellClicked.emit(0, 0)  # box 2, A1: its tube's details
    assert "K562-dTAG-BRD4" in grid.details.toPlainText() and "P0123" in grid.details.toPlainText()

    handled_on: set[threading.Thread] = set()
    show_event = window.chat.show_event
    window.chat.show_event = lambda event: (handled_on.add(threading.current_thread()), show_event(event))  # type: ignore[method-assign]

    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    assert handled_on == {threading.main_thread()}  # runtime events reach the window on the GUI thread
    assert window.bridge.thread_alive  # ...from the loop thread, which is not the GUI thread
    assert dialog.windowTitle() == t("ai.question.title", "en") == "Agent Question"
    assert t("ai.question.asking", "en") in window.chat.lines
    labels = [w.text() for w in dialog.findChildren(QLabel) if w.text()]
    assert "<b>Cell Line</b>: 库存中有 K562、K562-dTAG、K562-RTCB 三种，你需要哪个？" in labels
    (combo,) = dialog.findChildren(QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == OPTIONS and combo.isEditable()
    assert dialog.ok_button.text() == "OK" and dialog.cancel_button.text() == "Cancel"
    assert not dialog.findChildren(QCheckBox)

    combo.setCurrentIndex(OPTIONS.index("K562-dTAG-BRD4"))
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(lambda: window.plan.ask_id is not None and window.plan.approve_button.isEnabled(), timeout=WAIT_MS)
    assert not window.dialogs and gone(dialog)
    assert window.plan.items.count() == 1 and "9" in window.plan.items.item(0).text()
    assert grid.path.read_bytes() == original  # nothing is written before approval

    qtbot.mouseClick(window.plan.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
    assert ln2.load_inventory(grid.path).record(9).positions == [2, 3]  # record 9 lost position 1
    assert grid.cell_text(2, 1) == "" and grid.cell_text(2, 2) == "K562-dTAG-BRD4"
    assert t("ai.question.timeout", "en") not in window.chat.lines
    assert window.plan.ask_id is None

    # The audit history shows the change; rolling it back is staged like any write (the plan panel asks for
    # approval), and approving it restores the file's bytes and the grid.
    assert audit.table.rowCount() == 1
    changed = grid.path.read_bytes()
    audit.table.selectRow(0)
    qtbot.mouseClick(audit.rollback_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.plan.ask_id is not None and window.plan.approve_button.isEnabled(), timeout=WAIT_MS)
    assert window.plan.items.count() == 1 and "a_000001" in window.plan.items.item(0).text()
    qtbot.waitUntil(lambda: t("ln2.qt.audit.staged", "en", audit_id="a_000001") in window.chat.lines, timeout=WAIT_MS)
    assert grid.path.read_bytes() == changed  # nothing is written before approval
    qtbot.mouseClick(window.plan.approve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: grid.path.read_bytes() == original, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: grid.cell_text(2, 1) == "K562-dTAG-BRD4", timeout=WAIT_MS)
    assert audit.table.rowCount() == 2


def test_cancel_tells_the_model_question_cancelled(qtbot: Any, open_window: Any) -> None:
    window: MainWindow = open_window()
    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    ask_id = dialog.ask_id
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: t("qt.chat.question_cancelled", "en") in window.chat.lines, timeout=WAIT_MS)
    assert not window.dialogs and gone(dialog)
    # The run goes on from the cancelled question to its next step (the script stages a plan regardless).
    qtbot.waitUntil(lambda: not window.running or window.plan.ask_id is not None, timeout=WAIT_MS)
    assert window.run_id is not None
    assert model_saw(qtbot, window, window.run_id, "question") == [
        {"ok": False, "error_code": "question_cancelled", "message": "User cancelled the question."}
    ]
    assert on_host(qtbot, window, lambda h: h.ask(ask_id, principal=window.principal)).status == AskStatus.cancelled


def test_dialog_widgets_free_text_and_an_invalid_multi_select_answer(
    qtbot: Any, open_window: Any, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "question",
                        "args": {
                            "questions": [
                                {"header": "Cell Line", "question": "Which line?", "options": OPTIONS},
                                {
                                    "header": "Boxes",
                                    "question": "Which boxes?",
                                    "options": ["1", "2", "3"],
                                    "multiple": True,
                                },
                                {"header": "Note", "question": "Anything else?"},
                            ]
                        },
                    }
                ]
            },
            {"text": "Thanks."},
        ],
    )
    window: MainWindow = open_window(script=script)
    send(qtbot, window, "Which tube is the best one?")
    dialog = wait_dialog(qtbot, window)
    (combo,) = dialog.findChildren(QComboBox)
    boxes = dialog.findChildren(QCheckBox)
    edits = [e for e in dialog.findChildren(QLineEdit) if e is not combo.lineEdit()]
    assert [b.text() for b in boxes] == ["1", "2", "3"] and len(edits) == 1

    # An answer the ask does not accept (an option never offered) is refused in the dialog; the ask stays pending.
    dialog.submitted.emit([OPTIONS[0], ["4"], ""])
    qtbot.waitUntil(lambda: dialog.error.isVisible(), timeout=WAIT_MS)
    assert "4" in dialog.error.text() and dialog.error.text().startswith("That answer does not fit")
    assert dialog.isVisible() and dialog.ok_button.isEnabled() and window.dialogs
    assert (
        on_host(qtbot, window, lambda h: h.ask(dialog.ask_id, principal=window.principal)).status == AskStatus.pending
    )

    # Free text in the editable combo is a valid single answer; check boxes give a list.
    combo.setEditText("K562, the one from March")
    boxes[0].setChecked(True)
    boxes[2].setChecked(True)
    edits[0].setText("thaw today")
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
    assert window.run_id is not None
    (seen,) = model_saw(qtbot, window, window.run_id, "question")
    assert seen["ok"] and seen["result"]["raw_answers"] == ["K562, the one from March", ["1", "3"], "thaw today"]
    assert not window.dialogs
    assert t("qt.chat.answered", "en", answers="; ".join(seen["result"]["answers"])) in window.chat.lines


def test_a_question_closed_elsewhere_closes_the_dialog_and_says_so(qtbot: Any, open_window: Any) -> None:
    window: MainWindow = open_window()
    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    # Answered from the terminal (another front end, same store).
    on_host(qtbot, window, lambda h: h.runtime.answer(dialog.ask_id, ["K562-dTAG-BRD4"], answered_by="terminal"))
    qtbot.waitUntil(lambda: not window.dialogs, timeout=WAIT_MS)
    assert gone(dialog)
    assert t("qt.question.answered_elsewhere", "en") in window.chat.lines


def test_a_timed_out_question_closes_the_dialog_with_the_seed_message(qtbot: Any, open_window: Any) -> None:
    window: MainWindow = open_window(question_timeout=1.0, lang="zh-CN")
    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    assert (
        dialog.windowTitle() == "Agent 提问"
        and dialog.ok_button.text() == "确定"
        and dialog.cancel_button.text() == "取消"
    )
    assert "Agent 正在向您提问..." in window.chat.lines
    qtbot.waitUntil(lambda: not window.dialogs, timeout=WAIT_MS)
    assert "提问超时，Agent 将继续执行" in window.chat.lines


def test_closing_the_window_mid_question_cancels_the_run_and_ends_the_thread(
    qtbot: Any, open_window: Any, tmp_path: Path
) -> None:
    before = set(threading.enumerate())
    window: MainWindow = open_window()
    loop_thread = window.bridge._thread
    assert loop_thread is not None and loop_thread.is_alive()
    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    run_id, ask_id = window.run_id, dialog.ask_id
    assert run_id is not None

    window.close()
    assert window.isVisible()  # the window closes once the run is stopped, not before
    qtbot.waitUntil(lambda: window.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
    assert not window.isVisible() and gone(dialog)
    assert not loop_thread.is_alive()
    assert set(threading.enumerate()) <= before  # no thread left behind (the loop's, asyncio.to_thread's)

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    try:
        assert store.get_run(run_id).status == RunStatus.cancelled
        assert store.get_ask(ask_id).status == AskStatus.cancelled
    finally:
        store.close()


def test_stop_while_a_question_is_pending(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    window: MainWindow = open_window()
    send(qtbot, window, PROMPT)
    dialog = wait_dialog(qtbot, window)
    assert window.chat.stop_button.isEnabled()
    window.stop_run()  # the Stop button's action (the window-modal dialog covers the button itself)
    qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
    assert not window.dialogs and gone(dialog)
    assert t("qt.chat.stopped", "en") in window.chat.lines
    assert t("qt.question.cancelled_elsewhere", "en") in window.chat.lines
    assert window.chat.send_button.isEnabled() and not window.chat.stop_button.isEnabled()
    assert window.run_id is not None
    assert (
        on_host(qtbot, window, lambda h: h.run(window.run_id, principal=window.principal)).status == RunStatus.cancelled
    )


def test_run_desktop_returns_when_the_window_closes(qtbot: Any, tmp_path: Path) -> None:
    from consulta.frontends.qt import run_desktop

    from .conftest import copy_inventory, make_settings

    def close_when_ready() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows and windows[0].bridge.state is BridgeState.ready:
            windows[0].close()
        else:
            QTimer.singleShot(20, close_when_ready)

    QTimer.singleShot(0, close_when_ready)
    settings = make_settings(tmp_path)
    assert run_desktop(app="ln2", settings=settings, options={"inventory": str(copy_inventory(tmp_path))}) == 0

    # An inventory that cannot be read: the window says why, and the exit code says it failed.
    failed: list[MainWindow] = []

    def close_when_failed() -> None:
        windows = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible() and w.failed
        ]
        if windows:
            failed.append(windows[0])
            windows[0].close()
        else:
            QTimer.singleShot(20, close_when_failed)

    QTimer.singleShot(0, close_when_failed)
    assert run_desktop(app="ln2", settings=settings, options={"inventory": str(tmp_path / "missing.yaml")}) == 1
    (window,) = failed
    assert window.chat.lines[0].startswith("Could not start: The inventory file")
    assert not window.chat.send_button.isEnabled()


def test_the_menu_starts_a_new_conversation_and_quits_with_the_usual_keys(qtbot: Any, open_window: Any) -> None:
    window: MainWindow = open_window()
    grid = panel(window, GridPanel)
    assert window.tabs.currentWidget() is not window.plan  # the app's own panel first, not the empty plan tab
    assert window.tabs.currentWidget() is grid or window.side.indexOf(grid) >= 0
    menu, view = [a.menu() for a in window.menuBar().actions()]
    assert [a.text() for a in view.actions()] == [t("qt.menu.details", "en")]  # for developers, off by default
    keys = {a.text(): a.shortcut().toString() for a in menu.actions() if a.text()}
    assert keys == {"New conversation": "Ctrl+N", "Close window": "Ctrl+W", "Quit": "Ctrl+Q"}
    window.turn_id = "run_earlier"
    window.chat.add("earlier words", Tone.user)
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.turn_id is None and window.chat.lines == [] and window.chat.transcript.toPlainText() == ""
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.bridge.state is BridgeState.stopped, timeout=WAIT_MS)


def test_a_reply_streams_into_the_window_before_the_run_ends(qtbot: Any, open_window: Any, tmp_path: Path) -> None:
    reply = "Hello! Ask me about any tube in the inventory and I will look it up for you in the boxes."
    script = tmp_path / "streaming.json"
    script.write_text(json.dumps({"word_delay_s": 0.1, "steps": [{"text": reply}]}), encoding="utf-8")
    window: MainWindow = open_window(script=script)
    send(qtbot, window, "Which tube is the best one?")
    qtbot.waitUntil(lambda: "tube" in window.chat.draft_text, timeout=WAIT_MS)
    partial = window.chat.draft_text
    assert window.running and reply.startswith(partial) and len(partial) < len(reply)  # words, while the run goes on
    assert window.chat.draft.isVisible() and not any(reply in line for line in window.chat.lines)
    artifacts = Path(__file__).resolve().parents[3] / "test-artifacts" / "qt"
    artifacts.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(artifacts / "streaming-draft.png"))
    qtbot.waitUntil(lambda: any(reply in line for line in window.chat.lines), timeout=WAIT_MS)
    assert not window.chat.draft.isVisible()
