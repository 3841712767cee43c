"""Rendering for the terminal: events as they happen, questions and plans as prompts. All text from the catalogs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ...i18n import t
from ...runtime import (
    PLAN_ASK,
    AskRecord,
    Event,
    ModelText,
    PlanDecided,
    ReplyChecked,
    RunEnded,
    TextDelta,
    ToolCalled,
    ToolReturned,
)
from .._steps import step_time, step_words

__all__ = ["EventPrinter", "parse_cli_answers", "prompt_for_ask"]

ReadLine = Callable[[str], str]


class EventPrinter:
    """Prints a run's events compactly: tool calls and their outcome, the agent's reply, plan outcomes."""

    def __init__(
        self, console: Console, lang: str, *, app: str = "", reply: Callable[[str, str], str] | None = None
    ) -> None:
        """`app`: the app whose words name its tools' steps; `reply(text, lang)`: what the person reads of the
        agent's reply (the app's `TerminalPart.reply`)."""
        self.console = console
        self.lang = lang
        self.app = app
        self.reply = reply
        self._draft = ""
        self._live: Live | None = None

    def _drafted(self, event: TextDelta) -> None:
        """The reply being written, shown in place (a terminal only: a log or a pipe gets the reply itself)."""
        if not self.console.is_terminal:
            return
        if event.offset == 0:
            self._draft = event.text
        elif event.offset == len(self._draft):
            self._draft += event.text
        else:
            return
        panel = Panel(
            Text(self._draft + " …", style="dim"),
            title=t("cli.chat.agent", self.lang),
            title_align="left",
            border_style="dim",
        )
        if self._live is None:
            self._live = Live(panel, console=self.console, auto_refresh=False, transient=True)
            self._live.start()
        self._live.update(panel, refresh=True)

    def _end_draft(self) -> None:
        self._draft = ""
        if self._live is not None:
            self._live.stop()  # transient: the draft leaves the screen
            self._live = None

    def __call__(self, event: Event) -> None:
        lang, out = self.lang, self.console
        if isinstance(event, TextDelta):
            self._drafted(event)
            return
        if isinstance(event, ReplyChecked) and self._draft:  # words they may have read leave the screen: say so
            out.print(t("cli.chat.reply_withdrawn", lang), style="dim", markup=False, highlight=False)
        self._end_draft()  # whatever comes next, the draft was provisional: the reply (if it is one) is printed whole
        match event:
            case ToolCalled(tool_name=name, args=args) if name != "question":
                # The step in the person's words; the tool's name, arguments and refusals are the model's business.
                step = step_words(self.app, name, args, lang)
                out.print(t("cli.chat.step", lang, step=step), style="dim", markup=False, highlight=False)
            case ToolReturned(tool_name=name, ok=False) if name != "question":
                out.print(t("cli.chat.step_set_aside", lang), style="dim", markup=False, highlight=False)
            case ToolReturned(tool_name=name, ok=True, duration_ms=took) if name != "question":
                out.print(t("cli.chat.step_done", lang, seconds=step_time(took, lang)), style="dim", markup=False,
                          highlight=False)  # fmt: skip
            case ModelText(text=text):
                shown = self.reply(text, lang) if self.reply is not None else text
                out.print(Panel(shown, title=t("cli.chat.agent", lang), title_align="left", border_style="cyan"))
            case PlanDecided(status=status, result=result):
                if status == "applied":
                    out.print(
                        t("cli.plan.applied", lang, audit_ids=", ".join((result or {}).get("audit_ids", []))),
                        style="green",
                    )
                elif status == "failed":
                    out.print(t("cli.plan.failed", lang, message=(result or {}).get("message", "")), style="red")
                elif status == "rejected":
                    out.print(t("cli.plan.rejected", lang), style="yellow")
                else:
                    out.print(t("cli.plan.cancelled", lang), style="yellow")
            case RunEnded(status="failed", error=error):
                out.print(t("cli.chat.failed", lang, error=error or ""), style="red", markup=False)
            case _:
                pass


def parse_cli_answers(questions: list[dict[str, Any]], values: list[str]) -> list[Any]:
    """Turn command-line values (one per question) into answers: `2` picks option 2, `1,3` picks several."""
    answers: list[Any] = []
    for q, value in zip(questions, values, strict=False):
        answers.append(_parse_one(q, value))
    return answers


def _parse_one(q: dict[str, Any], value: str) -> Any:
    options: list[str] = q.get("options") or []
    if q.get("multiple") and options:
        picked = []
        for token in [v.strip() for v in value.split(",") if v.strip()]:
            picked.append(_option(options, token))
        return picked
    return _option(options, value.strip()) if options else value


def _option(options: list[str], token: str) -> str:
    if token in options:
        return token
    if token.isdigit() and 1 <= int(token) <= len(options):
        return options[int(token) - 1]
    return token  # free text (validated against the question later)


def prompt_for_ask(ask: AskRecord, console: Console, lang: str, read: ReadLine) -> Any | None:
    """Ask the person at the terminal; return the answer, or None when they cancel (empty line)."""
    if ask.kind == PLAN_ASK:
        return _prompt_plan(ask, console, lang, read)
    questions: list[dict[str, Any]] = ask.payload.get("questions", [])
    console.print(Panel(t("ai.question.asking", lang), title=t("ai.question.title", lang), border_style="magenta"))
    answers: list[Any] = []
    for q in questions:
        console.print(f"[bold]{_esc(q['header'])}[/bold]: {_esc(q['question'])}")
        options: list[str] = q.get("options") or []
        for i, option in enumerate(options, 1):
            console.print(f"  [cyan]{i}[/cyan]. {_esc(option)}")
        hint = (
            "cli.question.pick_many"
            if q.get("multiple") and options
            else "cli.question.pick_one"
            if options
            else "cli.question.free_text"
        )
        console.print(t(hint, lang), style="dim")
        while True:
            line = read("> ").strip()
            if not line:
                return None
            value = _parse_one(q, line)
            if q.get("multiple") and options and any(v not in options for v in value):
                console.print(
                    t("cli.question.invalid", lang, error=", ".join(v for v in value if v not in options)), style="red"
                )
                continue
            answers.append(value)
            break
    return answers


def _prompt_plan(ask: AskRecord, console: Console, lang: str, read: ReadLine) -> Any | None:
    table = Table(title=t("cli.plan.title", lang), show_lines=False)
    table.add_column("#", justify="right")
    table.add_column(t("col.summary", lang))
    for i, item in enumerate(ask.payload.get("items", []), 1):
        table.add_row(str(i), item.get("preview", ""))
    console.print(table)
    while True:
        line = read(t("cli.plan.prompt", lang) + " ").strip().lower()
        if line in ("y", "yes", "是", "approve"):
            return "approve"
        if line in ("n", "no", "否", "reject"):
            return "reject"
        if not line:
            return None


def _esc(text: str) -> str:
    return text.replace("[", r"\[")
