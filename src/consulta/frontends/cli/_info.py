"""The commands that describe what is here: `apps`, `tools` of an app, `models`, and the expert `consultations` on
record."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ...apps import app_names, get_app
from ...i18n import t
from ._base import LangOpt, app, console, settings_for
from ._tables import id_table

# What each command needs (the runtime, an app, the models, rich's markdown) is imported by the command itself.

__all__ = ["apps", "consultations", "models", "tools"]


@app.command()
def apps() -> None:
    """List the apps this installation serves."""
    for name in app_names():
        console.print(f"[bold]{name}[/bold]: {get_app(name).description}")


@app.command()
def tools(
    app_name: Annotated[str, typer.Argument(metavar="APP", help="The app (`consulta apps` lists them)")],
    schema: Annotated[bool, typer.Option("--schema", help="Print the OpenAI function-calling schemas as JSON")] = False,
) -> None:
    """List an app's tools (`--schema`: OpenAI function-calling format, the seed's tool_schemas())."""
    import asyncio

    from ...runtime import tool_schemas
    from .._host import AppHost

    async def main_agent_tools() -> list[dict]:
        host = AppHost(app=app_name, settings=settings_for(), ask_policy="defer")
        try:
            return tool_schemas(host.agent)
        finally:
            await host.aclose()

    schemas = asyncio.run(main_agent_tools())
    if schema:
        sys.stdout.write(json.dumps(schemas, ensure_ascii=False, indent=2) + "\n")
        return
    for s in schemas:
        console.print(f"[bold]{s['function']['name']}[/bold] ({s['x-consulta-kind']}): {s['function']['description']}")


@app.command()
def models(lang: LangOpt = None) -> None:
    """List the model backends, which can be used here, and the default."""
    from rich.table import Table

    from ...models import available_models

    settings = settings_for(lang=lang)
    table = Table()
    for col in ("col.spec", "col.description", "col.available", "col.note"):
        table.add_column(t(col, settings.lang))
    for info in available_models():
        spec = info.spec + (" *" if info.spec == settings.model else "")
        table.add_row(spec, info.description, t("cli.yes" if info.available else "cli.no", settings.lang), info.note)
    console.print(table)
    console.print(t("cli.models.default", settings.lang, model=settings.model))


@app.command()
def consultations(
    consultation_id: Annotated[
        str | None, typer.Argument(metavar="ID", help="Show this consultation's full record")
    ] = None,
    run: Annotated[str | None, typer.Option("--run", help="Only the consultations of this run")] = None,
    lang: LangOpt = None,
) -> None:
    """List the expert consultations on record (seed 000's ledger), or show one as its markdown record."""
    from rich.markdown import Markdown

    from ...asks import consultation_markdown
    from ...runtime import Store

    settings = settings_for(lang=lang)
    store = Store(settings.database_url)
    if consultation_id is not None:
        console.print(Markdown(consultation_markdown(store.get_consultation(consultation_id), lang=settings.lang)))
        return
    rows = store.list_consultations(run_id=run)
    if not rows:
        console.print(t("cli.consultations.none", settings.lang))
        return
    columns = ("col.id", "col.run", "col.expert", "col.output_type", "col.status", "col.rules", "col.created")
    table = id_table(t("cli.consultations.title", settings.lang), [t(c, settings.lang) for c in columns], ids=2)
    for c in rows:
        rules = ", ".join(r["rule_name"] for r in c.binding_rules)
        table.add_row(
            c.id,
            c.run_id or "-",
            c.expert_id,
            c.request.get("expected_output_type", ""),
            c.status,
            rules or "-",
            c.started_at[:19],
        )
    console.print(table)
