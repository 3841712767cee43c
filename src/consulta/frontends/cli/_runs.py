"""The commands about runs and asks on record: `asks`, `answer`, `runs`, `resume`, `stop`. Each one that continues a
run does it as a terminal session on the run's app's `AppHost`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ...apps import get_app
from ...config import Settings
from ...i18n import t
from ...runtime import AskRecord, AskStatus, InvalidAnswerError, RunRecord, RunStatus
from ._base import LangOpt, ModelOpt, app, console, policy, prepare_model, settings_for
from ._tables import id_table

if TYPE_CHECKING:
    from ...apps import AppOptions
    from ...runtime import Store
    from .._host import AppHost

# `consulta.runtime` resolves each name when first used: its records and errors cost nothing, its store SQLAlchemy
# (imported by the command that opens it), and the host and the engine only by the commands that continue a run.

__all__ = ["answer", "asks", "resume", "runs", "stop"]

RunArg = Annotated[str, typer.Argument(metavar="RUN_ID", help="The run (see `consulta runs`)")]


def _host_for(run: RunRecord, settings: Settings) -> AppHost:
    """A host of the run's app over the run's own options (so its main agent is the one the run was started with)."""
    from .._host import AppHost

    return AppHost(app=run.app, settings=settings, options=_options(run), ask_policy=policy())


def _options(run: RunRecord) -> AppOptions:
    return get_app(run.app).recorded_options(run.options)


@app.command()
def asks(all_: Annotated[bool, typer.Option("--all", help="Also closed asks")] = False, lang: LangOpt = None) -> None:
    """List pending asks (questions and plans waiting for a person)."""
    from ...runtime import Store

    settings = settings_for(lang=lang)
    store = Store(settings.database_url)
    rows = store.list_asks(status=None if all_ else "pending")
    if not rows:
        console.print(t("cli.asks.none_at_all" if all_ else "cli.asks.none", settings.lang))
        return
    table = id_table(
        t("cli.asks.title", settings.lang),
        [t(c, settings.lang) for c in ("col.id", "col.run", "col.kind", "col.status", "col.created", "col.summary")],
        ids=2,
    )
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
    ask_id: Annotated[str, typer.Argument(metavar="ASK_ID", help="The ask to answer (see `consulta asks`)")],
    values: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ANSWER",
            help="One answer per question (a number picks an option; 1,3 picks several); for a plan: approve or reject",
        ),
    ] = None,
    json_answer: Annotated[str | None, typer.Option("--json", help="The answers as a JSON list")] = None,
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel the question instead of answering it")] = False,
    model: ModelOpt = None,
    lang: LangOpt = None,
) -> None:
    """Answer a pending ask; if the process that started its run is gone, resume the run here."""
    from ...runtime import Store
    from ._render import parse_cli_answers

    settings = settings_for(model, lang)
    store = Store(settings.database_url)
    try:
        ask = store.get_ask(ask_id)
        run = store.get_run(ask.run_id)
        if ask.status != AskStatus.pending and _interrupted(store, run):  # answered as its process died
            console.print(
                t("recovery.answer.interrupted", settings.lang, ask_id=ask.id, run_id=run.id),
                style="yellow",
                markup=False,
            )
    finally:
        store.close()
    if json_answer is not None:
        try:
            value: Any = json.loads(json_answer)
        except ValueError as error:
            raise InvalidAnswerError(f"--json is not valid JSON: {error}") from None
    elif ask.kind == "plan":
        value = (values or [""])[0]
    else:
        value = parse_cli_answers(ask.payload.get("questions", []), values or [])
    import asyncio

    _exit_for(asyncio.run(_answer(settings, ask, run, value, cancel=cancel)))


def _interrupted(store: Store, run: RunRecord) -> bool:
    """The run is neither over nor carried by a live process, and waits on no ask: only `consulta resume` goes on."""
    return (
        run.status in (RunStatus.running, RunStatus.waiting)
        and not run.external
        and not store.run_is_live_elsewhere(run.id)
        and not store.list_asks(run_id=run.id)
    )


def _exit_for(run: RunRecord | None) -> None:
    """A run that failed here (a plan that could not be applied among the causes) is a failed command: exit 1."""
    if run is not None and run.status == RunStatus.failed:
        raise typer.Exit(1)


async def _answer(settings: Settings, ask: AskRecord, run: RunRecord, value: Any, *, cancel: bool) -> RunRecord | None:
    """Answer `ask`, then drive its run here if no other process carries it; the run's end (None: not driven here)."""
    from ._session import TerminalSession

    host = _host_for(run, settings)
    session = TerminalSession(host, principal=run.principal)
    try:
        live_elsewhere = host.store.run_is_live_elsewhere(run.id)
        if not live_elsewhere and not run.external and ask.kind != "plan":  # deciding a plan needs no model
            prepare_model(settings, run.model)
        # The host continues a run whose process is gone (here, as the agent it recorded).
        closed = await (
            host.cancel(ask, principal=session.principal)
            if cancel
            else host.answer(ask, value, principal=session.principal)
        )
        console.print(t("cli.answer.answered", settings.lang, ask_id=closed.id))
        if live_elsewhere or run.external:
            console.print(t("cli.answer.live_elsewhere", settings.lang, owner=run.owner or "?"))
            return None
        console.print(t("cli.answer.resuming", settings.lang, run_id=run.id), style="dim")
        result = await session.turn(run)
        console.print(t("cli.run.status", settings.lang, run_id=run.id, status=result.status.value))
        return result
    finally:
        session.close()
        await host.aclose()


@app.command()
def resume(run_id: RunArg, model: ModelOpt = None, lang: LangOpt = None) -> None:
    """Resume a waiting or interrupted run from its checkpoint (answer its questions here)."""
    from ...runtime import Store

    settings = settings_for(model, lang)
    store = Store(settings.database_url)
    try:
        run = store.get_run(run_id)
    finally:
        store.close()
    prepare_model(settings, run.model)
    import asyncio

    _exit_for(asyncio.run(_resume(settings, run)))


async def _resume(settings: Settings, run: RunRecord) -> RunRecord:
    from ._session import TerminalSession

    host = _host_for(run, settings)
    session = TerminalSession(host, principal=run.principal)
    try:
        await host.resume(run.id, principal=session.principal)
        if session.answers_here:
            for ask in host.asks(principal=session.principal, run_id=run.id):
                session.asks.put_nowait(ask)
        result = await session.turn(run)
        if result.status == RunStatus.waiting:
            for ask in host.asks(principal=session.principal, run_id=run.id):
                console.print(t("cli.chat.deferred", settings.lang, ask_id=ask.id), style="yellow", markup=False)
        console.print(t("cli.run.status", settings.lang, run_id=run.id, status=result.status.value))
        return result
    finally:
        session.close()
        await host.aclose()


@app.command()
def stop(run_id: RunArg, lang: LangOpt = None) -> None:
    """Stop a run: its pending asks close as cancelled (a run live in another process stops within seconds)."""
    from ...runtime import Store
    from .._host import AppHost

    settings = settings_for(lang=lang)
    store = Store(settings.database_url)
    try:
        run = store.get_run(run_id)
    finally:
        store.close()

    async def go() -> RunRecord:
        host = AppHost(app=run.app, settings=settings, options=_options(run), ask_policy="defer")
        try:
            return await host.stop(run_id, principal=run.principal)
        finally:
            await host.aclose()

    import asyncio

    stopped = asyncio.run(go())
    console.print(t("cli.run.status", settings.lang, run_id=run_id, status=stopped.status.value))


@app.command()
def runs(
    status: Annotated[
        str | None, typer.Option(help="Only runs with this status: running, waiting, finished, failed, cancelled")
    ] = None,
    lang: LangOpt = None,
) -> None:
    """List recent runs."""
    from ...runtime import Store
    from ._usage import UsageError

    settings = settings_for(lang=lang)
    statuses = [s.value for s in RunStatus]
    if status is not None and status not in statuses:
        expected = t("cli.usage.expect.choice", settings.lang, choices=", ".join(statuses))
        raise UsageError(key="cli.usage.takes", values={"flag": "--status", "expected": expected})
    store = Store(settings.database_url)
    found = store.list_runs(status=status)
    if not found:
        console.print(t("cli.runs.none", settings.lang), style="dim")
        return
    table = id_table(
        t("cli.runs.title", settings.lang),
        [t(c, settings.lang) for c in ("col.id", "col.app", "col.status", "col.model", "col.created", "col.summary")],
    )
    for run in found:
        table.add_row(run.id, run.app, run.status.value, run.model, run.created_at[:19], (run.prompt or "")[:60])
    console.print(table)
