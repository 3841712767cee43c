"""modeling declared for every front end: the Director (its one runtime agent), its options, the workspace as its
data, the web page's timeline, and the terminal's words: a line for each agent as it starts working (the
consultations and gate verdicts as their records are written)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...i18n import t
from ...runtime import ConsultaError, RunEnded, RunStarted
from .._def import AppDef, AppView, DesktopPart, TerminalPart, WebPart
from ._agent import AGENT, ModelingOptions, build_agent, workspace_of_options
from ._gates import read_validation_record
from ._problem import load_problem, run_workspace
from ._team import ROLES

__all__ = ["APP", "ModelingFlags"]


class ModelingFlags(BaseModel):
    """The terminal's own flags (not recorded on runs)."""

    quiet: bool = Field(False, description="Do not print a line as each agent of the team starts working")


def _check_options(options: ModelingOptions) -> None:
    """A `--problem` folder that is not a problem is refused here (ProblemError: one line in the person's language,
    exit 2) before any front end starts or any run is recorded. No `--problem` is not refused: the page takes a
    problem per session, and the terminal's welcome says that one is needed."""
    if options.problem:
        load_problem(Path(options.problem))


def _welcome(host: AppView, lang: str) -> str | None:
    """The problem (checked before the session started: `_check_options`) and where its runs' workspaces are."""
    options = host.options
    if not isinstance(options, ModelingOptions) or not options.problem:
        return t("modeling.cli.no_problem", lang)
    return t("modeling.cli.welcome", lang, problem=options.problem, workspace=str(host.data_path))


def _prepare(flags: ModelingFlags, host: Any) -> None:
    """Print who is working (a line when each of the team's agents starts an answer, a nested run of the Director),
    and each consultation record and gate verdict once it is on record in the run's workspace (read from the files,
    the record's truth, as the page's timeline reads them: the Director's records are no tool calls)."""
    if flags.quiet:
        return
    from rich.console import Console

    console = Console(highlight=False)
    lang = host.env.lang
    told: set[Path] = set()

    def tell_records(run_id: str) -> None:
        workspace = _workspace_of(host, run_id)
        if workspace is None:
            return
        fresh = [p for p in sorted((workspace / "validation").glob("*.md"), key=_written) if p not in told]
        fresh += [p for p in sorted((workspace / "consultation").glob("*.md"), key=_written) if p not in told]
        for path in sorted(fresh, key=_written):
            told.add(path)
            line = _record_line(path, workspace, lang)
            if line is not None:
                console.print(line[0], style=line[1], markup=False)

    def hear(event: Any) -> None:
        if isinstance(event, RunStarted | RunEnded) and getattr(event, "app", "modeling") == "modeling":
            tell_records(event.run_id)  # what the Director put on record since the last member's start or end
        if isinstance(event, RunStarted) and event.app == "modeling" and event.agent in ROLES and not event.resumed:
            console.print(
                t("modeling.cli.working", lang, agent=event.agent, role=ROLES[event.agent].title),
                style="bold cyan",
                markup=False,
            )

    host.subscribe(hear)


def _written(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _workspace_of(host: Any, run_id: str) -> Path | None:
    """The workspace of the Director's run that `run_id` is (or is a member's run of), if it is one of modeling's."""
    try:
        run = host.env.store.get_run(run_id)
        if run.parent_run_id:
            run = host.env.store.get_run(run.parent_run_id)
        if run.app != "modeling" or host.data_path is None:
            return None
        return run_workspace(Path(host.data_path), run.thread_id)
    except (ConsultaError, ValueError):
        return None


_KIND = re.compile(r"^\| 类型 \| (.+) \|$", re.M)


def _record_line(path: Path, workspace: Path, lang: str) -> tuple[str, str] | None:
    """The terminal's line (and style) for a record of the workspace: a gate's verdict or a consultation."""
    relative = path.relative_to(workspace).as_posix()
    try:
        if path.parent.name == "validation":
            verdict = read_validation_record(path)
            style = {"APPROVED": "bold green", "CONDITIONAL": "bold yellow"}.get(verdict.status, "bold red")
            values = verdict.model_dump(include={"gate", "attempt", "status", "decided_by"})
            return t("modeling.cli.verdict", lang, reasons="; ".join(verdict.reasons)[:160], **values), style
        kind = _KIND.search(path.read_text(encoding="utf-8"))
        return t("modeling.cli.consulted", lang, record=relative, kind=kind.group(1) if kind else ""), "magenta"
    except (OSError, ValueError):
        return None


def _web() -> WebPart:
    from ._web import web_part

    return web_part()


def _desktop() -> DesktopPart:
    from ._desktop import panels

    return DesktopPart(panels=panels)


APP = AppDef(
    name="modeling",
    description="a Director-run modeling team whose agents consult each other, on record, to a finished paper (seed 002)",
    agents={AGENT: build_agent},
    main_agent=AGENT,
    options=ModelingOptions,
    check_options=_check_options,
    data_path=workspace_of_options,
    web=_web,
    desktop=_desktop,
    terminal=TerminalPart(welcome=_welcome, flags=ModelingFlags, prepare=_prepare),
)
