"""The advisor site's panel of the desktop window: the ranking (a school, a major, a sort) and an advisor's detail with
the newest reviews, over the same look-ups as the web page (`_lookups`). Like the page it keeps the session's page
context (seed §3.1: what is shown, which advisor is open) so the agent reads "the first one" / "him" from it, and when
a turn ends it applies the reply's `tool_calls` (the ranking for a school and major, recommended advisors highlighted,
a detail opened), marks the advisors the reply names, and speaks the reply (offline synthesis, `_voice`, played by the system's
player) unless the voice is off; with no player the reply is read in the chat.
Voice input is the web page's (the browser's speech recognition): the desktop has no recogniser, typing is the way.
Qt is imported only when the window builds it (`panels`)."""

from __future__ import annotations

import asyncio
import html
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QProcess, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...i18n import han_count, t
from ...runtime import Event, RunEnded, ToolError
from .._def import AppView, DesktopKit, DesktopPanel
from ._catalog import DIMENSIONS, PageContext, RankingFilters, SelectedAdvisor, VisibleAdvisor, save_page_context
from ._lookups import (
    AdvisorDetail,
    Catalog,
    Ranking,
    catalog_summary,
    get_advisor_detail,
    recommend_advisors,
    update_ranking,
)
from ._turn import TurnOutput
from ._voice import MAX_SPEECH_CHARS, synthesize

__all__ = ["AdvisorPanel", "named_advisors", "panels", "reply_words", "spoken_language"]

_PLAYERS = ("pw-play", "paplay", "aplay")
"""The system's WAV players, tried in this order."""
_MARKED = QColor("#fff1c2")
_RECOMMENDED = QColor("#dff3e4")
_COLUMNS = ("advisor.qt.col.rank", "advisor.qt.col.name", "advisor.qt.col.title", "advisor.qt.col.rating",
            "advisor.qt.col.reviews")  # fmt: skip
_SORT_LABELS = {
    "overall": "advisor.web.dimension.overall",
    **{zh: f"advisor.web.dimension.{en}" for zh, en in DIMENSIONS.items()},
}


def spoken_language(text: str) -> str:
    """The voice for a reply: Mandarin when it is mostly Chinese (whatever the window's language), else English."""
    han = han_count(text)
    words = len(re.findall(r"[A-Za-z]+", text))
    return "zh-CN" if han and han >= words else "en"


def named_advisors(words: str, ranking: Ranking | None) -> set[str]:
    """The ids of the ranking's advisors that `words` names (their Chinese name, or their English name)."""
    if ranking is None or not words:
        return set()
    lowered = words.lower()
    return {a.id for a in ranking.advisors if a.name in words or (a.name_en and a.name_en.lower() in lowered)}


def reply_words(text: str, lang: str) -> str:
    """What the chat shows of a turn's `{voice_response, tool_calls}`: the words (the panel shows what the calls did)."""
    reply = _read_reply(text)
    return reply.voice_response if reply is not None else text


def _read_reply(output: str | None) -> TurnOutput | None:
    if not output:
        return None
    try:
        return TurnOutput.model_validate_json(output)
    except ValueError:
        return None


class AdvisorPanel(QWidget):
    """The ranking with its filters, and an advisor's detail. `marked` holds the ids the last reply was about (named
    or opened), `recommended` those it recommended; both are highlighted in the ranking."""

    def __init__(self, *, kit: DesktopKit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kit, self.lang = kit, kit.lang
        self.catalog: Catalog | None = None
        self.ranking: Ranking | None = None
        self.detail: AdvisorDetail | None = None
        self.words = ""
        """The last reply's words: the ranking's advisors they name are marked."""
        self.opened: set[str] = set()
        """The advisors the last reply opened."""
        self.recommended: dict[str, str] = {}  # id → the reason, in the window's language
        self.muted = False
        self.spoken = ""
        """The last reply's words sent to the voice (spoken, or not for want of a sound device)."""
        self._player: QProcess | None = None
        self.heard = b""
        """The last reply's speech (WAV), as synthesised."""
        lang = self.lang

        self.school = QComboBox()
        self.major = QComboBox()
        self.sort = QComboBox()
        for key, label in _SORT_LABELS.items():
            self.sort.addItem(t(label, lang), key)
        self.voice = QPushButton()
        self.voice.setCheckable(True)
        self.voice.toggled.connect(self._toggle_voice)
        filters = QHBoxLayout()
        for label, box in (("advisor.web.filter.school", self.school), ("advisor.web.filter.major", self.major),
                           ("advisor.web.filter.sort", self.sort)):  # fmt: skip
            filters.addWidget(QLabel(t(label, lang)))
            filters.addWidget(box, 1)
        filters.addWidget(self.voice)
        self.heading = QLabel(t("advisor.web.ranking.choose", lang))
        self.heading.setWordWrap(True)
        self.error = QLabel()
        self.error.setStyleSheet("color: #b42318;")
        self.error.setWordWrap(True)
        self.error.hide()

        self.table = QTableWidget(0, len(_COLUMNS))
        self.table.setHorizontalHeaderLabels([t(key, lang) for key in _COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.cellActivated.connect(self._open_row)
        self.table.cellDoubleClicked.connect(self._open_row)
        self.open_button = QPushButton(t("advisor.web.card.open", lang))
        self.open_button.clicked.connect(lambda: self._open_row(self.table.currentRow(), 0))
        ranking_page = QWidget()
        ranking_layout = QVBoxLayout(ranking_page)
        ranking_layout.setContentsMargins(0, 0, 0, 0)
        ranking_layout.addWidget(self.table, 1)
        ranking_layout.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignRight)

        self.back = QPushButton(t("advisor.web.detail.back", lang))
        self.back.clicked.connect(self.show_ranking)
        self.detail_view = QTextBrowser()
        detail_page = QWidget()
        detail_layout = QVBoxLayout(detail_page)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addWidget(self.back, 0, Qt.AlignmentFlag.AlignLeft)
        detail_layout.addWidget(self.detail_view, 1)

        self.pages = QStackedWidget()
        self.pages.addWidget(ranking_page)
        self.pages.addWidget(detail_page)
        self.ranking_page, self.detail_page = ranking_page, detail_page
        footer = QLabel(t("advisor.web.footer", lang))
        footer.setWordWrap(True)
        footer.setStyleSheet("color: palette(mid); font-size: 11px;")
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.heading)
        layout.addWidget(self.error)
        layout.addWidget(self.pages, 1)
        layout.addWidget(footer)
        self._draw_voice()
        self.school.currentIndexChanged.connect(self._school_changed)
        self.major.activated.connect(lambda _: self._filters_changed())
        self.sort.activated.connect(lambda _: self._filters_changed())

    # ---- the look-ups, on the host's loop ---------------------------------------------------------------------

    def _call(self, work: Any, /, *args: Any, on_done: Any, **kwargs: Any) -> None:
        async def call(host: AppView) -> Any:
            return await asyncio.to_thread(work, host.env.store.engine, *args, **kwargs)

        def refused(error: BaseException) -> None:
            if isinstance(error, ToolError):
                key = f"advisor.web.error.{error.error_code}"
                try:
                    text = t(key, self.lang)
                except KeyError:
                    text = error.message
            else:
                text = str(error)
            self.error.setText(text)
            self.error.show()

        self.error.hide()
        self.kit.call(call, on_done=on_done, on_error=refused)

    def load(self) -> None:
        self._call(catalog_summary, on_done=self._catalog_loaded)

    def _catalog_loaded(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.school.blockSignals(True)
        self.school.clear()
        self.school.addItem(t("advisor.web.filter.pick_school", self.lang), None)
        for school in catalog.schools:
            self.school.addItem(self._both(school["name"], school.get("en")), school["name"])
        self.school.blockSignals(False)
        self._fill_majors()

    def _both(self, zh: str, en: str | None) -> str:
        return zh if self.lang.startswith("zh") or not en else f"{en} ({zh})"

    def _fill_majors(self) -> None:
        school = self.school.currentData()
        offered = next((s["majors"] for s in (self.catalog.schools if self.catalog else []) if s["name"] == school), [])
        names = {m["name"]: m.get("en") for m in (self.catalog.majors if self.catalog else [])}
        self.major.blockSignals(True)
        self.major.clear()
        self.major.addItem(t("advisor.web.filter.pick_major", self.lang), None)
        for major in offered:
            self.major.addItem(self._both(major, names.get(major)), major)
        self.major.blockSignals(False)

    def _school_changed(self) -> None:
        self._fill_majors()
        self._filters_changed()

    def _filters_changed(self) -> None:
        school, major = self.school.currentData(), self.major.currentData()
        if school and major:
            self.show_ranking_of(school, major, self.sort.currentData() or "overall")

    def show_ranking_of(self, school: str, major: str, sort_by: str = "overall") -> None:
        """Fetch and show a school's ranking in a major (the filters follow)."""
        self._call(update_ranking, school=school, major=major, sort_by=sort_by, limit=50, on_done=self._ranked)

    def _ranked(self, ranking: Ranking) -> None:
        if self.ranking is None or (self.ranking.school, self.ranking.major) != (ranking.school, ranking.major):
            self.recommended.clear()
        self.ranking = ranking
        for box, value in ((self.school, ranking.school), (self.sort, ranking.sort_by)):
            box.blockSignals(True)
            box.setCurrentIndex(max(0, box.findData(value)))
            box.blockSignals(False)
        self._fill_majors()
        self.major.setCurrentIndex(max(0, self.major.findData(ranking.major)))
        self.draw_ranking()
        self.show_ranking()

    def open_advisor(self, advisor_id: str) -> None:
        self._call(get_advisor_detail, advisor_id=advisor_id, on_done=self._opened)

    def recommend(self, school: str, major: str, preferences: dict[str, str]) -> None:
        def found(result: Any) -> None:
            english = not self.lang.startswith("zh")
            self.recommended = {a.id: (a.reason_en if english else a.reason) for a in result.advisors}
            self.draw_ranking()
            self.save_context()

        def then(ranking: Ranking) -> None:
            self._ranked(ranking)
            self._call(recommend_advisors, school=school, major=major, preferences=preferences, limit=3, on_done=found)

        self._call(update_ranking, school=school, major=major, sort_by=self.sort.currentData() or "overall", limit=50,
                   on_done=then)  # fmt: skip

    # ---- the page context (seed §3.1) -------------------------------------------------------------------------

    def context(self) -> PageContext:
        """What the panel shows, in the seed's shape."""
        ranking, detail = self.ranking, self.detail
        on_detail = self.pages.currentWidget() is self.detail_page and detail is not None
        visible = [VisibleAdvisor(id=a.id, name=a.name, title=a.title, rating=a.rating, rank=a.rank)
                   for a in (ranking.advisors[:20] if ranking else [])]  # fmt: skip
        return PageContext(
            current_page="detail" if on_detail else ("ranking" if ranking else "home"),
            visible_advisors=visible,
            selected_advisor=SelectedAdvisor(id=detail.id, name=detail.name, title=detail.title)
            if on_detail and detail is not None
            else None,
            ranking_filters=RankingFilters(
                school=ranking.school if ranking else None,
                major=ranking.major if ranking else None,
                sort_by=ranking.sort_by if ranking else "overall",
            ),
            recommended=list(self.recommended)[:20],
        )

    def save_context(self) -> None:
        """Keep what the panel shows as the session's page context (the agent reads it)."""
        context = self.context()
        self._call(save_page_context, self.kit.principal, context, on_done=lambda _: None)

    # ---- what a turn did --------------------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunEnded) and event.status == "finished":
            reply = _read_reply(event.output)
            if reply is not None:
                self.apply(reply)

    def apply(self, reply: TurnOutput) -> None:
        """Apply a reply's tool calls, mark the advisors it is about, speak it."""
        self.words, self.opened = reply.voice_response, set()
        for call in reply.tool_calls:
            params = call.params
            school, major = params.get("school"), params.get("major")
            if call.tool == "update_ranking" and school and major:
                self.show_ranking_of(school, major, params.get("sort_by") or "overall")
            elif call.tool == "recommend_advisors" and school and major:
                preferences = {k: v for k, v in params.items() if k not in ("school", "major", "limit") and v}
                self.recommend(school, major, preferences)
            elif call.tool == "get_advisor_detail" and params.get("advisor_id"):
                self.opened.add(str(params["advisor_id"]))
                self.open_advisor(str(params["advisor_id"]))
        self.draw_ranking()
        self.speak(reply.voice_response)

    # ---- drawing ----------------------------------------------------------------------------------------------

    @property
    def marked(self) -> set[str]:
        """The ranking's advisors the last reply is about: those it names, those it opened."""
        return named_advisors(self.words, self.ranking) | self.opened

    def draw_ranking(self) -> None:
        ranking, lang = self.ranking, self.lang
        if ranking is None:
            return
        sort = t(_SORT_LABELS.get(ranking.sort_by, "advisor.web.dimension.overall"), lang)
        self.heading.setText(
            t(
                "advisor.web.ranking.title",
                lang,
                school=ranking.school,
                major=ranking.major,
                count=ranking.total,
                sort=sort,
            )
            if ranking.advisors
            else t("advisor.web.ranking.none", lang, school=ranking.school, major=ranking.major)
        )
        english = not lang.startswith("zh")
        marked = self.marked
        self.table.setRowCount(len(ranking.advisors))
        for row, advisor in enumerate(ranking.advisors):
            name = (
                t("advisor.web.person_en", lang, name=advisor.name, name_en=advisor.name_en)
                if english
                else advisor.name
            )
            if advisor.id in self.recommended:
                name += " · " + t("advisor.web.card.recommended", lang)
            values = (str(advisor.rank), name, advisor.title_en if english else advisor.title, f"{advisor.rating:.2f}",
                      str(advisor.review_count))  # fmt: skip
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(Qt.ItemDataRole.UserRole, advisor.id)
                if advisor.id in marked:
                    item.setBackground(_MARKED)
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                elif advisor.id in self.recommended:
                    item.setBackground(_RECOMMENDED)
                if advisor.id in self.recommended:
                    item.setToolTip(self.recommended[advisor.id])
                self.table.setItem(row, col, item)
        self.table.resizeColumnToContents(0)
        first = next((r for r, a in enumerate(ranking.advisors) if a.id in marked), None)
        if first is not None:
            self.table.scrollToItem(self.table.item(first, 0))

    def marked_rows(self) -> list[int]:
        """The rows drawn as marked (what the last reply was about)."""
        return [r for r in range(self.table.rowCount()) if self.table.item(r, 0).background().color() == _MARKED]

    def _open_row(self, row: int, _column: int) -> None:
        if self.ranking is not None and 0 <= row < len(self.ranking.advisors):
            self.open_advisor(self.ranking.advisors[row].id)

    def _opened(self, detail: AdvisorDetail) -> None:
        self.detail = detail
        lang = self.lang
        english = not lang.startswith("zh")

        def pick(zh: str, en: str) -> str:
            return en if english and en else zh

        name = t("advisor.web.person_en", lang, name=detail.name, name_en=detail.name_en) if english else detail.name
        rows = [
            (t("advisor.web.detail.directions", lang),
             t("web.list_separator", lang).join(detail.research_directions_en if english else detail.research_directions)),
            (t("advisor.web.detail.personality", lang), pick(detail.personality, detail.personality_en)),
            (t("advisor.web.detail.style", lang), pick(detail.research_style, detail.research_style_en)),
            (t("advisor.web.detail.funding", lang), pick(detail.funding, detail.funding_en)),
            (t("advisor.web.detail.papers", lang), str(detail.papers)),
        ]  # fmt: skip
        ratings = " · ".join(
            t("advisor.web.review.score", lang, dimension=t(f"advisor.web.dimension.{DIMENSIONS.get(k, k)}", lang),
              score=f"{v:.1f}")
            for k, v in detail.ratings.items()
        )  # fmt: skip
        parts = [
            f"<h3>{html.escape(name)}</h3>",
            f"<p>{html.escape(pick(detail.title, detail.title_en))} · "
            f"{html.escape(t('advisor.web.school_major', lang, school=detail.school, major=detail.major))}</p>",
            f"<p><b>{html.escape(t('advisor.web.card.rating', lang, rating=f'{detail.rating:.2f}'))}</b><br>"
            f"{html.escape(ratings)}</p>",
            *(f"<p><b>{html.escape(k)}</b>: {html.escape(v)}</p>" for k, v in rows),
            f"<p>{html.escape(pick(detail.bio, detail.bio_en))}</p>",
            f"<h4>{html.escape(t('advisor.web.detail.reviews', lang, count=detail.review_count))}</h4>",
            *(f"<p><small>{html.escape(r.date)} · {html.escape(pick(r.author, r.author_en))} · "
              f"{r.overall:.1f}</small><br>{html.escape(pick(r.text, r.text_en))}</p>" for r in detail.reviews),
        ]  # fmt: skip
        self.detail_view.setHtml("".join(parts))
        self.pages.setCurrentWidget(self.detail_page)
        self.save_context()

    def show_ranking(self) -> None:
        self.pages.setCurrentWidget(self.ranking_page)
        self.save_context()

    # ---- voice ------------------------------------------------------------------------------------------------

    def _toggle_voice(self, muted: bool) -> None:
        self.muted = muted
        if muted and self._player is not None:
            self._player.kill()
        self._draw_voice()

    def _draw_voice(self) -> None:
        self.voice.setText(t("advisor.web.voice.muted" if self.muted else "advisor.web.voice.on", self.lang))
        self.voice.setToolTip(t("advisor.web.voice.unmute" if self.muted else "advisor.web.voice.mute", self.lang))

    def speak(self, text: str) -> None:
        """Say `text` aloud (synthesised on the host's loop, played by Qt's media player); nothing when muted."""
        text = text.strip()[:MAX_SPEECH_CHARS]
        if self.muted or not text:
            return
        self.spoken = text

        async def work(_: AppView) -> bytes:
            return (await asyncio.to_thread(synthesize, text, lang=spoken_language(text))).wav

        self.kit.call(work, on_done=self._play, on_error=lambda _: None)  # unspoken: the chat has the words

    def _play(self, wav: bytes) -> None:
        """Play the WAV with the system's player (PipeWire, PulseAudio, ALSA): Qt's own media module is not part of
        the essentials the window needs. Without a player the reply is read in the chat, and the voice button says
        so."""
        self.heard = wav
        player = next((found for name in _PLAYERS if (found := shutil.which(name))), None)
        if player is None:
            self.voice.setToolTip(t("advisor.qt.voice.no_player", self.lang))
            return
        if self._player is not None:
            self._player.kill()
        handle = tempfile.NamedTemporaryFile(prefix="consulta-voice-", suffix=".wav", delete=False)  # noqa: SIM115
        with handle:
            handle.write(wav)
        process = QProcess(self)
        process.finished.connect(lambda *_: Path(handle.name).unlink(missing_ok=True))
        process.errorOccurred.connect(lambda *_: Path(handle.name).unlink(missing_ok=True))
        process.start(player, [handle.name])
        self._player = process


def panels(kit: DesktopKit) -> list[DesktopPanel]:
    """The ranking and detail as the window's main tab; it hears each turn's end to apply the reply."""
    panel = AdvisorPanel(kit=kit)
    panel.load()
    return [DesktopPanel(widget=panel, title=t("advisor.web.nav.ranking", kit.lang), placement="tab",
                         on_event=panel.on_event)]  # fmt: skip
