"""The desktop main window: chat on the left; on the right the staged plan (for an app whose agent stages plans: its
plan executor, `Agent.executor`) and the app's own panels (its desktop part, built once the host is up). It holds no run state of its own beyond what it shows: every action goes through
the host (via the bridge) and every change comes back as a runtime event."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QSplitter, QTabWidget, QWidget

from ...apps import AppDef, AppOptions, AppView, DesktopPanel, resolve_app
from ...asks import Question
from ...config import Settings
from ...i18n import catalog, normalize_lang, t
from ...runtime import (
    PLAN_ASK,
    AskClosed,
    AskOpened,
    AskRecord,
    AskStatus,
    ConflictError,
    ConsultaError,
    InvalidAnswerError,
    RunEnded,
    RunStarted,
    ToolError,
)
from .._host import HandedOver, HostEvent
from .._person_view import PersonView
from ._bridge import BridgeState, HostBridge
from ._chat import ChatPanel, Tone
from ._dialog import QuestionDialog
from ._plan import PlanPanel

__all__ = ["MainWindow"]

CLOSE_GRACE_MS = 30_000
"""If stopping takes longer than this (a model call that will not end), the window closes anyway."""

_CLOSED_ELSEWHERE = {
    AskStatus.answered: "qt.question.answered_elsewhere",
    AskStatus.cancelled: "qt.question.cancelled_elsewhere",
    AskStatus.declined: "qt.question.cancelled_elsewhere",
    AskStatus.timed_out: "ai.question.timeout",
}


def _keys(usual: str, standard: QKeySequence.StandardKey) -> list[QKeySequence]:
    """`usual` first (what people expect on every platform), then the platform's own keys for the action."""
    first = QKeySequence(usual)
    return [first, *(k for k in QKeySequence.keyBindings(standard) if k != first)]


class MainWindow(QMainWindow):
    """One app's desktop window for the machine's own user (`LOCAL_PRINCIPAL`).

    Starts the bridge (event loop thread + AppHost) at once; closing the window stops this window's runs (pending
    asks close as cancelled) and ends the loop before the window really closes.
    """

    def __init__(
        self,
        *,
        app: str | AppDef,
        settings: Settings,
        options: Mapping[str, Any] | AppOptions | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.app = resolve_app(app)
        self.lang = normalize_lang(settings.lang)
        self.bridge = HostBridge(app=self.app, settings=settings, options=options, parent=self)
        self.principal = self.bridge.principal
        self.dialogs: dict[str, QuestionDialog] = {}
        self.run_id: str | None = None
        """The run in progress (or the last one), a handed-over run included."""
        self.turn_id: str | None = None
        """The run this window started last: the next request continues its conversation (not a hand-over's)."""
        self.running = False
        self.start_error: str | None = None
        """Why the host could not start (bad settings, unreadable data), if it could not."""
        self._closing = False
        own = f"{self.app.name}.web.name"  # the app's name for people, as the page's title says it
        name = t(own, self.lang) if own in catalog(normalize_lang(self.lang)) else self.app.name
        self.setWindowTitle(t("web.title", self.lang, name=name))  # one title pattern, the page's
        self.resize(1200, 760)

        self.chat = ChatPanel(lang=self.lang, app=self.app.name)
        self.plan = PlanPanel(lang=self.lang, parent=self)  # Qt's to delete with the window, tab or not
        self.plan.hide()
        self.panels: list[DesktopPanel] = []
        """The app's own panels (its desktop part), built once the host is ready."""
        self.panels_ready = False
        self._person_view: PersonView | None = None
        """What the chat shows of the host's events (made with the host)."""
        self.tabs = QTabWidget()  # the plan's tab is added once the host says its agent stages plans (`_on_ready`)
        self.side = QSplitter(Qt.Orientation.Vertical)
        self.side.addWidget(self.tabs)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.chat)
        splitter.addWidget(self.side)
        splitter.setSizes([480, 720])
        self.setCentralWidget(splitter)

        self._add_menu()
        self.chat.set_busy(True, can_stop=False)
        self.statusBar().showMessage(t("qt.status.starting", self.lang))
        self.chat.send_requested.connect(self.send)
        self.chat.stop_requested.connect(self.stop_run)
        self.plan.decided.connect(self._decide_plan)
        self.bridge.ready.connect(self._on_ready)
        self.bridge.failed.connect(self._on_failed)
        self.bridge.event_received.connect(
            self.on_event, Qt.ConnectionType.QueuedConnection
        )  # emitted on the loop thread
        self.bridge.stopped.connect(self._on_stopped)
        self.bridge.start()

    def _add_menu(self) -> None:
        """The window's menu: a new conversation (Ctrl+N), close (Ctrl+W) and quit (Ctrl+Q), the usual keys."""
        menu = self.menuBar().addMenu(t("qt.menu.conversation", self.lang))
        self.new_action = QAction(t("qt.menu.new", self.lang), self)
        self.new_action.setShortcuts(_keys("Ctrl+N", QKeySequence.StandardKey.New))
        self.new_action.triggered.connect(self.new_conversation)
        close = QAction(t("qt.menu.close", self.lang), self)
        close.setShortcuts(_keys("Ctrl+W", QKeySequence.StandardKey.Close))
        close.triggered.connect(self.close)
        quit_ = QAction(t("qt.menu.quit", self.lang), self)
        quit_.setShortcuts(_keys("Ctrl+Q", QKeySequence.StandardKey.Quit))
        quit_.setMenuRole(QAction.MenuRole.QuitRole)
        quit_.triggered.connect(self.close)
        menu.addActions([self.new_action, close])
        menu.addSeparator()
        menu.addAction(quit_)
        view = self.menuBar().addMenu(t("qt.menu.view", self.lang))
        self.details_action = QAction(t("qt.menu.details", self.lang), self)
        self.details_action.setCheckable(True)  # off: a person reads steps in words only
        self.details_action.toggled.connect(lambda on: setattr(self.chat, "details", on))
        view.addAction(self.details_action)

    def new_conversation(self) -> None:
        """Start afresh: the next request begins a new conversation (not while a run goes on)."""
        if self.running:
            self.statusBar().showMessage(t("qt.menu.busy", self.lang), 5000)
            return
        self.turn_id = None
        self.chat.transcript.clear()
        self.chat.lines.clear()
        self.chat.hint.show()
        self.chat.input.setFocus()

    # ---- the host's lifetime --------------------------------------------------------------------------------

    def _on_ready(self) -> None:
        assert self.bridge.host is not None
        self._person_view = PersonView(self.bridge.host, lambda event: self.chat.show_event(event))
        if self.bridge.host.agent.executor is not None:  # the runtime's mark of an agent whose writes are staged
            self._show_plan_tab()
        if self.app.desktop is not None:
            try:
                part = self.app.desktop()
                self.chat.reply_words = part.reply
                self.panels = list(part.panels(_Kit(self)))
            except Exception as error:  # noqa: BLE001 - an app's panels that fail are reported, the chat still works
                self._show_error(error)
        for panel in self.panels:
            if panel.placement == "top":
                self.side.insertWidget(0, panel.widget)
                self.side.setSizes([520, 240])
            else:
                self.tabs.addTab(panel.widget, panel.title)
        own = next((p.widget for p in self.panels if p.placement != "top"), None)
        if own is not None:
            self.tabs.setCurrentWidget(own)  # the app's main panel first; the plan tab comes forward when one waits
        self.panels_ready = True
        self.chat.set_busy(False)
        self.statusBar().showMessage(t("qt.status.ready", self.lang), 5000)

    def _on_failed(self, message: str) -> None:
        self.start_error = message
        self.chat.add(t("qt.status.failed", self.lang, error=message), Tone.bad)
        self.statusBar().showMessage(t("qt.status.failed", self.lang, error=message))

    @property
    def failed(self) -> bool:
        return self.start_error is not None

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        """Stop gracefully first: the window really closes once the bridge has stopped (or after a grace period)."""
        if self.bridge.state in (BridgeState.stopped, BridgeState.new):
            event.accept()
            return
        event.ignore()
        if self._closing:
            return
        self._closing = True
        self.chat.set_busy(True, can_stop=False)
        self.plan.set_enabled(False)
        if not self.failed:
            self.statusBar().showMessage(t("qt.status.stopping", self.lang))
            self.chat.add(t("qt.status.stopping", self.lang), Tone.warn)
        for dialog in list(self.dialogs.values()):
            dialog.setEnabled(False)  # stopping closes its ask as cancelled; the dialog goes with the window
        QTimer.singleShot(CLOSE_GRACE_MS, self._force_close)
        self.bridge.shutdown()

    def _on_stopped(self) -> None:
        for dialog in list(self.dialogs.values()):
            dialog.finish()
        self.dialogs.clear()
        self.close()

    def _force_close(self) -> None:
        if self.bridge.state is not BridgeState.stopped:
            self.bridge.abandon()
            self.close()

    # ---- chat and runs --------------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        """Start a run on `text`, continuing the conversation of the previous turn."""
        previous = self.turn_id

        def refused(error: BaseException) -> None:
            self.running = False
            self._show_error(error)
            self.chat.set_busy(False)

        # RunStarted (queued before this call's reply) marks the run as the current one.
        def started(run: Any) -> None:
            self.turn_id = run.id

        if self.bridge.call(
            lambda h: h.start(text, principal=self.principal, continue_from=previous), on_done=started, on_error=refused
        ):
            self.running = True
            self.chat.set_busy(True, can_stop=False)
            self.chat.input.clear()

    def stop_run(self) -> None:
        run_id = self.run_id
        if run_id is None or not self.running:
            return
        self.chat.stop_button.setEnabled(False)
        self.statusBar().showMessage(t("qt.status.stopping_run", self.lang), 5000)
        self.bridge.call(lambda h: h.stop(run_id, principal=self.principal), on_error=self._show_error)

    def on_event(self, event: HostEvent) -> None:
        """A runtime event, on the GUI thread: show what the person should read of it, and open or close what it asks
        for (a hand-over needs nothing: the next agent's run starts like any run)."""
        if self._person_view is not None:
            self._person_view(event)
        if isinstance(event, HandedOver):
            return
        for panel in self.panels:
            if panel.on_event is not None:
                panel.on_event(event)
        match event:
            case RunStarted():
                self.run_id = event.run_id
                self.running = True
                self.chat.set_busy(True)
            case AskOpened(kind="question"):
                self._open_question(event)
            case AskOpened(kind="plan"):
                self._open_plan(event)
            case AskClosed():
                self._ask_closed(event)
            case RunEnded():
                if event.run_id == self.run_id:
                    self.running = False
                    if not self._closing:
                        self.chat.set_busy(False)
            case _:
                pass

    # ---- questions ------------------------------------------------------------------------------------------

    def _open_question(self, event: AskOpened) -> None:
        if self._closing:
            return  # the stop under way closes this ask as cancelled
        questions = [Question.model_validate(q) for q in event.payload.get("questions", [])]
        dialog = QuestionDialog(ask_id=event.ask_id, questions=questions, lang=self.lang, parent=self)
        dialog.submitted.connect(lambda answers: self._answer(dialog, answers))
        dialog.cancel_requested.connect(lambda: self._cancel(dialog))
        self.dialogs[event.ask_id] = dialog
        dialog.open()  # window-modal, returns at once: the event flow goes on

    def _answer(self, dialog: QuestionDialog, answers: list[Any]) -> None:
        def refused(error: BaseException) -> None:
            if isinstance(error, InvalidAnswerError):
                dialog.refuse(t("qt.question.invalid", self.lang, error=str(error)))
            elif isinstance(error, ConflictError | ConsultaError):  # closed meanwhile: AskClosed says how
                self._close_dialog(dialog.ask_id)
            else:
                dialog.refuse(t("qt.chat.error", self.lang, message=str(error)))

        def answered(ask: AskRecord) -> None:
            self._close_dialog(ask.id)
            answers = (ask.outcome or {}).get("result", {}).get("answers", [])
            self.chat.add(t("qt.chat.answered", self.lang, answers="; ".join(answers)), Tone.ask)

        self.bridge.call(
            lambda h: h.answer(dialog.ask_id, answers, principal=self.principal), on_done=answered, on_error=refused
        )

    def _cancel(self, dialog: QuestionDialog) -> None:
        def cancelled(_: AskRecord) -> None:
            self._close_dialog(dialog.ask_id)
            self.chat.add(t("qt.chat.question_cancelled", self.lang), Tone.warn)

        # Already closed (ConflictError): AskClosed has said how, and the dialog goes either way.
        if not self.bridge.call(
            lambda h: h.cancel(dialog.ask_id, principal=self.principal),
            on_done=cancelled,
            on_error=lambda _: self._close_dialog(dialog.ask_id),
        ):
            self._close_dialog(dialog.ask_id)  # shutting down: the stop closes the ask as cancelled

    def _close_dialog(self, ask_id: str) -> None:
        dialog = self.dialogs.pop(ask_id, None)
        if dialog is not None:
            dialog.finish()
            dialog.deleteLater()

    def _ask_closed(self, event: AskClosed) -> None:
        status = AskStatus(event.status)
        if event.kind == PLAN_ASK and event.ask_id == self.plan.ask_id:
            # Approved or rejected: the transcript says what came of it. Otherwise say why the plan went away.
            self.plan.clear(
                None
                if status is AskStatus.answered
                else t("qt.plan.closed", self.lang, status=t(_ASK_STATUS[status], self.lang))
            )
        if event.ask_id not in self.dialogs:
            return
        if event.answered_by != self.principal and not self._closing:
            # Closed elsewhere (the terminal, the web page), by the timeout, or by a stop: say so.
            message = t(_CLOSED_ELSEWHERE.get(status, "qt.question.cancelled_elsewhere"), self.lang)
            self.chat.add(message, Tone.warn)
            self.statusBar().showMessage(message, 10_000)
        self._close_dialog(event.ask_id)

    # ---- plans and rollback ---------------------------------------------------------------------------------

    def _show_plan_tab(self) -> None:
        """The staged plan's tab, first, if it is not shown yet."""
        if self.tabs.indexOf(self.plan) < 0:
            self.tabs.insertTab(0, self.plan, t("qt.tab.plan", self.lang))

    def _open_plan(self, event: AskOpened) -> None:
        items = event.payload.get("items", [])
        self.plan.show_plan(event.ask_id, [i.get("preview", "") for i in items])
        self._show_plan_tab()  # a plan to decide is shown whichever agent staged it
        self.tabs.setCurrentWidget(self.plan)  # the previews are in the run's language (the window's)

    def _decide_plan(self, ask_id: str, approve: bool) -> None:
        def refused(error: BaseException) -> None:
            self._show_error(error)
            if self.plan.ask_id == ask_id:
                self.plan.set_enabled(not isinstance(error, ConflictError))

        self.bridge.call(
            lambda h: h.answer(ask_id, "approve" if approve else "reject", principal=self.principal), on_error=refused
        )

    def _show_error(self, error: BaseException) -> None:
        if isinstance(error, ConsultaError):  # its words in the window's language (a file's problem and its fix)
            message = error.localized(self.lang)
        else:
            message = error.message if isinstance(error, ToolError) else str(error)
        self.chat.add(t("qt.chat.error", self.lang, message=message), Tone.bad)


_ASK_STATUS = {
    AskStatus.pending: "qt.ask.pending",
    AskStatus.answered: "qt.ask.answered",
    AskStatus.cancelled: "qt.ask.cancelled",
    AskStatus.timed_out: "qt.ask.timed_out",
    AskStatus.declined: "qt.ask.declined",
}


_TONES = {"good": Tone.good, "warn": Tone.warn, "bad": Tone.bad}


class _Kit:
    """What the window gives the app's panels (`DesktopKit`)."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self.lang = window.lang
        self.principal = window.principal

    @property
    def host(self) -> AppView | None:
        return self._window.bridge.host

    def call(
        self,
        work: Callable[[Any], Any],
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> bool:
        return self._window.bridge.call(work, on_done=on_done, on_error=on_error)

    def notify(self, text: str, tone: str = "good") -> None:
        self._window.chat.add(text, _TONES.get(tone, Tone.good))

    def show_error(self, error: BaseException) -> None:
        self._window._show_error(error)
