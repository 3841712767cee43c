"""Every app whole in the desktop window (real runtime and store, scripted model): quiz's adaptive test taken to its
results (items, feedback, θ ± SE, the plot, the review), advisor's ranking and detail driven by real turns of its
agent (the reply's tool calls applied, the advisor it names marked, the page context kept, the reply spoken),
modeling's timeline and files over a run's workspace with the escalation waiting in the question dialog; each app's
panels open on its main tab; ln2's grid marks what the answer is about and follows an apply."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QComboBox  # noqa: E402

from consulta.apps.advisor._catalog import page_context_for  # noqa: E402
from consulta.apps.advisor._desktop import AdvisorPanel, named_advisors  # noqa: E402
from consulta.apps.advisor._lookups import update_ranking  # noqa: E402
from consulta.apps.ln2._desktop import GridPanel  # noqa: E402
from consulta.apps.modeling._desktop import FilesPanel, TimelinePanel  # noqa: E402
from consulta.apps.quiz._desktop import AdaptiveTestPanel  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.frontends.qt import BridgeState, MainWindow  # noqa: E402
from consulta.i18n import catalog, t  # noqa: E402
from consulta.runtime import RunEnded  # noqa: E402

from ._workspace import SAMPLE, TEST_APP, build_workspace, run_folder  # noqa: E402
from .conftest import WAIT_MS, panel  # noqa: E402
from .test_desktop import send, wait_dialog  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.desktop]

PKU_CS = {"school": "北京大学", "major": "计算机科学与技术"}


@pytest.fixture
def window_of(qtbot: Any, tmp_path: Path) -> Iterator[Callable[..., MainWindow]]:
    """Open an app's window (its model scripted by `steps`), wait until its panels are built; closed afterwards."""
    windows: list[MainWindow] = []

    def open_(app: Any, *, lang: str = "en", steps: Any = (), options: dict[str, Any] | None = None) -> MainWindow:
        script = tmp_path / f"script-{len(windows)}.json"
        script.write_text(json.dumps(list(steps), ensure_ascii=False), encoding="utf-8")
        settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model=f"scripted:{script}",
                            lang=lang)  # fmt: skip
        window = MainWindow(app=app, settings=settings, options=options)
        windows.append(window)
        window.show()
        qtbot.waitUntil(lambda: window.bridge.state is BridgeState.ready and window.panels_ready, timeout=WAIT_MS)
        return window

    yield open_
    for window in windows:
        window.close()
        qtbot.waitUntil(lambda w=window: w.bridge.state is BridgeState.stopped, timeout=WAIT_MS)
        window.deleteLater()


def answer_until_finished(qtbot: Any, test: AdaptiveTestPanel) -> list[str]:
    """Answer every item (the first choice, or a few words) until the results show; the verdicts seen."""
    verdicts = []
    for _ in range(60):
        if test.pages.currentWidget() is test.results_page:
            return verdicts
        item = test.test.item if test.test is not None else None
        assert item is not None
        if item.item_type == "short_answer":
            test.text_answer.setText("a join combines rows of two tables on a key")
        else:
            test.choices.buttons()[0].setChecked(True)
        answered = test.test.answered if test.test is not None else 0
        qtbot.mouseClick(test.submit_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda a=answered: test.feedback is not None and test.test.answered == a + 1, timeout=WAIT_MS)
        assert test.feedback_view.isVisible() and test.estimate.text().startswith("θ = ")
        assert test.answered_item is not None and test.meta.text() == test._meta(test.answered_item)  # graded
        verdicts.append(test.feedback_view.toPlainText().splitlines()[0])
        qtbot.mouseClick(test.next_button, Qt.MouseButton.LeftButton)
    raise AssertionError("the test did not finish within 60 items")


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_quiz_s_adaptive_test_on_the_desktop(qtbot: Any, window_of: Any, lang: str) -> None:
    window = window_of("quiz", lang=lang)
    test = panel(window, AdaptiveTestPanel)
    assert window.tabs.currentWidget() is test  # the app's main tab first
    assert test.pages.currentWidget() is test.profile_page
    # The chat says what it is for, with an example of each mode (the test needs no chat).
    hint = window.chat.hint
    assert hint.isVisible() and hint.text() == t("quiz.qt.chat.empty", lang)
    assert all(mode in hint.text() for mode in ("1", "2")) and "INNER JOIN" in hint.text()
    test.role.setText("Data analyst")
    test.duty.setText("Reports on sales")
    test.interests.setText("SQL, statistics")
    qtbot.mouseClick(test.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: test.test is not None and test.pages.currentWidget() is test.item_page, timeout=WAIT_MS)
    assert test.stem.text() and test.progress.text() == t(
        "quiz.web.progress", lang, position=1, max=test.test.max_items
    )
    verdicts = answer_until_finished(qtbot, test)
    words = {t(f"quiz.web.feedback.{k}", lang) for k in ("right", "partial", "wrong")}
    assert verdicts and set(verdicts) <= words
    view = test.test
    assert view is not None and view.status == "finished" and view.review
    assert test.score.text() == t("quiz.web.result.theta", lang, theta=f"{view.theta:+.2f}".replace("+0.00", "0.00"),
                                  se=f"{view.se:.2f}", n=view.answered)  # fmt: skip
    assert test.plot.renderer().isValid()  # the θ ± SE plot drawn
    assert test.review.toPlainText().count(t("quiz.web.feedback.your_answer", lang)) == len(view.review)
    # A test left half-way comes back in a new window (the same sessions as the web page and the terminal).
    qtbot.mouseClick(test.again, Qt.MouseButton.LeftButton)
    assert test.pages.currentWidget() is test.profile_page and test.role.text() == "Data analyst"


def test_a_profile_at_fault_is_one_line_and_starts_nothing(qtbot: Any, window_of: Any) -> None:
    window = window_of("quiz")
    test = panel(window, AdaptiveTestPanel)
    test.role.setText("   ")
    test.duty.setText("Reports")
    test.interests.setText("SQL")
    qtbot.mouseClick(test.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: test.error.isVisible(), timeout=WAIT_MS)
    assert "\n" not in test.error.text() and "job" in test.error.text().lower() and "Traceback" not in test.error.text()
    assert test.test is None and test.pages.currentWidget() is test.profile_page


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_the_advisor_s_ranking_and_detail_follow_its_turns(qtbot: Any, window_of: Any, lang: str) -> None:
    window = window_of("advisor", lang=lang)
    site = panel(window, AdvisorPanel)
    assert window.tabs.currentWidget() is site
    qtbot.waitUntil(lambda: site.catalog is not None and site.school.count() > 1, timeout=WAIT_MS)
    first = update_ranking(window.bridge.host.env.store.engine, **PKU_CS).advisors[0]

    words = {"zh-CN": "我想考北京大学计算机系", "en": "I want to study computer science at Peking University"}[lang]
    send(qtbot, window, words)
    qtbot.waitUntil(lambda: site.ranking is not None and site.table.rowCount() > 0, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
    assert (site.ranking.school, site.ranking.major) == (PKU_CS["school"], PKU_CS["major"])
    assert site.school.currentData() == "北京大学" and site.major.currentData() == PKU_CS["major"]
    # The chat shows the reply's words, not its JSON (the panel shows what its tool calls did).
    replies = [line for line in window.chat.lines if line.startswith(t("qt.chat.reply_line", lang, text=""))]
    assert replies and not any("voice_response" in line or "update_ranking" in line for line in replies)
    qtbot.waitUntil(lambda: len(site.heard) > 1000, timeout=WAIT_MS)  # the reply synthesised as speech (WAV)
    assert site.heard[:4] == b"RIFF"
    engine = window.bridge.host.env.store.engine
    qtbot.waitUntil(lambda: (page_context_for(engine, window.principal) or None) is not None, timeout=WAIT_MS)
    context = page_context_for(engine, window.principal)
    assert context is not None and context.current_page == "ranking"
    assert context.visible_advisors[0].id == first.id  # what the agent reads as "the first one"

    # A reply that names an advisor marks them in the ranking; its get_advisor_detail opens the detail.
    named = first.name if lang == "zh-CN" else first.name_en
    reply = {"voice_response": f"{named}: 4.8", "tool_calls": [{"tool": "get_advisor_detail",
                                                                 "params": {"advisor_id": first.id}}]}  # fmt: skip
    assert named_advisors(reply["voice_response"], site.ranking) == {first.id}
    site.on_event(RunEnded(run_id="r", status="finished", output=json.dumps(reply, ensure_ascii=False)))
    qtbot.waitUntil(lambda: site.pages.currentWidget() is site.detail_page, timeout=WAIT_MS)
    assert site.marked_rows() == [0]
    assert (first.name if lang == "zh-CN" else first.name_en) in site.detail_view.toPlainText()
    qtbot.waitUntil(lambda: page_context_for(engine, window.principal).current_page == "detail", timeout=WAIT_MS)
    assert page_context_for(engine, window.principal).selected_advisor.id == first.id
    qtbot.mouseClick(site.back, Qt.MouseButton.LeftButton)
    assert site.pages.currentWidget() is site.ranking_page
    site.voice.click()  # muted: nothing more is spoken
    site.heard = b""
    site.speak("再见")
    assert site.heard == b"" and site.voice.text() == t("advisor.web.voice.muted", lang)


def test_the_modeling_timeline_files_and_escalation(qtbot: Any, window_of: Any, tmp_path: Path) -> None:
    escalate = {"tool_calls": [{"name": "question", "args": {"questions": [{
        "header": "Gate", "question": "code_runs was rejected 3 times. Accept it as it is, or stop?",
        "options": ["accept", "stop"]}]}}]}  # fmt: skip
    window = window_of(TEST_APP, steps=[escalate, {"text": "Stopped at your decision."}],
                       options={"problem": str(SAMPLE)})  # fmt: skip
    timeline, files = panel(window, TimelinePanel), panel(window, FilesPanel)
    assert window.tabs.currentWidget() is timeline
    assert timeline.state.text() == t("modeling.web.timeline.empty", "en")
    send(qtbot, window, "Solve the problem.")
    dialog = wait_dialog(qtbot, window)  # the escalation's form: the window's question dialog
    build_workspace(run_folder(tmp_path, window.turn_id or window.run_id))
    timeline.reread()
    qtbot.waitUntil(lambda: timeline.timeline is not None and timeline.waiting, timeout=WAIT_MS)
    assert t("modeling.qt.now.waiting", "en") in timeline.state.text()
    cards = timeline.cards.toPlainText()
    assert "modeler → data_engineer #1" in cards and "data/demand_monthly.csv: month 2019-06 appears twice." in cards
    phases = timeline.phases.text()
    assert t("modeling.web.phase.approved", "en") in phases and t("modeling.web.phase.rejected", "en") in phases
    assert files.select("results/metrics.csv") and "cagr" in files.viewer.toPlainText()
    assert files.select("figures/yearly_total.png") and not files.image.isHidden()
    assert not files.image.pixmap().isNull() and files.viewer.isHidden()
    assert not files.select("state/memo.json")  # only the listed output folders
    (combo,) = dialog.findChildren(QComboBox)
    combo.setCurrentText("stop")
    dialog.ok_button.click()
    qtbot.waitUntil(lambda: not window.running, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not timeline.waiting and timeline.timeline.run_status == "finished", timeout=WAIT_MS)


def test_the_grid_marks_what_the_answer_is_about_and_follows_an_apply(qtbot: Any, open_window: Any) -> None:
    window = open_window()
    grid = panel(window, GridPanel)
    grid.show_box(1)
    grid.table.cellClicked.emit(0, 0)  # a tube of box 1 in the tube pane
    send(qtbot, window, "帮我取一管K562")
    # query_inventory returned the K562 tubes: marked where they are (box 2 is shown)
    qtbot.waitUntil(lambda: bool(grid.marked) and grid.mark_kind == "found", timeout=WAIT_MS)
    assert (2, 1) in grid.marked
    grid.show_box(2)
    assert grid.marked_cells().get((2, 1)) == "found"
    dialog = wait_dialog(qtbot, window)
    (combo,) = dialog.findChildren(QComboBox)
    combo.setCurrentText("K562-dTAG-BRD4")
    dialog.ok_button.click()
    qtbot.waitUntil(lambda: grid.mark_kind == "staged", timeout=WAIT_MS)  # the staged plan's tube
    assert grid.marked == {(2, 1)} and grid.marked_cells() == {(2, 1): "staged"}
    qtbot.waitUntil(lambda: window.plan.approve_button.isEnabled(), timeout=WAIT_MS)
    window.plan.approve_button.click()
    qtbot.waitUntil(lambda: grid.changed == {(2, 1)}, timeout=WAIT_MS)
    # applied: the change is marked, and the tube pane shows the changed box's tube, not box 1's
    assert grid.marked_cells() == {(2, 1): "changed"} and grid.selected == (2, 1)
    assert "2" in grid.details.toPlainText().splitlines()[0] and "A1" in grid.details.toPlainText()


@pytest.mark.parametrize("app", ["tutor", "modeling"])
def test_each_app_opens_on_its_main_tab(qtbot: Any, window_of: Any, app: str) -> None:
    window = window_of(app)
    en = catalog("en")
    assert window.windowTitle() == en["web.title"].format(name=en[f"{app}.web.name"])  # the page's title pattern
    own = next(p.widget for p in window.panels if p.placement == "tab")
    assert window.tabs.currentWidget() is own and window.tabs.indexOf(window.plan) < 0  # they stage no plans


def test_a_step_says_its_time_and_thinking_shows_a_clock(qtbot: Any) -> None:
    from consulta.frontends.qt import ChatPanel
    from consulta.runtime import StepStarted, ToolCalled, ToolReturned

    chat = ChatPanel(lang="zh-CN", app="ln2")
    qtbot.addWidget(chat)
    chat.show()
    chat.show_event(StepStarted(run_id="r", step=1))
    assert chat.clock.isVisible() and chat.clock.text() == t("web.chat.thinking", "zh-CN", seconds=0)
    assert chat.lines == []  # no "Thinking… (step 1)" left in the transcript: the clock says it while it lasts
    args = {"cell_line": "K562"}
    chat.show_event(ToolCalled(run_id="r", tool_call_id="c1", tool_name="query_inventory", args=args))
    assert not chat.clock.isVisible()
    chat.show_event(ToolReturned(run_id="r", tool_call_id="c1", tool_name="query_inventory", ok=True, result={},
                                 duration_ms=1234))  # fmt: skip
    line = chat.lines[-1]
    assert line.endswith(" · 1.2 秒") and "query_inventory" not in line and "K562" in line
    assert chat.transcript.toPlainText().strip().splitlines()[-1] == line
    # A refusal the model handles is said in words, never as an error
    chat.show_event(ToolCalled(run_id="r", tool_call_id="c2", tool_name="record_thaw", args={}))
    chat.show_event(ToolReturned(run_id="r", tool_call_id="c2", tool_name="record_thaw", ok=False,
                                 result={"error_code": "repeated_call"}, duration_ms=5))  # fmt: skip
    assert (
        chat.lines[-1] == t("qt.chat.step_set_aside", "zh-CN") and "repeated_call" not in chat.transcript.toPlainText()
    )


def test_step_details_are_a_developers_toggle(qtbot: Any, open_window: Any) -> None:
    window = open_window()
    assert not window.details_action.isChecked() and not window.chat.details  # off by default
    window.details_action.setChecked(True)
    send(qtbot, window, "帮我取一管K562")
    wait_dialog(qtbot, window)
    assert any("  [query_inventory]" in line for line in window.chat.lines)
