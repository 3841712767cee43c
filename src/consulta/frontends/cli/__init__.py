"""The `consulta` command: chat with an app in the terminal, list and answer asks, resume and stop runs."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ...apps import APPS, AppDef, get_app
from ...config import Settings
from ...i18n import normalize_lang, t
from ...models import available_models, resolve_model
from .._host import LOCAL_PRINCIPAL
from ...runtime import (
    AskOpened,
    AskPolicy,
    AskRecord,
    ConflictError,
    ConsultaError,
    Event,
    InvalidAnswerError,
    RunRecord,
    RunStatus,
    Runtime,
    Store,
    tool_schemas,
)
from ._render import EventPrinter, parse_cli_answers, prompt_for_ask

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Consulta: agents that stop to consult someone, and carry on.")
console = Console()

ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="local | local:/x.gguf | openai:M | gemini:M | scripted:PATH")]
LangOpt = Annotated[str | None, typer.Option("--lang", help="en or zh-CN")]
InventoryOpt = Annotated[Path | None, typer.Option(help="ln2: the inventory YAML (default: a copy of the sample in the data dir)")]
TimeoutOpt = Annotated[float, typer.Option(help="Seconds to wait for an answer to a question")]


def _env_lang() -> str:
    """The language for messages given before the settings are read (`CONSULTA_LANG`)."""
    return normalize_lang(os.environ.get("CONSULTA_LANG"))


def main() -> None:
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # the engine's advertising banner is noise in our terminal
    try:
        app()
    except ConsultaError as error:
        console.print(t("cli.error", _env_lang(), message=str(error)), style="red", markup=False)
        raise SystemExit(2) from None


# ---- shared plumbing ------------------------------------------------------------------------------------------


async def _in_daemon_thread(fn: Any, *args: Any) -> Any:
    """Run a blocking terminal prompt on a daemon thread: a prompt abandoned by Ctrl-C never keeps the process alive."""
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


class _Abandoned(Exception):
    """The prompt was given up (the run was stopped); the line it waited for goes to the next prompt."""


class _Stdin:
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
            raise _Abandoned
        if line == "":
            self._lines.put("")  # end of input stays visible to later prompts
            raise EOFError
        return line.rstrip("\n")

    def abandon(self) -> None:
        """Wake the prompt that is waiting, so it stops waiting."""
        self._lines.put(None)

    async def aread(self, prompt: str) -> str:
        return await _in_daemon_thread(self.read, prompt)


def _settings(model: str | None = None, lang: str | None = None) -> Settings:
    settings = Settings.from_env(model=model, lang=lang)
    return Settings(home=settings.home, database_url=settings.database_url, model=settings.model, lang=normalize_lang(settings.lang))


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _policy(choice: str | None) -> AskPolicy:
    """`wait` when a person is at the terminal to answer, else `defer` (answer later with `consulta answer`)."""
    if choice is None:
        return "wait" if _interactive() else "defer"
    if choice not in ("wait", "defer", "fail"):
        raise typer.BadParameter(t("cli.bad.ask_policy", _env_lang()))
    return choice  # type: ignore[return-value]


def _prepare_model(settings: Settings, spec: str) -> None:
    """Join the embedded model's parts (with a progress bar) and load it (with timing) before the first run."""
    if not spec.startswith("local"):
        return
    if spec == "local" and not os.environ.get("CONSULTA_GGUF"):
        from ...models._gguf import ensure_default_gguf

        with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=console, transient=True) as bar:
            task = bar.add_task(t("cli.model.joining", settings.lang), total=None)
            ensure_default_gguf(settings.models_dir, progress=lambda done, total: bar.update(task, completed=done, total=total))
    start = time.monotonic()
    with console.status(t("cli.model.loading", settings.lang)):
        model = resolve_model(spec, models_dir=settings.models_dir)
        load = getattr(model, "load", None)
        if callable(load):
            load()
    console.print(t("cli.model.loaded", settings.lang, seconds=time.monotonic() - start), style="dim")


def _app_options(settings: Settings, app_name: str, *, inventory: Path | None, timeout: float) -> dict[str, Any]:
    """The app's options for a new session: its defaults, the inventory given, the question timeout."""
    options = get_app(app_name).default_options(settings)
    if inventory is not None:
        options["inventory"] = str(inventory.resolve())
    options["question_timeout"] = timeout
    return options


def _runtime(settings: Settings, policy: AskPolicy) -> Runtime:
    store = Store(settings.database_url)
    return Runtime(store=store, resolve_model=lambda spec: resolve_model(spec, models_dir=settings.models_dir), ask_policy=policy)


def _agent_for(run: RunRecord) -> Any:
    return get_app(run.app).build_agent(**run.options)


async def _drive(runtime: Runtime, run_id: str, settings: Settings, stdin: _Stdin, asks: asyncio.Queue[AskRecord]) -> RunRecord:
    """Answer the run's asks at the terminal until it settles; Ctrl-C stops it gracefully."""
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    if _interactive():
        loop.add_signal_handler(signal.SIGINT, stop_requested.set)
    try:
        while True:
            settled = asyncio.ensure_future(runtime.settled(run_id))
            next_ask = asyncio.ensure_future(asks.get())
            stop = asyncio.ensure_future(stop_requested.wait())
            done, _ = await asyncio.wait({settled, next_ask, stop}, return_when=asyncio.FIRST_COMPLETED)
            for task in (settled, next_ask):
                if task not in done:
                    task.cancel()
            if next_ask in done and stop not in done:
                answering = asyncio.ensure_future(_answer_at_terminal(runtime, next_ask.result(), settings, stdin))
                done, _ = await asyncio.wait({answering, stop}, return_when=asyncio.FIRST_COMPLETED)
                if answering not in done:
                    stdin.abandon()
                    answering.cancel()
            if stop in done:
                console.print()
                console.print(t("cli.chat.stopping", settings.lang), style="yellow")
                run = await runtime.stop(run_id)
                console.print(t("cli.chat.stopped", settings.lang, run_id=run_id), style="yellow")
                return run
            stop.cancel()
            if settled in done:
                return settled.result()
    finally:
        if _interactive():
            loop.remove_signal_handler(signal.SIGINT)


async def _answer_at_terminal(runtime: Runtime, ask: AskRecord, settings: Settings, stdin: _Stdin) -> None:
    while True:
        try:
            answer = await _in_daemon_thread(prompt_for_ask, ask, console, settings.lang, stdin.read)
        except EOFError:
            answer = None
        except _Abandoned:
            return
        try:
            if answer is None:
                runtime.cancel_ask(ask.id)
                console.print(t("cli.question.cancelled", settings.lang), style="yellow")
            else:
                runtime.answer(ask.id, answer)
            return
        except InvalidAnswerError as error:
            console.print(t("cli.question.invalid", settings.lang, error=str(error)), style="red", markup=False)
        except ConflictError:
            closed = runtime.store.get_ask(ask.id)
            console.print(t("cli.question.closed", settings.lang, status=closed.status.value), style="yellow")
            return


def _attach(runtime: Runtime, settings: Settings) -> asyncio.Queue[AskRecord]:
    """Print events; queue asks for the terminal when someone is there to answer them."""
    printer = EventPrinter(console, settings.lang)
    asks: asyncio.Queue[AskRecord] = asyncio.Queue()

    def on_event(event: Event) -> None:
        printer(event)
        if isinstance(event, AskOpened):
            if runtime.ask_policy == "wait" and _interactive():
                asks.put_nowait(runtime.store.get_ask(event.ask_id))
            else:  # answered from elsewhere: `consulta answer`, another front end
                key = "cli.chat.waiting" if runtime.ask_policy == "wait" else "cli.chat.deferred"
                console.print(t(key, settings.lang, ask_id=event.ask_id), style="yellow", markup=False)

    runtime.subscribe(on_event)
    return asks


# ---- commands -------------------------------------------------------------------------------------------------


@app.command()
def chat(
    app_name: Annotated[str, typer.Argument(metavar="APP", help=f"One of: {', '.join(APPS)}")],
    inventory: InventoryOpt = None,
    model: ModelOpt = None,
    lang: LangOpt = None,
    prompt: Annotated[list[str] | None, typer.Option("--prompt", "-p", help="Send this request (repeatable) instead of reading the terminal")] = None,
    timeout: TimeoutOpt = 300.0,
    ask_policy: Annotated[str | None, typer.Option(help="wait | defer | fail (default: wait at a terminal, else defer)")] = None,
    file: Annotated[list[Path] | None, typer.Option("--file", help="tutor: a file the student uploads (repeatable)")] = None,
) -> None:
    """Chat with an app's agent in the terminal."""
    settings = _settings(model, lang)
    app_def = get_app(app_name)
    options = _app_options(settings, app_name, inventory=inventory, timeout=timeout)
    _upload(options, file or [])
    agent = app_def.build_agent(**options)
    policy = _policy(ask_policy)
    where = [t(f"cli.chat.{key}", settings.lang, path=options[key]) for key in ("inventory", "uploads") if key in options]
    console.print(" · ".join([t("cli.chat.welcome", settings.lang, app=app_name, model=settings.model), *where]), style="bold")
    _prepare_model(settings, settings.model)
    asyncio.run(_chat(settings, app_def, agent, policy, prompt))


def _upload(options: dict[str, Any], files: list[Path]) -> None:
    """Copy the student's files into the app's upload folder (an app without one takes no files)."""
    if not files:
        return
    if "uploads" not in options:
        raise typer.BadParameter(t("cli.bad.no_uploads", _env_lang()))
    folder = Path(options["uploads"])
    folder.mkdir(parents=True, exist_ok=True)
    for source in files:
        if not source.is_file():
            raise typer.BadParameter(t("cli.bad.no_file", _env_lang(), path=str(source)))
        shutil.copyfile(source, folder / source.name)


async def _chat(settings: Settings, app_def: AppDef, agent: Any, policy: AskPolicy, prompts: list[str] | None) -> None:
    runtime = _runtime(settings, policy)
    asks = _attach(runtime, settings)
    stdin = _Stdin()
    previous: str | None = None
    queue = list(prompts or [])
    if not prompts:
        console.print(t("cli.chat.hint", settings.lang), style="dim")
    try:
        while True:
            if prompts is not None:
                if not queue:
                    break
                text = queue.pop(0)
                console.print(f"{t('cli.chat.prompt', settings.lang)}> {text}", markup=False)
            else:
                try:
                    text = (await stdin.aread(f"{t('cli.chat.prompt', settings.lang)}> ")).strip()
                except EOFError:
                    break
                if text in ("exit", "quit", "退出"):
                    break
                if not text:
                    continue
            run = await runtime.start(agent, text, model=settings.model, lang=settings.lang, continue_from=previous, principal=LOCAL_PRINCIPAL)
            result = await _drive(runtime, run.id, settings, stdin, asks)
            previous = run.id
            handed = app_def.follow_up(runtime.store, result) if app_def.follow_up and result.status == RunStatus.finished else None
            if handed is not None:  # another agent of the app speaks next (the tutor's assistant, from the packet)
                next_agent, next_prompt = handed
                follow = await runtime.start(next_agent, next_prompt, model=settings.model, lang=settings.lang, principal=LOCAL_PRINCIPAL)
                await _drive(runtime, follow.id, settings, stdin, asks)
            if result.status == RunStatus.waiting and policy == "defer":
                break
    finally:
        await runtime.aclose()
        runtime.store.close()


@app.command()
def serve(
    app_name: Annotated[str, typer.Argument(metavar="APP", help=f"One of: {', '.join(APPS)}")] = "ln2",
    host: Annotated[str, typer.Option(help="Address to bind (127.0.0.1: this machine only)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8000,
    inventory: InventoryOpt = None,
    model: ModelOpt = None,
    lang: LangOpt = None,
    timeout: TimeoutOpt = 300.0,
) -> None:
    """Serve an app's web page and JSON API (OpenAPI docs at /docs)."""
    from ..web import serve as serve_web

    settings = _settings(model, lang)
    options = _app_options(settings, app_name, inventory=inventory, timeout=timeout)
    _prepare_model(settings, settings.model)
    serve_web(app=app_name, settings=settings, options=options, host=host, port=port)


@app.command()
def desktop(
    app_name: Annotated[str, typer.Argument(metavar="APP", help=f"One of: {', '.join(APPS)}")] = "ln2",
    inventory: InventoryOpt = None,
    model: ModelOpt = None,
    lang: LangOpt = None,
    timeout: TimeoutOpt = 300.0,
) -> None:
    """Open an app's desktop window (needs the `qt` extra)."""
    from ..qt import run_desktop

    settings = _settings(model, lang)
    options = _app_options(settings, app_name, inventory=inventory, timeout=timeout)
    _prepare_model(settings, settings.model)
    raise SystemExit(run_desktop(app=app_name, settings=settings, options=options))


@app.command()
def mcp(
    app_name: Annotated[str, typer.Argument(metavar="APP", help=f"One of: {', '.join(APPS)}")] = "ln2",
    transport: Annotated[str, typer.Option(help="stdio (for a client that starts this process) or http (streamable HTTP)")] = "stdio",
    host: Annotated[str, typer.Option(help="http: address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="http: port to listen on")] = 8001,
    inventory: InventoryOpt = None,
    lang: LangOpt = None,
    timeout: TimeoutOpt = 300.0,
) -> None:
    """Serve an app's tools over MCP; its questions reach the client's user through elicitation."""
    from ..mcp import run_mcp

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(t("cli.bad.transport", _env_lang()))
    settings = _settings(lang=lang)
    options = _app_options(settings, app_name, inventory=inventory, timeout=timeout)
    run_mcp(app=app_name, settings=settings, options=options, transport=transport, host=host, port=port)


@app.command()
def asks(all_: Annotated[bool, typer.Option("--all", help="Also closed asks")] = False, lang: LangOpt = None) -> None:
    """List pending asks (questions and plans waiting for a person)."""
    settings = _settings(lang=lang)
    store = Store(settings.database_url)
    rows = store.list_asks(status=None if all_ else "pending")
    if not rows:
        console.print(t("cli.asks.none", settings.lang))
        return
    table = Table(title=t("cli.asks.title", settings.lang))
    for col in ("col.id", "col.run", "col.kind", "col.status", "col.created", "col.summary"):
        table.add_column(t(col, settings.lang))
    for ask in rows:
        table.add_row(ask.id, ask.run_id, ask.kind, ask.status.value, ask.created_at[:19], _ask_summary(ask))
    console.print(table)


def _ask_summary(ask: AskRecord) -> str:
    if ask.kind == "plan":
        return "; ".join(i.get("preview", "") for i in ask.payload.get("items", []))
    parts = []
    for q in ask.payload.get("questions", []):
        options = f" [{' / '.join(q.get('options') or [])}]" if q.get("options") else ""
        parts.append(f"{q['header']}: {q['question']}{options}")
    return "\n".join(parts)


@app.command()
def answer(
    ask_id: Annotated[str, typer.Argument(help="The ask to answer (see `consulta asks`)")],
    values: Annotated[list[str] | None, typer.Argument(help="One answer per question (a number picks an option; 1,3 picks several); for a plan: approve or reject")] = None,
    json_answer: Annotated[str | None, typer.Option("--json", help="The answers as a JSON list")] = None,
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel the question instead of answering it")] = False,
    model: ModelOpt = None,
    lang: LangOpt = None,
) -> None:
    """Answer a pending ask; if the process that started its run is gone, resume the run here."""
    settings = _settings(model, lang)
    store = Store(settings.database_url)
    ask = store.get_ask(ask_id)
    run = store.get_run(ask.run_id)
    if json_answer is not None:
        try:
            value: Any = json.loads(json_answer)
        except ValueError as error:
            raise InvalidAnswerError(f"--json is not valid JSON: {error}") from None
    elif ask.kind == "plan":
        value = (values or [""])[0]
    else:
        value = parse_cli_answers(ask.payload.get("questions", []), values or [])
    agent = _agent_for(run)
    asyncio.run(_answer_and_resume(settings, agent, ask, value, cancel, run))


async def _answer_and_resume(settings: Settings, agent: Any, ask: AskRecord, value: Any, cancel: bool, run: RunRecord) -> None:
    policy: AskPolicy = "wait" if _interactive() else "defer"
    runtime = _runtime(settings, policy)
    asks_queue = _attach(runtime, settings)
    runtime.register(agent)
    try:
        closed = runtime.cancel_ask(ask.id) if cancel else runtime.answer(ask.id, value)
        console.print(t("cli.answer.answered", settings.lang, ask_id=closed.id))
        if runtime.store.run_is_live_elsewhere(run.id):
            console.print(t("cli.answer.live_elsewhere", settings.lang, owner=run.owner or "?"))
            return
        console.print(t("cli.answer.resuming", settings.lang, run_id=run.id), style="dim")
        if ask.kind != "plan":  # deciding a plan needs no model
            _prepare_model(settings, run.model)
        await runtime.resume(run.id, agent)
        result = await _drive(runtime, run.id, settings, _Stdin(), asks_queue)
        console.print(t("cli.run.status", settings.lang, run_id=run.id, status=result.status.value))
    finally:
        await runtime.aclose()
        runtime.store.close()


@app.command()
def resume(run_id: str, model: ModelOpt = None, lang: LangOpt = None) -> None:
    """Resume a waiting or interrupted run from its checkpoint (answer its questions here)."""
    settings = _settings(model, lang)
    store = Store(settings.database_url)
    run = store.get_run(run_id)
    agent = _agent_for(run)
    _prepare_model(settings, run.model)
    asyncio.run(_resume(settings, agent, run))


async def _resume(settings: Settings, agent: Any, run: RunRecord) -> None:
    policy: AskPolicy = "wait" if _interactive() else "defer"
    runtime = _runtime(settings, policy)
    asks_queue = _attach(runtime, settings)
    try:
        await runtime.resume(run.id, agent)
        if policy == "wait":
            for ask in runtime.store.list_asks(run_id=run.id):
                asks_queue.put_nowait(ask)
        result = await _drive(runtime, run.id, settings, _Stdin(), asks_queue)
        if result.status == RunStatus.waiting:
            for ask in runtime.store.list_asks(run_id=run.id):
                console.print(t("cli.chat.deferred", settings.lang, ask_id=ask.id), style="yellow", markup=False)
        console.print(t("cli.run.status", settings.lang, run_id=run.id, status=result.status.value))
    finally:
        await runtime.aclose()
        runtime.store.close()


@app.command()
def stop(run_id: str, lang: LangOpt = None) -> None:
    """Stop a run: its pending asks close as cancelled (a run live in another process stops within seconds)."""
    settings = _settings(lang=lang)

    async def go() -> RunRecord:
        runtime = _runtime(settings, "defer")
        try:
            return await runtime.stop(run_id)
        finally:
            await runtime.aclose()

    run = asyncio.run(go())
    console.print(t("cli.run.status", settings.lang, run_id=run_id, status=run.status.value))


@app.command()
def runs(status: Annotated[str | None, typer.Option(help="Only runs with this status")] = None, lang: LangOpt = None) -> None:
    """List recent runs."""
    settings = _settings(lang=lang)
    store = Store(settings.database_url)
    table = Table(title=t("cli.runs.title", settings.lang))
    for col in ("col.id", "col.app", "col.status", "col.model", "col.created", "col.summary"):
        table.add_column(t(col, settings.lang))
    for run in store.list_runs(status=status):
        table.add_row(run.id, run.app, run.status.value, run.model, run.created_at[:19], (run.prompt or "")[:60])
    console.print(table)


@app.command()
def consultations(
    consultation_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="Show this consultation's full record")] = None,
    run: Annotated[str | None, typer.Option("--run", help="Only the consultations of this run")] = None,
    lang: LangOpt = None,
) -> None:
    """List the expert consultations on record (seed 000's ledger), or show one as its markdown record."""
    from ...asks import consultation_markdown

    settings = _settings(lang=lang)
    store = Store(settings.database_url)
    if consultation_id is not None:
        console.print(Markdown(consultation_markdown(store.get_consultation(consultation_id), lang=settings.lang)))
        return
    rows = store.list_consultations(run_id=run)
    if not rows:
        console.print(t("cli.consultations.none", settings.lang))
        return
    table = Table(title=t("cli.consultations.title", settings.lang))
    for col in ("col.id", "col.run", "col.expert", "col.output_type", "col.status", "col.rules", "col.created"):
        table.add_column(t(col, settings.lang))
    for c in rows:
        rules = ", ".join(r["rule_name"] for r in c.binding_rules)
        table.add_row(c.id, c.run_id or "-", c.expert_id, c.request.get("expected_output_type", ""), c.status, rules or "-", c.started_at[:19])
    console.print(table)


@app.command()
def tools(
    app_name: Annotated[str, typer.Argument(metavar="APP")],
    schema: Annotated[bool, typer.Option("--schema", help="Print the OpenAI function-calling schemas as JSON")] = False,
) -> None:
    """List an app's tools (`--schema`: OpenAI function-calling format, the seed's tool_schemas())."""
    settings = _settings()
    app_def = get_app(app_name)
    agent = app_def.build_agent(**app_def.default_options(settings))
    schemas = tool_schemas(agent)
    if schema:
        sys.stdout.write(json.dumps(schemas, ensure_ascii=False, indent=2) + "\n")
        return
    for s in schemas:
        console.print(f"[bold]{s['function']['name']}[/bold] ({s['x-consulta-kind']}): {s['function']['description']}")


@app.command()
def models(lang: LangOpt = None) -> None:
    """List the model backends, which can be used here, and the default."""
    settings = _settings(lang=lang)
    table = Table()
    for col in ("col.spec", "col.description", "col.available", "col.note"):
        table.add_column(t(col, settings.lang))
    for info in available_models():
        spec = info.spec + (" *" if info.spec == settings.model else "")
        table.add_row(spec, info.description, t("cli.yes" if info.available else "cli.no", settings.lang), info.note)
    console.print(table)
    console.print(t("cli.models.default", settings.lang, model=settings.model))
