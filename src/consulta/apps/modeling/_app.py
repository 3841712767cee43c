"""modeling declared for every front end: the Director (its one runtime agent), its options, the workspace as its
data, the web page's timeline, and the terminal's words: a line for each agent as it starts working (the
consultations and gate verdicts show as the Director's `consult` and `gate` calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...i18n import t
from ...runtime import RunStarted, ToolReturned
from .._def import AppDef, AppView, TerminalPart, WebPart
from ._agent import AGENT, ModelingOptions, build_agent, workspace_of_options
from ._problem import load_problem
from ._team import ROLES

__all__ = ["APP", "ModelingFlags"]


class ModelingFlags(BaseModel):
    """The terminal's own flags (not recorded on runs)."""

    quiet: bool = Field(False, description="Do not print a line as each agent of the team starts working")


def _welcome(host: AppView, lang: str) -> str | None:
    """The problem and where its runs' workspaces are; a folder that is not a problem is refused here (ProblemError:
    the terminal says it in one line and exits 2), before any run is recorded."""
    options = host.options
    if not isinstance(options, ModelingOptions) or not options.problem:
        return t("modeling.cli.no_problem", lang)
    load_problem(Path(options.problem))
    return t("modeling.cli.welcome", lang, problem=options.problem, workspace=str(host.data_path))


def _prepare(flags: ModelingFlags, host: Any) -> None:
    """Print who is working (a line when each of the team's agents starts an answer, a nested run of the Director),
    each consultation's record as it is written, and each gate's verdict."""
    if flags.quiet:
        return
    from rich.console import Console

    console = Console(highlight=False)
    lang = host.env.lang

    def hear(event: Any) -> None:
        if isinstance(event, RunStarted) and event.app == "modeling" and event.agent in ROLES and not event.resumed:
            console.print(
                t("modeling.cli.working", lang, agent=event.agent, role=ROLES[event.agent].title),
                style="bold cyan",
                markup=False,
            )
        elif isinstance(event, ToolReturned) and event.tool_name == "gate" and isinstance(event.result, dict):
            result = event.result
            style = {"APPROVED": "bold green", "CONDITIONAL": "bold yellow"}.get(str(result.get("status")), "bold red")
            reasons = "; ".join(result.get("reasons") or [])[:160]
            console.print(
                t(
                    "modeling.cli.verdict",
                    lang,
                    reasons=reasons,
                    **{k: result.get(k) for k in ("gate", "attempt", "status", "decided_by")},
                ),
                style=style,
                markup=False,
            )
        elif (
            isinstance(event, ToolReturned)
            and event.tool_name == "consult"
            and isinstance(event.result, dict)
            and event.result.get("record")
        ):
            console.print(
                t("modeling.cli.consulted", lang, record=event.result["record"], kind=event.result.get("kind", "")),
                style="magenta",
                markup=False,
            )

    host.subscribe(hear)


def _web() -> WebPart:
    from ._web import web_part

    return web_part()


APP = AppDef(
    name="modeling",
    description="a Director-run modeling team whose agents consult each other, on record, to a finished paper (seed 002)",
    agents={AGENT: build_agent},
    main_agent=AGENT,
    options=ModelingOptions,
    data_path=workspace_of_options,
    web=_web,
    terminal=TerminalPart(welcome=_welcome, flags=ModelingFlags, prepare=_prepare),
)
