"""The commands that serve an app: `chat` in the terminal, `serve` (web), `desktop`, `mcp`. Each takes the app's own
flags (read from its options model; `consulta chat APP --help-app` lists them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ...apps import DEFAULT_APP, get_app
from ...config import Settings
from ...i18n import t
from ...runtime import ConsultaError, RunStatus
from ._base import LangOpt, ModelOpt, app, console, env_lang, fail, policy, prepare_model, settings_for

if TYPE_CHECKING:
    from ...apps import AppDef
    from ...runtime import AskPolicy
    from ._flags import AppFlags
    from ._session import TerminalSession

# The host, the engine and the app are imported by the command that runs (`consulta --help` pays for none of them);
# `consulta.runtime` resolves each name when first used, and its records and errors cost nothing.

__all__ = ["chat", "desktop", "mcp", "serve"]

_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}
AppArg = Annotated[
    str, typer.Argument(metavar="APP", help="The app (`consulta apps` lists them); its own flags follow it")
]
HelpApp = Annotated[bool, typer.Option("--help-app", help="List the app's own flags and exit")]


def _check_starts(settings: Settings, app_def: AppDef, flags: AppFlags) -> None:
    """Open the app's host once and close it, so that what it cannot use (its data file, say) is refused here as one
    line (a ConsultaError, exit 2), before a server or a window starts or the model is loaded."""

    from .._host import AppHost

    async def open_and_close() -> None:
        await AppHost(app=app_def, settings=settings, options=flags.options, ask_policy="defer").aclose()

    import asyncio

    asyncio.run(open_and_close())


def _app(name: str, ctx: typer.Context, help_app: bool) -> tuple[AppDef, AppFlags]:
    """The app and what its flags say, checked by the app (`AppDef.check_options`: a ConsultaError, one line, before
    any host, server, window or model starts; `--help-app`: print the flags and exit)."""
    from ._flags import app_flag_names, app_flags, flags_help
    from ._usage import no_such_flag, option_flags

    if name.startswith("-"):  # an unknown flag before the app (`serve --prot 9000`), not an app's name
        default = next((p.default for p in ctx.command.params if p.name == "app_name"), None)
        among = app_flag_names(get_app(default)) if isinstance(default, str) else []
        raise no_such_flag(name, [*option_flags(ctx.command.params), *among])
    app_def = get_app(name)
    if help_app:
        console.print(flags_help(app_def), markup=False, highlight=False)
        raise typer.Exit(0)
    flags = app_flags(app_def, ctx.args, command_flags=option_flags(ctx.command.params))
    if app_def.check_options is not None:
        app_def.check_options(flags.options)
    return app_def, flags


@app.command(context_settings=_EXTRA)
def chat(
    ctx: typer.Context,
    app_name: AppArg,
    model: ModelOpt = None,
    lang: LangOpt = None,
    prompt: Annotated[
        list[str] | None,
        typer.Option("--prompt", "-p", help="Send this request (repeatable) instead of reading the terminal"),
    ] = None,
    ask_policy: Annotated[
        str | None, typer.Option(help="wait | defer | fail (default: wait at a terminal, else defer)")
    ] = None,
    help_app: HelpApp = False,
) -> None:
    """Chat with an app's agent in the terminal (with --prompt, the exit status is 1 when a run failed)."""
    settings = settings_for(model, lang)
    app_def, flags = _app(app_name, ctx, help_app)
    import asyncio

    if asyncio.run(_chat(settings, app_def, flags, policy(ask_policy), prompt)):
        raise typer.Exit(1)


async def _chat(
    settings: Settings, app_def: AppDef, flags: AppFlags, ask_policy: AskPolicy, prompts: list[str] | None
) -> bool:
    """Hold the conversation; True when one of its runs failed."""
    from .._host import LOCAL_PRINCIPAL, AppHost
    from ._session import TerminalSession

    host = AppHost(app=app_def, settings=settings, options=flags.options, ask_policy=ask_policy)
    session = TerminalSession(host, principal=LOCAL_PRINCIPAL)
    try:
        if app_def.terminal.prepare is not None and flags.terminal is not None:
            app_def.terminal.prepare(flags.terminal, host)
        welcome = app_def.terminal.welcome(host, settings.lang) if app_def.terminal.welcome is not None else None
        line = t("cli.chat.welcome", settings.lang, app=app_def.name, model=settings.model)
        console.print(" · ".join([line, welcome] if welcome else [line]), style="bold", markup=False)
        prepare_model(settings, settings.model)  # before the first run: nothing runs on the loop yet
        return await _converse(session, settings, prompts)
    finally:
        session.close()
        await host.aclose()


async def _converse(session: TerminalSession, settings: Settings, prompts: list[str] | None) -> bool:
    from .._host import LOCAL_PRINCIPAL

    previous: str | None = None
    failed = False
    queue = list(prompts or [])
    if not prompts:
        console.print(t("cli.chat.hint", settings.lang), style="dim")
    while True:
        if prompts is not None:
            if not queue:
                return failed
            text = queue.pop(0)
            console.print(f"{t('cli.chat.prompt', settings.lang)}> {text}", markup=False)
        else:
            try:
                text = (await session.stdin.aread(f"{t('cli.chat.prompt', settings.lang)}> ")).strip()
            except EOFError:
                return failed
            if text in ("exit", "quit", "退出"):
                return failed
            if not text:
                continue
        run = await session.host.start(text, principal=LOCAL_PRINCIPAL, lang=settings.lang, continue_from=previous)
        result = await session.turn(run)
        previous = run.id  # the next turn continues the main agent's conversation
        failed = failed or result.status == RunStatus.failed
        if result.status == RunStatus.waiting and session.host.runtime.ask_policy == "defer":
            return failed


@app.command(context_settings=_EXTRA)
def serve(
    ctx: typer.Context,
    app_name: AppArg = DEFAULT_APP,
    host: Annotated[str, typer.Option(help="Address to bind (127.0.0.1: this machine only)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0 to 65535)")] = 8000,
    model: ModelOpt = None,
    lang: LangOpt = None,
    access_log: Annotated[bool, typer.Option("--access-log", help="Log every request (one line each)")] = False,
    help_app: HelpApp = False,
) -> None:
    """Serve an app's web page and JSON API (OpenAPI docs at /docs)."""
    from ..web import serve as serve_web

    settings = settings_for(model, lang)
    app_def, flags = _app(app_name, ctx, help_app)
    _check_starts(settings, app_def, flags)
    prepare_model(settings, settings.model)
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::", "::1") else host  # noqa: S104 - a name, not a bind
    console.print(t("cli.serve.open", settings.lang, url=f"http://{shown}:{port}"), style="bold", markup=False)
    serve_web(app=app_def, settings=settings, options=flags.options, host=host, port=port, access_log=access_log)


@app.command(context_settings=_EXTRA)
def desktop(
    ctx: typer.Context,
    app_name: AppArg = DEFAULT_APP,
    model: ModelOpt = None,
    lang: LangOpt = None,
    help_app: HelpApp = False,
) -> None:
    """Open an app's desktop window (needs the `qt` extra)."""
    settings = settings_for(model, lang)
    app_def, flags = _app(app_name, ctx, help_app)
    from ..qt import run_desktop  # after the flags' checks: a refused flag does not wait for Qt

    _check_starts(settings, app_def, flags)
    prepare_model(settings, settings.model)
    raise SystemExit(run_desktop(app=app_def, settings=settings, options=flags.options))


@app.command(context_settings=_EXTRA)
def mcp(
    ctx: typer.Context,
    app_name: AppArg = DEFAULT_APP,
    transport: Annotated[
        str, typer.Option(help="stdio (for a client that starts this process) or http (streamable HTTP)")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="http: address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="http: port to listen on")] = 8001,
    lang: LangOpt = None,
    help_app: HelpApp = False,
) -> None:
    """Serve an app's tools over MCP; its questions reach the client's user through elicitation."""
    from ..mcp import run_mcp

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(t("cli.bad.transport", env_lang()))
    try:
        settings = settings_for(lang=lang)
        app_def, flags = _app(app_name, ctx, help_app)
        run_mcp(app=app_def, settings=settings, options=flags.options, transport=transport, host=host, port=port)
    except ConsultaError as error:  # over stdio, stdout is the protocol's: the person's line goes to stderr
        fail(error, stderr=True)
