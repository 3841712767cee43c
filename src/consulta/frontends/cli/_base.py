"""What every command shares: the Typer app, the console, the common options, settings, and the terminal itself
(one reader of stdin, prompts that can be abandoned, the model made ready with progress)."""

from __future__ import annotations

import queue
import sys
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console

from ...config import Settings
from ...i18n import t
from ._app_commands import WithAppCommands
from ._lang import choose_lang, env_lang, messages_lang, new_command

if TYPE_CHECKING:
    from ...runtime import AskPolicy, ConsultaError

# The runtime, the models, rich's progress bar and asyncio are imported in the functions that use them: `consulta --help`
# and `consulta asks` must not pay for pydantic-ai (bench/bench_cli_startup.py).

__all__ = [
    "LangOpt",
    "ModelOpt",
    "Stdin",
    "Abandoned",
    "app",
    "console",
    "fail",
    "env_lang",
    "in_daemon_thread",
    "interactive",
    "messages_lang",
    "new_command",
    "policy",
    "prepare_model",
    "settings_for",
]

app = typer.Typer(
    cls=WithAppCommands,
    add_completion=False,
    no_args_is_help=True,
    help="Consulta: agents that stop to consult someone, and carry on.",
)
console = Console()
_errors = Console(stderr=True)

ModelOpt = Annotated[
    str | None, typer.Option("--model", "-m", help="local | local:/x.gguf | openai:M | gemini:M | scripted:PATH")
]
LangOpt = Annotated[str | None, typer.Option("--lang", help="en or zh-CN")]


def fail(error: ConsultaError, *, stderr: bool = False) -> NoReturn:
    """End the command on `error`: its one line in the person's language (`messages_lang`), exit code 2 — never a
    traceback. `stderr` when stdout is not the person's (MCP over stdio speaks the protocol there)."""
    lang = messages_lang()
    (_errors if stderr else console).print(
        t("cli.error", lang, message=error.localized(lang)), style="red", markup=False, soft_wrap=True
    )
    raise SystemExit(2) from None


def settings_for(model: str | None = None, lang: str | None = None) -> Settings:
    """The settings from the environment and the options; a traces setting that cannot be used is refused here, as
    one line (ConfigError), before anything starts. Their language is the command's from now on (`messages_lang`)."""
    from ._usage import check_lang

    check_lang(lang)
    if lang is not None:
        choose_lang(lang)
    settings = Settings.from_env(model=model, lang=lang)
    if settings.traces.strip().lower() not in ("", "off"):  # off needs no check (nor the runtime's import)
        from ...runtime import tracing_from_setting

        checked = tracing_from_setting(settings.traces)
        if checked is not None:
            checked.shutdown()  # only checked: each host makes its own
    return replace(settings, lang=choose_lang(settings.lang))


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def policy(choice: str | None = None) -> AskPolicy:
    """`wait` when a person is at the terminal to answer, else `defer` (answer later with `consulta answer`)."""
    if choice is None:
        return "wait" if interactive() else "defer"
    if choice not in ("wait", "defer", "fail"):
        raise typer.BadParameter(t("cli.bad.ask_policy", env_lang()))
    return choice  # type: ignore[return-value]


def prepare_model(settings: Settings, spec: str) -> None:
    """Join the embedded model's parts (with a progress bar) and load it (with timing) before the first run; any
    other model is made once, so that a spec that cannot be used (an unknown kind, a missing script or key) is
    refused here as one line (ConfigError), not when the first run fails."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from ...models import prepare_model as prepare
    from ...models import resolve_model

    if not spec.startswith("local"):
        resolve_model(spec, models_dir=settings.models_dir)
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(t("cli.model.joining", settings.lang), total=None)
        start = time.monotonic()
        prepare(
            spec,
            models_dir=settings.models_dir,
            joining=lambda done, total: bar.update(task, completed=done, total=total),
            loading=lambda: bar.update(task, description=t("cli.model.loading", settings.lang), total=None),
        )
    console.print(t("cli.model.loaded", settings.lang, seconds=time.monotonic() - start), style="dim")


async def in_daemon_thread(fn: Any, *args: Any) -> Any:
    """Run a blocking terminal prompt on a daemon thread: a prompt abandoned by Ctrl-C never keeps the process alive."""
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def work() -> None:
        try:
            value = fn(*args)
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(value))
        except BaseException as error:  # noqa: BLE001 - delivered to the awaiting task
            loop.call_soon_threadsafe(lambda e=error: future.done() or future.set_exception(e))

    threading.Thread(target=work, daemon=True).start()
    return await future


class Abandoned(Exception):
    """The prompt was given up (the run was stopped); the line it waited for goes to the next prompt."""


class Stdin:
    """One thread reads the terminal; prompts take lines from it. An abandoned prompt gives up without eating input."""

    def __init__(self) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pump: threading.Thread | None = None

    def _read_forever(self) -> None:
        while True:
            line = sys.stdin.readline()
            self._lines.put(line)
            if line == "":
                return

    def read(self, prompt: str) -> str:
        if self._pump is None:
            self._pump = threading.Thread(target=self._read_forever, daemon=True)
            self._pump.start()
        console.print(prompt, end="", markup=False)
        line = self._lines.get()
        if line is None:
            raise Abandoned
        if line == "":
            self._lines.put("")  # end of input stays visible to later prompts
            raise EOFError
        return line.rstrip("\n")

    def abandon(self) -> None:
        """Wake the prompt that is waiting, so it stops waiting."""
        self._lines.put(None)

    async def aread(self, prompt: str) -> str:
        return await in_daemon_thread(self.read, prompt)
