"""The modeling app's panels of the desktop window: the run's timeline (its phases at the four gates, who is working,
the consultations, the gates' verdicts with their reasons, the team's script runs) and the files it produced (each
opened in place: text, tables and code as text, figures as images, the paper's PDF in the system's viewer). Both read
the window's newest run's workspace (`read_timeline`, the web page's reading) and are redrawn as the run's events
arrive. An escalation (rejected `MAX_ATTEMPTS` times) is a `question` of the Director's run: the window's question
dialog is its form; the timeline says it waits for the person. Qt is imported only when the window builds them."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...i18n import t
from ...runtime import AskClosed, AskOpened, Event, RunEnded, RunStarted, ToolReturned
from .._def import AppView, DesktopKit, DesktopPanel
from ._web import (
    FOLDERS,
    ConsultationCard,
    RunTimeline,
    ScriptCard,
    VerdictCard,
    read_timeline,
    working_agent,
    workspace_of,
)

__all__ = ["FilesPanel", "TimelinePanel", "panels", "timeline_now"]

_RECENT_RUNS = 50
_MAX_SHOWN = 200_000
"""Characters of a text file shown in place (the rest is in the file)."""
_IMAGES = {".png", ".jpg", ".jpeg", ".svg"}
_PHASE_COLOURS = {"approved": "#127a4a", "conditional": "#a15c00", "accepted": "#a15c00", "rejected": "#b42318",
                  "escalated": "#b42318", "stopped": "#6b7280", "current": "#1d4ed8", "pending": "#6b7280"}  # fmt: skip
_REFRESH_MS = 400
"""Events come in bursts: the timeline is reread at most this often."""


def timeline_now(host: AppView, principal: str) -> tuple[RunTimeline | None, Path | None]:
    """The timeline of `principal`'s newest run (not a nested one) and its workspace; (None, None) before any run,
    (None, None) too for a run with no workspace (started without a problem)."""
    recent = [r for r in host.runs(principal=principal, limit=_RECENT_RUNS) if r.parent_run_id is None]
    if not recent:
        return None, None
    run = recent[0]
    workspace = workspace_of(host, run)
    if workspace is None:
        return None, None
    return read_timeline(workspace, run, working_agent(host, run)), workspace


def _esc(text: Any) -> str:
    return html.escape(str(text))


def _size(n: int, lang: str) -> str:
    if n >= 1024 * 1024:
        return t("modeling.web.size.mb", lang, n=f"{n / 1024 / 1024:.1f}")
    if n >= 1024:
        return t("modeling.web.size.kb", lang, n=f"{n / 1024:.1f}")
    return t("modeling.web.size.bytes", lang, n=n)


class TimelinePanel(QWidget):
    """The run's state, its phases and its cards, oldest first."""

    def __init__(self, *, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lang = lang
        self.timeline: RunTimeline | None = None
        self.reread: Callable[[], None] = lambda: None
        """Read the workspace again (set by `panels`: the reading runs on the host's loop)."""
        self.waiting = False
        """A question of the run (an escalation) waits for the person."""
        self.state = QLabel(t("modeling.web.timeline.empty", lang))
        self.state.setWordWrap(True)
        self.phases = QLabel()
        self.phases.setTextFormat(Qt.TextFormat.RichText)
        self.phases.setWordWrap(True)
        self.cards = QTextBrowser()
        self.cards.setOpenLinks(False)
        self.paper = QPushButton(t("modeling.web.paper.open", lang))
        self.paper.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"<b>{_esc(t('modeling.web.timeline.title', lang))}</b>"))
        layout.addWidget(self.state)
        layout.addWidget(self.phases)
        layout.addWidget(self.cards, 1)
        layout.addWidget(self.paper, 0, Qt.AlignmentFlag.AlignLeft)

    def show_timeline(self, timeline: RunTimeline | None) -> None:
        self.timeline = timeline
        lang = self.lang
        if timeline is None:
            self.state.setText(t("modeling.web.timeline.empty", lang))
            self.phases.clear()
            self.cards.clear()
            self.paper.hide()
            return
        status = t(f"modeling.web.run.{timeline.run_status}", lang) if timeline.run_status in (
            "running", "waiting", "finished", "failed", "cancelled") else timeline.run_status  # fmt: skip
        now = (
            t("modeling.qt.now.waiting", lang)
            if self.waiting
            else t("modeling.web.now.working", lang, agent=timeline.working)
            if timeline.working
            else ""
        )
        self.state.setText(f"{timeline.workspace} · {status}" + (f" — {now}" if now else ""))
        self.phases.setText(
            " → ".join(
                f'<span style="color: {_PHASE_COLOURS.get(p.state, "#6b7280")}">'
                f"<b>{_esc(t(f'modeling.web.gate.{p.gate}', lang))}</b>: {_esc(t(f'modeling.web.phase.{p.state}', lang))}"
                + (f" ({_esc(t('modeling.web.phase.attempts', lang, n=p.attempts))})" if p.attempts > 1 else "")
                + "</span>"
                for p in timeline.phases
            )
        )
        parts = [self._card(card) for card in timeline.cards]
        self.cards.setHtml("".join(parts) or f"<p>{_esc(t('modeling.web.timeline.nothing_yet', lang))}</p>")
        self.paper.setVisible(timeline.paper_pdf is not None)

    def _card(self, card: ConsultationCard | VerdictCard | ScriptCard) -> str:
        lang = self.lang
        if isinstance(card, ConsultationCard):
            title = t("modeling.web.card.consultation_title", lang, **{"from": card.from_agent, "to": card.to_agent,
                                                                        "i": card.index})  # fmt: skip
            rows = [(k, getattr(card, f)) for k, f in (("question", "question"), ("background", "background"),
                                                       ("reply", "reply"), ("outcome", "outcome"))]  # fmt: skip
            body = "".join(  # the record's markdown emphasis is not shown as stars
                f"<p><b>{_esc(t(f'modeling.web.card.{k}', lang))}</b>: {_esc(v.replace('**', ''))}</p>"
                for k, v in rows
                if v
            )
            kind = t("modeling.web.card.consultation", lang)
        elif isinstance(card, VerdictCard):
            title = t("modeling.web.card.verdict_title", lang, gate=t(f"modeling.web.gate.{card.gate}", lang),
                      attempt=card.attempt)  # fmt: skip
            colour = _PHASE_COLOURS["approved" if card.status == "APPROVED" else
                                    "conditional" if card.status == "CONDITIONAL" else "rejected"]  # fmt: skip
            decided = t(f"modeling.web.card.decided_by.{card.decided_by}", lang) if card.decided_by in (
                "code", "validator") else card.decided_by  # fmt: skip
            reasons = (
                "".join(f"<li>{_esc(r)}</li>" for r in card.reasons)
                or f"<li>{_esc(t('modeling.web.card.no_reasons', lang))}</li>"
            )
            body = f'<p><b style="color: {colour}">{_esc(card.status)}</b> · {_esc(decided)}</p><ul>{reasons}</ul>'
            kind = t("modeling.web.card.verdict", lang)
        else:
            title = card.script
            ran = (
                t("modeling.web.card.ran", lang)
                if card.ok
                else t("modeling.web.card.failed", lang, code=card.returncode)
            )
            outputs = (
                t("modeling.web.card.outputs", lang) + " " + ", ".join(card.outputs)
                if card.outputs
                else t("modeling.web.card.no_outputs", lang)
            )
            body = f"<p>{_esc(ran)}{': ' + _esc(card.error) if card.error else ''}</p><p>{_esc(outputs)}</p>"
            kind = t("modeling.web.card.script", lang)
        return (
            f'<div style="margin-bottom: 10px"><small>{_esc(card.time)} · {_esc(kind)}</small><br>'
            f"<b>{_esc(title)}</b> <small>({_esc(card.file)})</small>{body}</div><hr>"
        )


class FilesPanel(QWidget):
    """The files the run produced, by folder; the one selected is shown beside (only files the timeline lists)."""

    def __init__(self, *, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lang = lang
        self.workspace: Path | None = None
        self.listed: set[str] = set()
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels([t("modeling.web.files.title", lang), ""])
        self.tree.itemSelectionChanged.connect(self._selected)
        self.viewer = QTextBrowser()
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image.hide()
        self.open_button = QPushButton(t("modeling.web.paper.open", lang))
        self.open_button.hide()
        self.open_button.clicked.connect(self.open_selected)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.viewer, 1)
        right_layout.addWidget(self.image, 1)
        right_layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(right)
        split.setSizes([260, 420])
        layout = QHBoxLayout(self)
        layout.addWidget(split)
        self.selected: str | None = None

    def show_files(self, timeline: RunTimeline | None, workspace: Path | None) -> None:
        self.workspace = workspace
        files = timeline.files if timeline is not None else []
        self.listed = {f.path for f in files}
        keep = self.selected
        self.tree.clear()
        if not files:
            self.tree.addTopLevelItem(QTreeWidgetItem([t("modeling.web.files.empty", self.lang), ""]))
            return
        folders: dict[str, QTreeWidgetItem] = {}
        for folder in FOLDERS:
            if any(f.folder == folder for f in files):
                folders[folder] = QTreeWidgetItem([t(f"modeling.web.folder.{folder}", self.lang), ""])
                self.tree.addTopLevelItem(folders[folder])
        for entry in files:
            item = QTreeWidgetItem([entry.path.split("/", 1)[1], _size(entry.size, self.lang)])
            item.setData(0, Qt.ItemDataRole.UserRole, entry.path)
            folders[entry.folder].addChild(item)
            if entry.path == keep:
                self.tree.setCurrentItem(item)
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)

    def select(self, path: str) -> bool:
        """Show the listed file `path` (relative to the workspace)."""
        for item in self._items():
            if item.data(0, Qt.ItemDataRole.UserRole) == path:
                self.tree.setCurrentItem(item)
                return True
        return False

    def _items(self) -> list[QTreeWidgetItem]:
        found = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            found += [top.child(j) for j in range(top.childCount())]
        return found

    def _selected(self) -> None:
        items = self.tree.selectedItems()
        path = items[0].data(0, Qt.ItemDataRole.UserRole) if items else None
        if not path or path not in self.listed or self.workspace is None:
            return
        self.selected = path
        file = self.workspace / path
        suffix = file.suffix.lower()
        self.open_button.setVisible(suffix == ".pdf")
        if suffix in _IMAGES:
            pixmap = QPixmap(str(file))
            self.image.setPixmap(
                pixmap.scaled(480, 360, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
            )
            self.image.show()
            self.viewer.hide()
            return
        self.image.hide()
        self.viewer.show()
        if suffix == ".pdf":
            self.viewer.setPlainText(t("modeling.web.paper.ready", self.lang))
            return
        try:
            text = file.read_text(encoding="utf-8", errors="replace")[:_MAX_SHOWN]
        except OSError as error:
            text = error.strerror or str(error)
        if suffix == ".md":
            self.viewer.setMarkdown(text)
        else:
            self.viewer.setPlainText(text)

    def open_selected(self) -> None:
        if self.selected is not None and self.workspace is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.workspace / self.selected)))


def panels(kit: DesktopKit) -> list[DesktopPanel]:
    """The timeline (the main tab) and the files, reread from the newest run's workspace as its events arrive."""
    timeline = TimelinePanel(lang=kit.lang)
    files = FilesPanel(lang=kit.lang)
    pending: set[str] = set()
    timer = QTimer(timeline)
    timer.setSingleShot(True)
    timer.setInterval(_REFRESH_MS)

    def refresh() -> None:
        async def work(host: AppView) -> tuple[RunTimeline | None, Path | None]:
            return await asyncio.to_thread(timeline_now, host, kit.principal)

        def read(found: tuple[RunTimeline | None, Path | None]) -> None:
            timeline.waiting = bool(pending)
            timeline.show_timeline(found[0])
            files.show_files(*found)

        kit.call(work, on_done=read, on_error=lambda _: None)  # an unreadable workspace: the last reading stays

    def on_event(event: Event) -> None:
        if isinstance(event, AskOpened) and event.kind == "question":
            pending.add(event.ask_id)
        elif isinstance(event, AskClosed):
            pending.discard(event.ask_id)
        if isinstance(event, RunStarted | RunEnded | AskOpened | AskClosed | ToolReturned):
            timer.start()

    def open_paper() -> None:
        if files.select("paper/paper.pdf"):
            files.open_selected()

    timeline.reread = refresh
    timer.timeout.connect(refresh)
    timeline.paper.clicked.connect(open_paper)
    refresh()
    return [
        DesktopPanel(widget=timeline, title=t("modeling.web.timeline.title", kit.lang), placement="tab",
                     on_event=on_event),
        DesktopPanel(widget=files, title=t("modeling.web.files.title", kit.lang), placement="tab"),
    ]  # fmt: skip
