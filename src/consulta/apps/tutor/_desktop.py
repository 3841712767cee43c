"""The tutor's panels of the desktop window: the student's uploads (a file picked in a dialog is copied into the
upload folder with the folder's checks, in a bounded copy) and the cards of the last turn (the instruction packet and
the consultations with the binding rules that fired), read from the store when the turn's runs move. Qt is imported
only when the window builds them (`panels`)."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...i18n import t
from ...runtime import Event, RunEnded, RunStarted, ToolError, ToolReturned
from .._def import DesktopKit, DesktopPanel
from ._datasets import ACCEPTED_SUFFIXES, MAX_UPLOAD_BYTES
from ._turn import ConsultationCard, PacketCard, TurnView, turn_view
from ._uploads import copy_upload, list_uploads

__all__ = ["TurnPanel", "UploadsPanel", "copy_upload", "panels"]

_RECENT_RUNS = 50
_TURN_TOOLS = {"consult_expert", "submit_instruction_packet"}
_GOOD, _BAD = "color: #127a4a;", "color: #b42318;"


def _size(n: int) -> str:
    value, unit = (n / (1024 * 1024), "MB") if n >= 1024 * 1024 else (max(n / 1024, 0.1), "kB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


class UploadsPanel(QWidget):
    """The upload folder's files, an upload button (a file dialog), and a line saying what became of the last file."""

    def __init__(self, *, folder: Path, lang: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.lang = lang
        types = t("web.list_separator", lang).join(ACCEPTED_SUFFIXES)
        self.types = types
        self.hint = QLabel(t("tutor.web.uploads.hint", lang, types=types, limit=_size(MAX_UPLOAD_BYTES)))
        self.hint.setWordWrap(True)
        self.button = QPushButton(t("tutor.web.uploads.choose", lang))
        self.button.clicked.connect(self.choose)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.hide()
        self.files = QListWidget()
        head = QHBoxLayout()
        head.addWidget(self.hint, 1)
        head.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(head)
        layout.addWidget(self.status)
        layout.addWidget(self.files, 1)
        self.refresh()

    def refresh(self) -> None:
        self.files.clear()
        listed = list_uploads(self.folder)
        if not listed:
            self.files.addItem(t("tutor.web.uploads.empty", self.lang))
        for file in listed:
            self.files.addItem(t("tutor.qt.uploads.item", self.lang, name=file.name, size=_size(file.size)))

    def choose(self) -> None:
        picked, _ = QFileDialog.getOpenFileName(
            self,
            t("tutor.web.uploads.choose", self.lang),
            "",
            t("tutor.qt.uploads.filter", self.lang, patterns=" ".join(f"*{s}" for s in ACCEPTED_SUFFIXES)),
        )
        if picked:
            self.upload_file(Path(picked))

    def upload_file(self, source: Path) -> bool:
        """Copy `source` into the folder; the status line says what happened (in the window's language)."""
        values = {"name": source.name, "limit": _size(MAX_UPLOAD_BYTES), "types": self.types}
        try:
            name = copy_upload(self.folder, source)
        except ToolError as error:
            key = f"tutor.web.error.{error.error_code}"
            self._say(
                t(key, self.lang, **values, detail=error.message) if _known(key, self.lang) else error.message, _BAD
            )
            return False
        except OSError as error:
            self._say(
                t("tutor.qt.uploads.unreadable", self.lang, name=source.name, error=error.strerror or str(error)), _BAD
            )
            return False
        self._say(
            t("tutor.web.uploads.done", self.lang, name=name, size=_size((self.folder / name).stat().st_size)), _GOOD
        )
        self.refresh()
        return True

    def _say(self, text: str, style: str) -> None:
        self.status.setStyleSheet(style)
        self.status.setText(text)
        self.status.show()


def _known(key: str, lang: str) -> bool:
    try:
        t(key, lang)
    except KeyError:
        return False
    return True


class TurnPanel(QWidget):
    """The last turn's cards: the instruction packet and each consultation (verdict, the expert's words, issues,
    evidence, the binding rules that fired and their instruction updates)."""

    def __init__(self, *, kit: DesktopKit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kit = kit
        self.lang = kit.lang
        self.turn: TurnView | None = None
        self.asked = 0
        """The newest read of the turn."""
        self.view = QTextBrowser()
        self.view.setOpenExternalLinks(False)
        self.view.setPlaceholderText(t("tutor.web.turn.empty", self.lang))
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        self.load(None)

    def on_event(self, event: Event) -> None:
        started = isinstance(event, RunStarted) and not event.resumed
        called = isinstance(event, ToolReturned) and event.tool_name in _TURN_TOOLS
        if started or called or isinstance(event, RunEnded):
            self.load(event.run_id)

    def load(self, run_id: str | None) -> None:
        """Read the turn of run `run_id` (None: the newest) on the host's loop; drawn when it comes back."""

        self.asked += 1
        asked = self.asked

        async def read(host: Any) -> TurnView | None:
            return await asyncio.to_thread(_read_turn, host, self.kit.principal, run_id)

        def done(turn: TurnView | None) -> None:
            if asked == self.asked:  # reads run side by side: an older one that comes back late is dropped
                self.show_turn(turn)

        self.kit.call(read, on_done=done, on_error=self.kit.show_error)

    def show_turn(self, turn: TurnView | None) -> None:
        if turn is not None and turn == self.turn:
            return  # unchanged: the reader's scroll position stays
        self.turn = turn
        self.view.setHtml(turn_html(turn, self.lang) if turn is not None else "")


def _read_turn(host: Any, principal: str, run_id: str | None) -> TurnView | None:
    recent = host.runs(principal=principal, limit=_RECENT_RUNS)
    run = host.run(run_id, principal=principal) if run_id else (recent[0] if recent else None)
    return turn_view(host.store, run, earlier=recent) if run is not None else None


# ---- the cards as HTML (every value escaped: what the model or the data says is shown, not run) -------------------


def _e(value: Any) -> str:
    return html.escape(str(value))


def _rows(rows: list[tuple[str, str]]) -> str:
    return (
        "<table cellspacing='2'>"
        + "".join(f"<tr><td style='color:#7a8497'>{_e(k)}</td><td>{v}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"


_FIELDS = {
    "task_status": "tutor.web.packet.task_status",
    "guidance_for_ca": "tutor.web.packet.guidance",
    "mention_to_student": "tutor.web.packet.mention",
    "blocked_steps": "tutor.web.packet.blocked",
}


def _packet_html(packet: PacketCard, lang: str) -> str:
    verdict = t("tutor.web.packet.accepted" if packet.accepted else "tutor.web.packet.refused", lang)
    rows: list[tuple[str, str]] = []
    if packet.task_id:
        status = f" · {_e(t(f'tutor.web.task_status.{packet.task_status}', lang))}" if packet.task_status else ""
        rows.append((t("tutor.web.packet.task", lang), f"<code>{_e(packet.task_id)}</code>{status}"))
    if packet.guidance_for_ca:
        rows.append((t(_FIELDS["guidance_for_ca"], lang), _e(packet.guidance_for_ca)))
    if packet.mention_to_student:
        rows.append((t(_FIELDS["mention_to_student"], lang), _list(packet.mention_to_student)))
    if packet.blocked_steps:
        rows.append((t(_FIELDS["blocked_steps"], lang), _e(", ".join(packet.blocked_steps))))
    if packet.consultation_ids:
        rows.append((t("tutor.web.packet.rests_on", lang), _e(", ".join(packet.consultation_ids))))
    refusal = (
        f"<p style='{_BAD}'>{_e(t('tutor.web.packet.refusal', lang, reason=packet.refusal))}</p>"
        if packet.refusal
        else ""
    )
    style = _GOOD if packet.accepted else _BAD
    return f"<h3>{_e(t('tutor.web.packet.title', lang))} <span style='{style}'>[{_e(verdict)}]</span></h3>{refusal}{_rows(rows)}"


def _consultation_html(card: ConsultationCard, lang: str) -> str:
    expert = (
        t(f"tutor.web.expert.{card.expert_id}", lang)
        if _known(f"tutor.web.expert.{card.expert_id}", lang)
        else card.expert_id
    )
    output = (
        t(f"tutor.web.output.{card.output_type}", lang)
        if _known(f"tutor.web.output.{card.output_type}", lang)
        else card.output_type
    )
    verdict = t(f"tutor.web.verdict.{card.verdict}", lang)
    tone = (
        _GOOD
        if card.verdict in ("suitable", "valid")
        else _BAD
        if card.verdict in ("not_suitable", "not_valid", "failed")
        else ""
    )
    parts = [
        f"<h3>{_e(t('tutor.web.consultation.title', lang, expert=expert, output=output))} <span style='{tone}'>[{_e(verdict)}]</span></h3>",
        f"<p><b>{_e(card.question)}</b></p>",
        f"<p>{_e(card.summary)}</p>" if card.summary else "",
    ]
    for key, values in (
        ("tutor.web.consultation.issues", card.issues),
        ("tutor.web.consultation.warnings", card.warnings),
        ("tutor.web.consultation.evidence", card.evidence),
    ):
        if values:
            parts.append(f"<h4>{_e(t(key, lang))}</h4>{_list(values)}")
    rules = [t("tutor.web.consultation.rule", lang, rule=r.rule_name, action=r.action) for r in card.binding_rules]
    parts.append(
        f"<h4>{_e(t('tutor.web.consultation.rules', lang))}</h4>"
        + (_list(rules) if rules else f"<p>{_e(t('tutor.web.consultation.no_rules', lang))}</p>")
    )
    if card.instruction_updates:
        rows = [
            (t(_FIELDS[k], lang) if k in _FIELDS else k, _list([str(x) for x in v]) if isinstance(v, list) else _e(v))
            for k, v in card.instruction_updates.items()
        ]
        parts.append(f"<h4>{_e(t('tutor.web.consultation.updates', lang))}</h4>{_rows(rows)}")
    parts.append(
        f"<p style='color:#7a8497'>{_e(t('tutor.web.consultation.meta', lang, id=card.id, ms=round(card.duration_ms)))}</p>"
    )
    return "".join(parts)


def turn_html(turn: TurnView, lang: str) -> str:
    """The turn's cards: what was asked, the packet, then each consultation."""
    parts = [f"<p><i>{_e(t('tutor.web.turn.prompt', lang, prompt=turn.prompt or ''))}</i></p>"]
    if turn.packet is not None:
        parts.append(_packet_html(turn.packet, lang))
    parts += [_consultation_html(card, lang) for card in turn.consultations]
    if turn.packet is None and not turn.consultations:
        parts.append(f"<p>{_e(t('tutor.web.turn.nothing', lang))}</p>")
    return "<hr>".join(parts)


def panels(kit: DesktopKit) -> list[DesktopPanel]:
    """The turn's cards above the tabs (they need the room); the uploads as a tab."""
    host = kit.host
    assert host is not None and host.data_path is not None  # built once the host is ready; the tutor has a folder
    uploads = UploadsPanel(folder=host.data_path, lang=kit.lang)
    turn = TurnPanel(kit=kit)
    return [
        DesktopPanel(widget=turn, title=t("tutor.web.turn.title", kit.lang), placement="top", on_event=turn.on_event),
        DesktopPanel(widget=uploads, title=t("tutor.web.uploads.title", kit.lang)),
    ]
