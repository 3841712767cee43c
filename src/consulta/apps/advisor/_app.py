"""advisor declared for every front end: its one agent, its options, and its front-end parts (the site's web page,
by advisor-site, imported only when the web front end asks for it)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ...i18n import t
from .._def import AppDef, AppView, DesktopPart, McpPart, TerminalPart, WebPart
from ._agent import AGENT, AdvisorOptions, build_agent
from ._catalog import ADVISOR_TABLES
from ._turn import TurnOutput

__all__ = ["APP"]


def _web() -> WebPart:
    from ._web import router  # type: ignore[attr-defined]  # advisor-site's pages and API

    return WebPart(
        static=Path(str(resources.files(__package__).joinpath("static"))),
        styles=("app.css",),
        router=router,
        shared_data="sessions",  # public, read-only advisor data: every session the server issued reads it
    )


def _has_site() -> bool:
    return resources.files(__package__).joinpath("_web.py").is_file()


def _mcp() -> McpPart:
    from ._mcp import INSTRUCTIONS

    return McpPart(instructions=INSTRUCTIONS)


def _welcome(host: AppView, lang: str) -> str | None:
    return t("advisor.cli.welcome", lang)


def _reply(text: str, lang: str) -> str:
    """A turn's `{voice_response, tool_calls}` as a person reads it in the terminal: the words, then each tool call."""
    try:
        output = TurnOutput.model_validate_json(text)
    except ValueError:
        return text
    calls = [f"· {call.tool} {json.dumps(call.params, ensure_ascii=False)}" for call in output.tool_calls]
    return "\n".join([output.voice_response, *calls])


def _desktop() -> DesktopPart:
    from ._desktop import panels, reply_words

    return DesktopPart(panels=panels, reply=reply_words)


APP = AppDef(
    name="advisor",
    description="graduate-advisor ranking site with a voice assistant that fills the form (seed 003)",
    agents={AGENT: build_agent},
    main_agent=AGENT,
    options=AdvisorOptions,
    web=_web if _has_site() else None,
    desktop=_desktop,
    mcp=_mcp,
    terminal=TerminalPart(welcome=_welcome, reply=_reply),
    tables=ADVISOR_TABLES,
)
