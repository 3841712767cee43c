"""The chat panel: a transcript of the run's events (the request, thinking, tool calls and results, questions, plans,
the agent's replies, errors) and the input line. Every line comes from the catalogs."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from enum import Enum
from typing import assert_never

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ...i18n import catalog, normalize_lang, t, t_app
from ...runtime import (
    PLAN_ASK,
    AskClosed,
    AskOpened,
    Event,
    ModelText,
    PlanDecided,
    PlanStaged,
    ReplyChecked,
    RunEnded,
    RunStarted,
    StepStarted,
    TextDelta,
    ToolCalled,
    ToolReturned,
)
from .._steps import step_time, step_words

__all__ = ["ChatPanel", "Tone", "describe_event"]

QUESTION_TOOL = "question"


class Tone(Enum):
    """How a transcript line looks."""

    user = "#1a237e"
    agent = "#004d40"
    quiet = "#757575"
    good = "#2e7d32"
    warn = "#e65100"
    bad = "#b00020"
    ask = "#6a1b9a"


def describe_event(event: Event, lang: str, *, app: str = "") -> tuple[str, Tone] | None:
    """The transcript line for a runtime event, or None when the event shows nothing by itself. A tool call reads as
    `app`'s words for its step; the tool's name, arguments and a refusal's reasons are the model's, not shown."""
    match event:
        case RunStarted(resumed=True):
            return t("qt.chat.resumed", lang), Tone.quiet
        case RunStarted(prompt=prompt):
            return t("qt.chat.you", lang, text=prompt or ""), Tone.user
        case StepStarted():
            return None  # the clock below the transcript says the model is at work, and for how long
        case ModelText(text=text):
            return t("qt.chat.reply_line", lang, text=text), Tone.agent  # who speaks, as the page says it
        case ToolCalled(tool_name=name):
            if name == QUESTION_TOOL:
                return None  # the question shows as `ai.question.asking` when its ask opens
            return t("qt.chat.step", lang, step=step_words(app, name, event.args, lang)), Tone.quiet
        case ToolReturned(tool_name=name, ok=True):
            return None
        case ToolReturned(tool_name=name):
            return None if name == QUESTION_TOOL else (t("qt.chat.step_set_aside", lang), Tone.quiet)
        case AskOpened(kind=kind):
            return (
                (t("qt.chat.plan_waiting", lang), Tone.ask)
                if kind == PLAN_ASK
                else (t("ai.question.asking", lang), Tone.ask)
            )
        case TextDelta():
            return None  # the reply being written shows in its own line (ChatPanel.draft)
        case ReplyChecked():
            return None  # a reply the runtime refused was never the person's to read
        case AskClosed():
            return None  # the window says what matters (closed elsewhere, timed out)
        case PlanStaged(items=items):
            return t("qt.chat.plan_staged", lang, count=len(items)), Tone.ask
        case PlanDecided(status="applied", result=result):
            return t("qt.plan.applied", lang, audit_ids=", ".join((result or {}).get("audit_ids", []))), Tone.good
        case PlanDecided(status="rejected"):
            return t("qt.plan.rejected", lang), Tone.warn
        case PlanDecided(status="failed", result=result):
            return t("qt.plan.failed", lang, message=(result or {}).get("message", "")), Tone.bad
        case PlanDecided():
            return t("qt.plan.cancelled", lang), Tone.warn
        case RunEnded(status="failed", error=error):
            return t("qt.chat.failed", lang, error=error or ""), Tone.bad
        case RunEnded(status="cancelled"):
            return t("qt.chat.stopped", lang), Tone.warn
        case RunEnded():
            return None
        case _:
            assert_never(event)


def _detail(event: Event) -> str:
    """What a developer reads of a step: the tool's name, or a refusal's code and message."""
    if isinstance(event, ToolCalled):
        return event.tool_name
    if isinstance(event, ToolReturned) and not event.ok:
        result = event.result if isinstance(event.result, dict) else {}
        return f"{event.tool_name}: {result.get('error_code', '')} {result.get('message', '')}".strip()
    return ""


def _empty_chat(app: str, lang: str) -> str:
    """The app's words for what its chat is for: the desktop's own (`<app>.qt.chat.empty`), else the page's."""
    words = catalog(normalize_lang(lang))
    key = next((k for k in (f"{app}.qt.chat.empty", f"{app}.web.chat.empty") if k in words), "web.chat.empty")
    return t(key, lang)


class ChatPanel(QWidget):
    """Transcript above, input line with Send and Stop below. `send_requested(text)` when the person sends."""

    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self, *, lang: str, app: str = "", parent: QWidget | None = None) -> None:
        """`app`: the app served, whose catalog may word the input's placeholder its own way."""
        super().__init__(parent)
        self.lang = lang
        self.app = app
        self.transcript = QTextBrowser()
        self.transcript.setOpenExternalLinks(False)
        self.input = QLineEdit()
        self.input.setPlaceholderText(t_app(app, "qt.chat.placeholder", lang))
        self.send_button = QPushButton(t("qt.chat.send", lang))
        self.stop_button = QPushButton(t("qt.chat.stop", lang))
        self.stop_button.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.draft = QLabel()
        self.draft.setWordWrap(True)
        self.draft.setStyleSheet(f"color: {Tone.quiet.value}; font-style: italic; margin: 2px 0")
        self.draft.setVisible(False)
        self.draft_text = ""
        """The reply being written (shown below the transcript, provisional)."""
        self.hint = QLabel(_empty_chat(app, lang))
        """What the chat is for (the app's words), until the conversation starts."""
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet(f"color: {Tone.quiet.value}; margin: 4px 2px")
        layout.addWidget(self.hint)
        self.clock = QLabel()
        """While the model thinks: for how long, each second (what the page's "Thinking… 12 s" says)."""
        self.clock.setStyleSheet(f"color: {Tone.quiet.value}; margin: 2px 0")
        self.clock.setVisible(False)
        self._clock_started = 0.0
        self._ticks = QTimer(self)
        self._ticks.setInterval(1000)
        self._ticks.timeout.connect(self._tick)
        self._step: tuple[str, int] | None = None
        """The step shown last (its tool call's id, its line's index): its time is added when it returns."""
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.draft)
        layout.addWidget(self.clock)
        layout.addLayout(row)
        self.input.returnPressed.connect(self._send)
        self.send_button.clicked.connect(self._send)
        self.stop_button.clicked.connect(self.stop_requested)
        self.lines: list[str] = []
        """Every line shown, as plain text (what the transcript says, for people and tests alike)."""
        self.details = False
        """Steps show their tool's name, and a refusal its code (for developers: the View menu's toggle)."""
        self.reply_words: Callable[[str, str], str] | None = None
        """The app's words for a reply that is not prose (its desktop part's `reply`), once the window knows them."""

    def _send(self) -> None:
        text = self.input.text().strip()
        if text and self.send_button.isEnabled():
            self.send_requested.emit(text)

    def set_busy(self, busy: bool, *, can_stop: bool = True) -> None:
        """While a run goes on, nothing new can be sent; it can be stopped."""
        self.send_button.setEnabled(not busy)
        self.input.setEnabled(not busy)
        self.stop_button.setEnabled(busy and can_stop)
        if not busy:
            self.input.setFocus()

    def add(self, text: str, tone: Tone) -> None:
        self.hint.hide()
        self.lines.append(text)
        body = html.escape(text).replace("\n", "<br>")
        self.transcript.append(f'<div style="color:{tone.value}; margin:2px 0">{body}</div>')

    def show_event(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._thinking(False)  # the words being written say it is at work
            self._drafted(event)
            return
        if isinstance(event, ReplyChecked) and self.draft_text:
            self.add(t("web.reply.withdrawn", self.lang), Tone.quiet)  # words they may have read leave: say so
        self._set_draft("")  # whatever comes next, the draft was provisional: the reply (if it is one) is a line
        self._thinking(isinstance(event, StepStarted))
        if (
            isinstance(event, ToolReturned)
            and event.ok
            and self._step is not None
            and self._step[0] == event.tool_call_id
        ):
            self._timed(event.duration_ms)
            return
        if isinstance(event, ModelText) and self.reply_words is not None:
            event = event.model_copy(update={"text": self.reply_words(event.text, self.lang)})
        line = describe_event(event, self.lang, app=self.app)
        if line is not None:
            detail = _detail(event) if self.details else ""
            self.add(line[0] + (f"  [{detail}]" if detail else ""), line[1])
            self._step = (event.tool_call_id, len(self.lines) - 1) if isinstance(event, ToolCalled) else None

    def _thinking(self, started: bool) -> None:
        """Show the clock from a step's start until anything else happens (a tool call, a reply, a question)."""
        if started:
            self._clock_started = time.monotonic()
            self._tick()
            self._ticks.start()
        else:
            self._ticks.stop()
        self.clock.setVisible(started)

    def _tick(self) -> None:
        self.clock.setText(t("web.chat.thinking", self.lang, seconds=int(time.monotonic() - self._clock_started)))

    def _timed(self, duration_ms: float) -> None:
        """The step shown last took `duration_ms`: said at its line's end (when nothing was shown after it)."""
        assert self._step is not None
        index = self._step[1]
        self._step = None
        if index != len(self.lines) - 1:
            return
        took = " · " + step_time(duration_ms, self.lang)
        self.lines[index] += took
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(took)

    def _drafted(self, event: TextDelta) -> None:
        """The reply as the model writes it, below the transcript until the reply itself replaces it."""
        if event.offset == 0:
            self._set_draft(event.text)
        elif event.offset == len(self.draft_text):
            self._set_draft(self.draft_text + event.text)

    def _set_draft(self, text: str) -> None:
        self.draft_text = text
        self.draft.setText(t("qt.chat.reply_line", self.lang, text=text + " …") if text else "")
        self.draft.setVisible(bool(text))
