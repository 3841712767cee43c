"""The `consulta` command: chat with an app in the terminal (a session on `AppHost`, like every front end), serve it
on the web, the desktop or MCP, list and answer asks, resume and stop runs.

One module per command group: `_apps` (chat, serve, desktop, mcp), `_runs` (asks, answer, runs, resume, stop),
`_info` (apps, tools, models, consultations); `_base` holds what they share, `_session` the terminal session. An app's
own commands are `consulta <app> <command>` (`_app_commands`: from the app's `TerminalPart.commands`).
"""

from __future__ import annotations

import os
import sys

import click
import typer
from typer._click import exceptions as typer_errors

from ...runtime import ConsultaError
from . import _apps, _info, _runs  # noqa: F401 - each registers its commands on `app`
from ._base import app, console, fail, messages_lang, new_command
from ._usage import CLICK_ERRORS, UsageError, from_click

__all__ = ["app", "main"]


def main() -> None:
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # the engine's advertising banner is noise in our terminal
    new_command(sys.argv[1:])
    try:
        # Not click's standalone mode: a mistyped command line is said here, in one line in the person's language.
        code = app(standalone_mode=False)
    except ConsultaError as error:
        fail(error)
    except (click.exceptions.NoArgsIsHelpError, typer_errors.NoArgsIsHelpError) as error:
        console.print(error.format_message(), markup=False, highlight=False)
        raise SystemExit(2) from None
    except CLICK_ERRORS as error:
        fail(from_click(error, messages_lang()) or UsageError(error.format_message()))
    except (click.Abort, typer.Abort):
        raise SystemExit(1) from None
    raise SystemExit(code if isinstance(code, int) else 0)
