"""quiz's panel of the desktop window: the adaptive test a person takes (`_cat_sessions`, the same tests as the web
page and `consulta quiz take`): the profile, one item at a time with its feedback, then θ ± SE, the plot of the
estimate after each item (`ability_svg`) and every item reviewed. Every call to the sessions runs on the host's loop
(`DesktopKit.call`); a refusal is one line in the window's language. Qt is imported only when the window builds it
(`panels`)."""

from __future__ import annotations

import asyncio
import html
from typing import Any

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtSvgWidgets import QSvgWidget
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ...i18n import t
from .._def import AppView, DesktopKit, DesktopPanel
from ._cat_sessions import AnswerResult, Feedback, ItemView, SessionView, TestSessions, ability_svg, app_sessions
from ._profiles import SELF_LEVELS

__all__ = ["AdaptiveTestPanel", "panels"]

_STOP = {
    "se_target": "quiz.web.stop.se_target",
    "max_items": "quiz.web.stop.max_items",
    "bank_exhausted": "quiz.web.stop.bank_exhausted",
}
_TRUTH = {"true": "quiz.web.true", "false": "quiz.web.false"}
_CATEGORY = {c: f"quiz.web.category.{c}" for c in ("technical", "business", "general")}
_BAD = "color: #b42318;"
_TONES = {"right": "#127a4a", "partial": "#a15c00", "wrong": "#b42318"}


def _signed(value: float) -> str:
    return f"{value:+.2f}".replace("+0.00", "0.00").replace("-0.00", "0.00")


def _verdict(feedback: Feedback) -> str:
    if feedback.is_correct:
        return "right"
    return "partial" if feedback.score >= 70 else "wrong"


class AdaptiveTestPanel(QWidget):
    """Three pages: the profile form, the item (then its feedback), the results. `tests` are the sessions; `call`
    runs a coroutine function on the host's loop and calls back on the GUI thread (the kit's)."""

    def __init__(self, *, kit: DesktopKit, tests: TestSessions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kit, self.tests, self.lang = kit, tests, kit.lang
        self.test: SessionView | None = None
        self.answered_item: ItemView | None = None
        self.feedback: Feedback | None = None
        lang = self.lang

        # -- status: progress and estimate, above every page
        self.progress = QLabel()
        self.estimate = QLabel()
        self.restart = QPushButton(t("quiz.web.restart", lang))
        self.restart.clicked.connect(self._restart)
        status = QHBoxLayout()
        status.addWidget(self.progress, 1)
        status.addWidget(self.estimate)
        status.addWidget(self.restart)
        self.error = QLabel()
        self.error.setStyleSheet(_BAD)
        self.error.setWordWrap(True)
        self.error.hide()

        # -- the profile
        profile = QWidget()
        self.level = QComboBox()
        for level in SELF_LEVELS:
            self.level.addItem(t(f"quiz.web.level.{level}", lang), level)
        self.years = QSpinBox()
        self.years.setRange(0, 60)
        self.role = QLineEdit()
        self.role.setPlaceholderText(t("quiz.web.profile.job_role_hint", lang))
        self.role.setMaxLength(100)
        self.duty = QLineEdit()
        self.duty.setPlaceholderText(t("quiz.web.profile.duty_hint", lang))
        self.duty.setMaxLength(500)
        self.interests = QLineEdit()
        self.interests.setPlaceholderText(t("quiz.web.profile.interests_hint", lang))
        self.start_button = QPushButton(t("quiz.web.start", lang))
        self.start_button.clicked.connect(self.start)
        intro = QLabel(t("quiz.web.profile.intro", lang) + " " + t("quiz.web.profile.lang_note", lang))
        intro.setWordWrap(True)
        form = QFormLayout()
        form.addRow(t("quiz.web.profile.self_level", lang), self.level)
        form.addRow(t("quiz.web.profile.years_experience", lang), self.years)
        form.addRow(t("quiz.web.profile.job_role", lang), self.role)
        form.addRow(t("quiz.web.profile.duty", lang), self.duty)
        form.addRow(t("quiz.web.profile.interests", lang), self.interests)
        profile_layout = QVBoxLayout(profile)
        profile_layout.addWidget(intro)
        profile_layout.addLayout(form)
        profile_layout.addWidget(self.start_button, 0, Qt.AlignmentFlag.AlignLeft)
        profile_layout.addStretch(1)

        # -- the item, then its feedback
        item = QWidget()
        self.meta = QLabel()
        self.meta.setStyleSheet("color: palette(mid);")
        self.stem = QLabel()
        self.stem.setWordWrap(True)
        self.stem.setStyleSheet("font-size: 15px; font-weight: 600;")
        self.choices = QButtonGroup(self)
        self.choice_box = QVBoxLayout()
        self.text_answer = QLineEdit()
        self.text_answer.setPlaceholderText(t("quiz.web.item.text_hint", lang))
        self.text_answer.setMaxLength(2000)
        self.text_answer.returnPressed.connect(self.submit)
        self.submit_button = QPushButton(t("quiz.web.submit", lang))
        self.submit_button.clicked.connect(self.submit)
        self.feedback_view = QTextBrowser()
        self.feedback_view.hide()
        self.next_button = QPushButton(t("quiz.web.next", lang))
        self.next_button.clicked.connect(self._next)
        self.next_button.hide()
        note = QLabel(t("quiz.web.item.saved_note", lang))
        note.setStyleSheet("color: palette(mid);")
        item_layout = QVBoxLayout(item)
        item_layout.addWidget(self.meta)
        item_layout.addWidget(self.stem)
        item_layout.addLayout(self.choice_box)
        item_layout.addWidget(self.text_answer)
        buttons = QHBoxLayout()
        buttons.addWidget(self.submit_button)
        buttons.addWidget(self.next_button)
        buttons.addStretch(1)
        item_layout.addLayout(buttons)
        item_layout.addWidget(self.feedback_view, 1)
        item_layout.addWidget(note)

        # -- the results
        results = QWidget()
        self.score = QLabel()
        self.score.setStyleSheet("font-size: 15px; font-weight: 600;")
        self.stop = QLabel()
        self.stop.setWordWrap(True)
        self.plot = QSvgWidget()
        self.plot.setMinimumHeight(180)
        self.review = QTextBrowser()
        self.again = QPushButton(t("quiz.web.again", lang))
        self.again.clicked.connect(self._again)
        results_layout = QVBoxLayout(results)
        results_layout.addWidget(self.score)
        results_layout.addWidget(self.stop)
        results_layout.addWidget(self.plot, 2)
        results_layout.addWidget(QLabel(f"<b>{html.escape(t('quiz.web.review.title', lang))}</b>"))
        results_layout.addWidget(self.review, 2)
        results_layout.addWidget(self.again, 0, Qt.AlignmentFlag.AlignLeft)

        self.pages = QStackedWidget()
        for page in (profile, item, results):
            self.pages.addWidget(page)
        self.profile_page, self.item_page, self.results_page = profile, item, results
        title = QLabel(t("quiz.web.tagline", lang))
        title.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addLayout(status)
        layout.addWidget(self.error)
        layout.addWidget(self.pages, 1)
        self.draw()

    # ---- the sessions, on the host's loop --------------------------------------------------------------------

    def _run(self, work: Any, on_done: Any) -> None:
        self.error.hide()

        async def call(_: AppView) -> Any:
            return await work()

        self.kit.call(call, on_done=on_done, on_error=self._refused)

    def _refused(self, error: BaseException) -> None:
        localized = getattr(error, "localized", None)
        self.error.setText(localized(self.lang) if callable(localized) else str(error))
        self.error.show()
        self.submit_button.setEnabled(True)
        self.start_button.setEnabled(True)

    def load(self) -> None:
        """The test in progress (after a restart too) and the profile saved last."""
        principal = self.kit.principal

        async def work() -> tuple[SessionView | None, Any]:
            test = await asyncio.to_thread(self.tests.open_test, principal)
            return test, await asyncio.to_thread(self.tests.saved_profile, principal)

        def loaded(found: tuple[SessionView | None, Any]) -> None:
            test, profile = found
            if profile is not None:
                self.fill_profile(profile)
            self.test = test
            self.draw()

        self._run(work, loaded)

    def fill_profile(self, profile: Any) -> None:
        self.level.setCurrentIndex(max(0, self.level.findData(profile.self_level)))
        self.years.setValue(profile.years_experience)
        self.role.setText(profile.job_role)
        self.duty.setText(profile.duty)
        self.interests.setText(t("quiz.web.list_separator", self.lang).join(profile.interests))

    def start(self) -> None:
        """Start a test on the form's profile (a field at fault: one line naming it)."""
        profile = {
            "self_level": self.level.currentData(),
            "years_experience": self.years.value(),
            "job_role": self.role.text(),
            "duty": self.duty.text(),
            "interests": [w.strip() for w in self.interests.text().replace("，", ",").split(",") if w.strip()],
        }
        self.start_button.setEnabled(False)

        async def work() -> SessionView:
            return await asyncio.to_thread(
                self.tests.start, self.kit.principal, profile, lang=self.lang, replace_open=True
            )

        self._run(work, self._started)

    def _started(self, test: SessionView) -> None:
        self.start_button.setEnabled(True)
        self.test, self.feedback = test, None
        self.draw()

    def chosen(self) -> str:
        """The answer given: the checked choice's value, or the text typed."""
        assert self.test is not None and self.test.item is not None
        if self.test.item.item_type == "short_answer":
            return self.text_answer.text()
        button = self.choices.checkedButton()
        return str(button.property("value")) if button is not None else ""

    def submit(self) -> None:
        test = self.test
        if test is None or test.item is None or self.feedback is not None:
            return
        item, answer = test.item, self.chosen()
        self.submit_button.setEnabled(False)
        if item.item_type == "short_answer":
            self.meta.setText(t("quiz.web.item.grading", self.lang))

        async def work() -> AnswerResult:
            return await self.tests.answer(
                self.kit.principal, test.id, position=item.position, question_id=item.question_id, answer=answer
            )

        def answered(result: AnswerResult) -> None:
            self.answered_item, self.feedback, self.test = item, result.feedback, result.session
            self.draw()

        self._run(work, answered)

    def _next(self) -> None:
        self.feedback = None
        self.draw()

    def _restart(self) -> None:
        test = self.test
        if test is None:
            return

        async def work() -> SessionView:
            return await asyncio.to_thread(self.tests.abandon, self.kit.principal, test.id)

        self._run(work, lambda _: self._again())

    def _again(self) -> None:
        self.test, self.feedback = None, None
        self.draw()

    # ---- drawing ----------------------------------------------------------------------------------------------

    def draw(self) -> None:
        test, lang = self.test, self.lang
        testing = test is not None and test.status == "in_progress"
        self.restart.setVisible(testing)
        self.progress.setVisible(testing)
        self.estimate.setVisible(test is not None and test.answered > 0)
        if test is not None:
            position = test.answered if self.feedback is not None else (test.item.position if test.item else 0)
            self.progress.setText(t("quiz.web.progress", lang, position=position, max=test.max_items))
            self.estimate.setText(t("quiz.web.estimate", lang, theta=_signed(test.theta), se=f"{test.se:.2f}"))
        if self.feedback is not None:
            self.pages.setCurrentWidget(self.item_page)
            self._draw_feedback()
        elif testing and test is not None and test.item is not None:
            self.pages.setCurrentWidget(self.item_page)
            self._draw_item(test.item)
        elif test is not None and test.status != "in_progress":
            self.pages.setCurrentWidget(self.results_page)
            self._draw_results(test)
        else:
            self.pages.setCurrentWidget(self.profile_page)

    def _draw_item(self, item: ItemView) -> None:
        lang = self.lang
        self.meta.setText(self._meta(item))
        self.stem.setText(item.stem)
        for button in self.choices.buttons():
            self.choices.removeButton(button)
            button.deleteLater()
        options: list[tuple[str, str]] = []
        if item.item_type == "true_false":
            options = [(value, t(key, lang)) for value, key in _TRUTH.items()]
        elif item.choices:
            options = [(choice, choice) for choice in item.choices]
        for value, label in options:
            button = QRadioButton(label)
            button.setProperty("value", value)
            self.choices.addButton(button)
            self.choice_box.addWidget(button)
        self.text_answer.setVisible(item.item_type == "short_answer")
        self.text_answer.clear()
        self.text_answer.setEnabled(True)
        self.submit_button.setEnabled(True)
        self.submit_button.show()
        self.next_button.hide()
        self.feedback_view.hide()

    def _meta(self, item: ItemView) -> str:
        lang = self.lang
        category = t(_CATEGORY[item.category], lang) if item.category in _CATEGORY else item.category
        return t("quiz.web.item.meta", lang, position=item.position, category=category, topic=item.topic or "—",
                 level=item.difficulty)  # fmt: skip

    def _answer_text(self, item: ItemView | None, answer: str) -> str:
        if item is not None and item.item_type == "true_false" and answer in _TRUTH:
            return t(_TRUTH[answer], self.lang)
        return answer

    def _draw_feedback(self) -> None:
        feedback, item, lang = self.feedback, self.answered_item, self.lang
        assert feedback is not None
        if item is not None:
            self.meta.setText(self._meta(item))  # graded: no longer "Grading your answer…"
        for button in self.choices.buttons():
            button.setEnabled(False)
        self.text_answer.setEnabled(False)
        tone = _verdict(feedback)
        rows = [(t("quiz.web.feedback.your_answer", lang), self._answer_text(item, feedback.answer))]
        if feedback.correct_answer:
            rows.append((t("quiz.web.feedback.right_answer", lang), self._answer_text(item, feedback.correct_answer)))
        elif feedback.correct_keywords:
            rows.append(
                (
                    t("quiz.web.feedback.keywords", lang),
                    t("quiz.web.list_separator", lang).join(feedback.correct_keywords),
                )
            )
        rows.append(
            (t("quiz.web.feedback.score", lang), t("quiz.web.feedback.points", lang, score=f"{feedback.score:.0f}"))
        )
        notes = (
            [t("quiz.web.feedback.fallback", lang)]
            if feedback.graded_by == "fallback"
            else [w for w in (feedback.grader_feedback, feedback.grader_explanation) if w]
        )
        parts = [
            f'<p style="color: {_TONES[tone]}; font-weight: 600;">{html.escape(t(f"quiz.web.feedback.{tone}", lang))}</p>'
        ]
        parts += [f"<p><b>{html.escape(k)}</b>: {html.escape(v)}</p>" for k, v in rows]
        parts += [f"<p>{html.escape(w)}</p>" for w in (feedback.explanation, *notes) if w]
        parts.append(
            f"<p>{html.escape(t('quiz.web.estimate', lang, theta=_signed(feedback.theta), se=f'{feedback.se:.2f}'))}</p>"
        )
        self.feedback_view.setHtml("".join(parts))
        self.feedback_view.show()
        self.submit_button.hide()
        finished = self.test is not None and self.test.status != "in_progress"
        self.next_button.setText(t("quiz.web.see_results" if finished else "quiz.web.next", lang))
        self.next_button.show()
        self.next_button.setFocus()

    def _draw_results(self, test: SessionView) -> None:
        lang = self.lang
        review = test.review or []
        right = sum(1 for r in review if r.feedback.is_correct)
        stop = (
            t(_STOP[test.stop_reason], lang, se=f"{test.se_target:.2f}")
            if test.stop_reason in _STOP
            else t("quiz.web.stop.abandoned", lang)
        )
        self.score.setText(
            t("quiz.web.result.theta", lang, theta=_signed(test.theta), se=f"{test.se:.2f}", n=test.answered)
        )
        self.stop.setText(
            t(
                "quiz.web.result.summary",
                lang,
                right=t("quiz.web.result.right", lang, right=right, n=test.answered),
                stop=stop,
            )
        )
        self.plot.load(QByteArray(ability_svg(test.trajectory, lang=test.lang).encode("utf-8")))
        self.plot.setToolTip(t("quiz.web.result.plot_alt", lang, theta=_signed(test.theta), se=f"{test.se:.2f}"))
        parts = []
        for reviewed in review:
            tone = _verdict(reviewed.feedback)
            words = t(f"quiz.web.feedback.{tone}", lang)
            parts.append(
                f'<p><b style="color: {_TONES[tone]}">{reviewed.item.position}. {html.escape(words)}</b> '
                f"{html.escape(reviewed.item.stem)}<br>"
                f"{html.escape(t('quiz.web.feedback.your_answer', lang))}: "
                f"{html.escape(self._answer_text(reviewed.item, reviewed.feedback.answer))}"
                + (
                    f"<br><small>{html.escape(reviewed.feedback.explanation)}</small>"
                    if reviewed.feedback.explanation
                    else ""
                )
                + "</p>"
            )
        self.review.setHtml("".join(parts))


def panels(kit: DesktopKit) -> list[DesktopPanel]:
    """The adaptive test as the window's main tab, over the host's store (short answers graded by the host's
    model, seed tool 6 with its fallback)."""
    host = kit.host
    if host is None:  # pragma: no cover - the window builds panels once the host is up
        return []
    env = host.env
    tests = app_sessions(env.store.engine, model=lambda: env.resolve_model(env.model))
    panel = AdaptiveTestPanel(kit=kit, tests=tests)
    panel.load()
    return [DesktopPanel(widget=panel, title=t("quiz.web.test.title", kit.lang), placement="tab")]
