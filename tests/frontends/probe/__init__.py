"""A test-only app, `probe`, declared entirely here: two agents over the scripted model (the planner notes the request,
then hands the turn to the speaker), an option (`--motto`), its data file, and a part of every front end — a web
route, page panel and script, a desktop panel, an MCP instruction and extra tool, a terminal welcome. The front ends
serve it with no edit under frontends/ (see test_any_app.py)."""

# (No `from __future__ import annotations`: FastAPI reads the probe route's annotations, the kit's types.)

import json
from pathlib import Path
from typing import Any

from pydantic import Field

from consulta.apps import (
    AppDef,
    AppEnv,
    AppOptions,
    AppView,
    DesktopKit,
    DesktopPanel,
    DesktopPart,
    Handover,
    McpPart,
    TerminalPart,
    WebKit,
    WebPart,
)
from consulta.runtime import Agent, RunRecord, ToolDef

STATIC = Path(__file__).parent / "static"
PLANNER = "You are the probe planner."
SPEAKER = "You are the probe speaker."
SCRIPT = {
    "agents": [
        {
            "when": PLANNER,
            "steps": [{"tool_calls": [{"name": "note", "args": {"text": "hello"}}]}, {"text": "planned"}],
        },
        {"when": SPEAKER, "steps": [{"text": "Spoken!"}]},
    ]
}


class ProbeOptions(AppOptions):
    motto: str = Field("carry on", description="The probe's motto")
    tone: str | None = Field(None, json_schema_extra={"flag": False})
    """Set by the hand-over for the speaker."""


def note(text: str) -> dict[str, Any]:
    """Note what the user asked.

    Args:
        text: What to note.
    """
    return {"ok": True, "noted": text}


def _data(options: ProbeOptions, env: AppEnv) -> Path:
    path = env.data_dir / "probe.txt"
    if not path.exists():
        path.write_text(options.motto, encoding="utf-8")
    return path


def _planner(options: ProbeOptions, env: AppEnv) -> Agent:
    _data(options, env)
    return Agent(
        app="probe",
        name="planner",
        instructions=PLANNER,
        tools=(ToolDef(name="note", function=note, description="Note what the user asked."),),
        question_timeout=options.question_timeout,
        options=options.model_dump(mode="json"),
    )


def _speaker(options: ProbeOptions, env: AppEnv) -> Agent:
    return Agent(app="probe", name="speaker", instructions=SPEAKER, tools=(), options=options.model_dump(mode="json"))


def _follow_up(run: RunRecord, env: AppEnv) -> Handover | None:
    if (getattr(run, "agent", "") or "planner") != "planner":
        return None
    return Handover(agent="speaker", prompt=f"Say what the planner said: {run.output}", options={"tone": "loud"})


def _router(kit: WebKit) -> Any:
    from fastapi import APIRouter

    router = APIRouter(prefix="/api/probe", responses=kit.responses)

    @router.get("/motto")
    async def motto(host: kit.host, _: kit.principal) -> dict[str, str]:  # type: ignore[name-defined]
        return {"motto": host.options.motto, "data": host.data_path.read_text(encoding="utf-8")}

    return router


def _panels(kit: DesktopKit) -> list[DesktopPanel]:
    from PySide6.QtWidgets import QLabel

    heard: list[str] = []
    label = QLabel(kit.host.options.motto if kit.host is not None else "")
    label.setObjectName("probe-motto")
    label.heard = heard  # type: ignore[attr-defined]
    return [
        DesktopPanel(
            widget=label,
            title=kit.host.options.motto if kit.host else "",
            placement="tab",
            on_event=lambda e: heard.append(e.type),
        )
    ]


def _mcp_tools(host: AppView) -> list[ToolDef]:
    def motto() -> dict[str, Any]:
        """The probe's motto."""
        return {"ok": True, "motto": host.options.motto}  # type: ignore[attr-defined]

    return [ToolDef(name="motto", function=motto, description="The probe's motto.")]


PROBE = AppDef(
    name="probe",
    description="a test-only app",
    agents={"planner": _planner, "speaker": _speaker},
    main_agent="planner",
    options=ProbeOptions,
    data_path=_data,
    follow_up=_follow_up,
    web=lambda: WebPart(static=STATIC, styles=("app.css",), router=_router),
    desktop=lambda: DesktopPart(panels=_panels),
    mcp=lambda: McpPart(instructions="\nProbe over MCP: call motto first.\n", tools=_mcp_tools),
    terminal=TerminalPart(welcome=lambda host, lang: f"probe data {host.data_path}"),
)


def write_script(folder: Path) -> Path:
    path = folder / "probe_script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return path
