"""quiz declared for every front end: its agent (Mode 1 and Mode 2), options, MCP part and terminal words. The web
page and `consulta quiz take` are where a person takes an adaptive test (`_web`, `_take_cli`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...i18n import t
from .._def import AppDef, AppEnv, AppView, DesktopPart, McpPart, TerminalPart, WebPart
from ._agent import AGENT, QuizOptions, build_agent
from ._bank import bank_items
from ._db import QUIZ_TABLES

__all__ = ["APP"]


def _data(options: QuizOptions, env: AppEnv) -> Path:
    return env.data_dir


def _welcome(host: AppView, lang: str) -> str | None:
    return t("quiz.cli.welcome", lang, items=len(bank_items()), path=str(host.data_path))


def _web() -> WebPart:
    from ._web import web_part

    return web_part()


def _commands() -> Any:
    from ._take_cli import commands

    return commands()


def _mcp() -> McpPart:
    from ._mcp import INSTRUCTIONS, tools

    return McpPart(instructions=INSTRUCTIONS, tools=tools)


def _desktop() -> DesktopPart:
    from ._desktop import panels

    return DesktopPart(panels=panels)


APP = AppDef(
    name="quiz",
    description="adaptive test generation and auto-scoring: the six tools, Mode 1 and Mode 2 (seed 004)",
    agents={AGENT: build_agent},
    main_agent=AGENT,
    options=QuizOptions,
    data_path=_data,
    web=_web,
    desktop=_desktop,
    mcp=_mcp,
    terminal=TerminalPart(welcome=_welcome, commands=_commands),
    tables=QUIZ_TABLES,
)
