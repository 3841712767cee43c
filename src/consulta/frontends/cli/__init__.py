"""The `consulta` command: chat with an app in the terminal (a session on `AppHost`, like every front end), serve it
on the web, the desktop or MCP, list and answer asks, resume and stop runs.

One module per command group: `_apps` (chat, serve, desktop, mcp), `_runs` (asks, answer, runs, resume, stop),
`_info` (apps, tools, models, consultations); `_base` holds what they share, `_session` the terminal session. An app's
own commands are `consulta <app> <command>` (`_app_commands`: from the app's `TerminalPart.commands`).
"""

from __future__ import annotations

import os

from ...runtime import ConsultaError
from . import _apps, _info, _runs  # noqa: F401 - each registers its commands on `app`
from ._base import app, fail, new_command

__all__ = ["app", "main"]


def main() -> None:
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # the engine's advertising banner is noise in our terminal
    new_command()
    try:
        app()
    except ConsultaError as error:
        fail(error)
