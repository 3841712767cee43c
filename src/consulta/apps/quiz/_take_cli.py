"""`consulta quiz take`: a person takes an adaptive test in the terminal (Typer + Rich), on the same sessions as the web
page (`_cat_sessions`): the profile asked field by field (the last one saved offered as the default), each item with
its feedback, and the end with θ ± SE, a text plot of the estimate after each item and every item reviewed. The test
is saved after every answer: leave at any time (Ctrl-D, Ctrl-C, a closed terminal) and `consulta quiz take` continues
it (`--resume` insists on continuing; `--new` gives it up and starts anew)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ...config import Settings
from ...i18n import normalize_lang, t
from ...models import resolve_model
from ...runtime import Store
from ._cat_sessions import (
    Feedback,
    ItemView,
    Point,
    ProfileForm,
    SessionView,
    TestSessionError,
    TestSessions,
    app_sessions,
    parse_profile,
    truth,
)
from ._profiles import SELF_LEVELS

__all__ = ["PRINCIPAL", "commands", "default_sessions", "text_plot"]

PRINCIPAL = "local"
"""Whose tests the terminal takes: the person at this machine (the terminal front end's principal)."""
PLOT_WIDTH = 41
CALIBRATION_WAIT_S = 30.0


class _Left(Exception):
    """The person left (end of input, Ctrl-C): the test is saved as it is."""


def default_sessions(settings: Settings, store: Store) -> TestSessions:
    """Tests on the settings' store, from the shipped bank; short answers graded by the settings' model (made at the
    first short answer)."""
    return app_sessions(store.engine, model=lambda: resolve_model(settings.model, models_dir=settings.models_dir))


def commands(
    *, sessions: Callable[[Settings, Store], TestSessions] = default_sessions, console: Console | None = None
) -> typer.Typer:
    """quiz's terminal commands (`TerminalPart.commands`): `take`."""
    cli = typer.Typer(help="quiz: take an adaptive test", no_args_is_help=True)

    @cli.command()
    def take(
        lang: Annotated[
            str | None, typer.Option("--lang", help="en or zh-CN: the items' and the messages' language")
        ] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="The model grading short answers")] = None,
        resume: Annotated[
            bool, typer.Option("--resume", help="Continue the test in progress (an error if there is none)")
        ] = False,
        new: Annotated[
            bool, typer.Option("--new", help="Give up the test in progress (its answers are kept) and start anew")
        ] = False,
    ) -> None:
        """Take an adaptive test: your profile, then one item at a time until your level is known; a test left
        half-way continues the next time."""
        settings = Settings.from_env(model=model, lang=lang)
        words = normalize_lang(settings.lang)
        out = console or Console()
        store = Store(settings.database_url)
        try:
            code = asyncio.run(_Take(sessions(settings, store), out, words).run(resume=resume, new=new))
        finally:
            store.close()
        if code:
            raise typer.Exit(code)

    return cli


class _Take:
    """One sitting at the terminal."""

    def __init__(self, tests: TestSessions, console: Console, lang: str) -> None:
        self.tests, self.console, self.lang = tests, console, lang

    def say(self, key: str, style: str | None = None, **values: Any) -> None:
        self.console.print(t(key, self.lang, **values), style=style, markup=False, highlight=False, soft_wrap=True)

    def ask(self, key: str, default: str | None = None, **values: Any) -> str:
        prompt = t(key, self.lang, **values)
        if default:
            prompt += " " + t("quiz.take.cli.default", self.lang, default=default)
        try:
            text = self.console.input(escape(prompt) + ": ").strip()
        except (EOFError, KeyboardInterrupt):
            raise _Left from None
        return text or (default or "")

    def refused(self, error: TestSessionError) -> None:
        self.console.print(
            t("cli.error", self.lang, message=error.localized(self.lang)), style="red", markup=False, soft_wrap=True
        )

    async def run(self, *, resume: bool, new: bool) -> int:
        try:
            view = await self.open(resume=resume, new=new)
            if view is None:
                return 2
            view = await self.sit(view)
        except _Left:
            self.console.print()
            self.say("quiz.take.cli.left", "yellow")
            return 0
        except TestSessionError as error:
            self.refused(error)
            return 2
        if view.status == "finished":
            self.results(view)
            with self.console.status(t("quiz.take.cli.calibrating", self.lang)):
                if not await self.tests.settle(timeout_s=CALIBRATION_WAIT_S):
                    self.say("quiz.take.cli.calibration_later", "dim")
        return 0

    async def open(self, *, resume: bool, new: bool) -> SessionView | None:
        current = await asyncio.to_thread(self.tests.open_test, PRINCIPAL)
        if current is not None and new:
            await asyncio.to_thread(self.tests.abandon, PRINCIPAL, current.id)
            current = None
        if current is not None:
            self.say(
                "quiz.take.cli.resuming",
                "bold",
                answered=current.answered,
                position=current.item.position if current.item else "-",
            )
            return current
        if resume:
            self.refused(TestSessionError("no_open_test", "You have no test in progress to resume."))
            return None
        profile = self.profile(await asyncio.to_thread(self.tests.saved_profile, PRINCIPAL))
        view = await asyncio.to_thread(self.tests.start, PRINCIPAL, profile, lang=self.lang)
        self.say("quiz.take.cli.started", "bold", max=view.max_items)
        return view

    def profile(self, saved: ProfileForm | None) -> ProfileForm:
        """The profile, asked field by field; a field refused is asked again, with the reason."""
        self.say("quiz.take.cli.profile_intro", "bold")
        levels = ", ".join(f"{n} {t(f'quiz.take.level.{level}', self.lang)}" for n, level in enumerate(SELF_LEVELS, 1))
        fields: dict[str, Callable[[], Any]] = {
            "self_level": lambda: self._level(
                self.ask("quiz.take.cli.ask.self_level", _level_default(saved, self.lang), levels=levels)
            ),
            "years_experience": lambda: self._number(
                self.ask("quiz.take.cli.ask.years_experience", str(saved.years_experience) if saved else None)
            ),
            "job_role": lambda: self.ask("quiz.take.cli.ask.job_role", saved.job_role if saved else None),
            "duty": lambda: self.ask("quiz.take.cli.ask.duty", saved.duty if saved else None),
            "interests": lambda: _interests(
                self.ask(
                    "quiz.take.cli.ask.interests",
                    t("quiz.take.list_separator", self.lang).join(saved.interests) if saved else None,
                )
            ),
        }
        values = {name: read() for name, read in fields.items()}
        while True:
            try:
                return parse_profile(values)
            except TestSessionError as error:
                self.refused(error)
                name = (error.field or "").removeprefix("profile.").split(".")[0]
                if name not in fields:
                    raise
                values[name] = fields[name]()

    @staticmethod
    def _level(text: str) -> str:
        if text.isdigit() and 1 <= int(text) <= len(SELF_LEVELS):
            return SELF_LEVELS[int(text) - 1]
        return text.casefold()

    @staticmethod
    def _number(text: str) -> Any:
        return int(text) if text.lstrip("-").isdigit() else text

    async def sit(self, view: SessionView) -> SessionView:
        """Items until the end of the test."""
        while view.status == "in_progress" and view.item is not None:
            item = view.item
            self.show(item, view)
            while True:
                answer = self.reply(item, self.ask(_answer_prompt(item)))
                try:
                    grading = (
                        self.console.status(t("quiz.take.cli.grading", self.lang))
                        if item.item_type == "short_answer"
                        else nullcontext()
                    )
                    with grading:  # a short answer waits for the model
                        result = await self.tests.answer(
                            PRINCIPAL, view.id, position=item.position, question_id=item.question_id, answer=answer
                        )
                    break
                except TestSessionError as error:
                    if error.code not in ("empty_answer", "not_a_choice", "answer_too_long"):
                        raise
                    self.refused(error)
            self.feedback(item, result.feedback)
            view = result.session
        return view

    def show(self, item: ItemView, view: SessionView) -> None:
        self.console.print()
        head = t(
            "quiz.take.cli.item_head",
            self.lang,
            position=item.position,
            max=view.max_items,
            category=_category(item.category, self.lang),
            topic=item.topic or "-",
            level=item.difficulty,
        )
        self.console.rule(head, style="cyan", characters="─")
        self.console.print(item.stem, markup=False, highlight=False)
        for n, label in enumerate(_options(item, self.lang), 1):
            self.console.print(f"  {n}) {label}", markup=False, highlight=False)

    @staticmethod
    def reply(item: ItemView, text: str) -> str:
        """A number picks the option of that number; anything else is the answer as written."""
        options = _values(item)
        if options and text.isdigit() and 1 <= int(text) <= len(options):
            return options[int(text) - 1]
        if item.item_type == "true_false" and truth(text) is not None:
            return truth(text) or text
        return text

    def feedback(self, item: ItemView, feedback: Feedback) -> None:
        verdict, style = _verdict(feedback)
        self.say(f"quiz.take.feedback.{verdict}", f"bold {style}")
        if feedback.correct_answer:
            shown = _shown(item, feedback.correct_answer, self.lang)
            self.console.print(
                f"{t('quiz.take.feedback.right_answer', self.lang)}: {shown}", markup=False, highlight=False
            )
        elif feedback.correct_keywords:
            keywords = t("quiz.take.list_separator", self.lang).join(feedback.correct_keywords)
            self.console.print(
                f"{t('quiz.take.feedback.keywords', self.lang)}: {keywords}", markup=False, highlight=False
            )
        if feedback.explanation:
            self.console.print(feedback.explanation, markup=False, highlight=False)
        if feedback.graded_by == "fallback":
            self.say("quiz.take.feedback.fallback", "yellow")
        for words in (feedback.grader_feedback, feedback.grader_explanation):
            if words:
                self.console.print(words, style="dim", markup=False, highlight=False)
        self.say("quiz.take.estimate", "dim", theta=f"{feedback.theta:+.2f}", se=f"{feedback.se:.2f}")

    def results(self, view: SessionView) -> None:
        self.console.print()
        self.console.rule(t("quiz.take.cli.result_head", self.lang), style="green", characters="═")
        self.say("quiz.take.result.theta", "bold", theta=f"{view.theta:+.2f}", se=f"{view.se:.2f}", n=view.answered)
        right = sum(1 for r in view.review or [] if r.feedback.is_correct)
        stop = (
            t(f"quiz.take.stop.{view.stop_reason}", self.lang, se=f"{view.se_target:.2f}") if view.stop_reason else ""
        )
        self.say(
            "quiz.take.result.summary",
            right=t("quiz.take.result.right", self.lang, right=right, n=view.answered),
            stop=stop,
        )
        if view.level_derived_items:
            self.say(
                "quiz.take.result.level_derived",
                "dim",
                derived=view.level_derived_items,
                calibrated=view.calibrated_items,
            )
        self.console.print()
        self.say("quiz.take.plot.title", "bold")
        for line in text_plot(view.trajectory, lang=self.lang):
            self.console.print(line, markup=False, highlight=False)
        table = Table(title=t("quiz.take.cli.review_title", self.lang), show_lines=False)
        for key in (
            "quiz.take.cli.col.position",
            "quiz.take.cli.col.item",
            "quiz.take.feedback.your_answer",
            "quiz.take.feedback.right_answer",
            "quiz.take.feedback.score",
            "quiz.take.cli.col.params",
        ):
            table.add_column(t(key, self.lang), overflow="fold")
        for reviewed in view.review or []:
            item, fb = reviewed.item, reviewed.feedback
            right_answer = (
                _shown(item, fb.correct_answer, self.lang)
                if fb.correct_answer
                else t("quiz.take.list_separator", self.lang).join(fb.correct_keywords or [])
            )
            mark = "✓" if fb.is_correct else "✗"
            table.add_row(
                f"{item.position} {mark}",
                escape(item.stem),
                escape(_shown(item, fb.answer, self.lang)),
                escape(right_answer),
                f"{fb.score:.0f}",
                t(
                    "quiz.take.cli.params.level" if reviewed.level_derived else "quiz.take.cli.params.calibrated",
                    self.lang,
                ),
            )
        self.console.print(table)


def text_plot(trajectory: Sequence[Point], *, lang: str, width: int = PLOT_WIDTH) -> list[str]:
    """The estimate after each item as text, one line per item (0: the prior): θ ± SE as a bar on a −3…+3 scale (`─`
    the band, `●` θ, `┆` zero) and ✓ / ✗ for the answer."""
    lo, hi = -3.0, 3.0

    def col(theta: float) -> int:
        return max(0, min(width - 1, round((theta - lo) / (hi - lo) * (width - 1))))

    scale = [" "] * width
    for tick, label in ((-3, "-3"), (0, "0"), (3, "+3")):
        start = min(width - len(label), col(tick))
        scale[start : start + len(label)] = list(label)
    margin = " " * 22
    lines = [margin + " " + "".join(scale)]
    for p in trajectory:
        bar = [" "] * width
        bar[col(0)] = "┆"
        for c in range(col(p.theta - p.se), col(p.theta + p.se) + 1):
            bar[c] = "─"
        bar[col(p.theta)] = "●"
        mark = " " if p.is_correct is None else "✓" if p.is_correct else "✗"
        lines.append(f"{p.position:>4} {mark} {p.theta:+.2f} ± {p.se:.2f}  │{''.join(bar)}│")
    lines.append(margin + " " + t("quiz.take.plot.x_text", lang))
    return lines


def _answer_prompt(item: ItemView) -> str:
    return "quiz.take.cli.answer_text" if item.item_type == "short_answer" else "quiz.take.cli.answer_choice"


def _values(item: ItemView) -> list[str]:
    if item.item_type == "true_false":
        return ["true", "false"]
    return list(item.choices or [])


def _options(item: ItemView, lang: str) -> list[str]:
    return [_shown(item, value, lang) for value in _values(item)]


def _shown(item: ItemView, value: str, lang: str) -> str:
    """An answer as the person reads it (true/false in their words)."""
    if item.item_type == "true_false" and truth(value) is not None:
        return t(f"quiz.take.{truth(value)}", lang)
    return value


def _category(category: str, lang: str) -> str:
    key = f"quiz.take.category.{category}"
    return t(key, lang) if category in ("technical", "business", "general") else category


def _verdict(feedback: Feedback) -> tuple[str, str]:
    if feedback.is_correct:
        return "right", "green"
    if feedback.score >= 70:
        return "partial", "yellow"
    return "wrong", "red"


def _level_default(saved: ProfileForm | None, lang: str) -> str | None:
    return str(SELF_LEVELS.index(saved.self_level) + 1) if saved else None


def _interests(text: str) -> list[str]:
    for separator in ("，", "、", ";", "；"):
        text = text.replace(separator, ",")
    return [part.strip() for part in text.split(",") if part.strip()]
