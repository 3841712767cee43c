"""Apps' own terminal commands, `consulta <app> <command>`: the `consulta` group finds a name it does not know among
the apps, and mounts that app's commands (`TerminalPart.commands`, a Typer) there — built only when asked for, and
never in place of one of `consulta`'s own commands."""

from __future__ import annotations

from typing import Any

import click
import typer
from typer._click import exceptions as typer_errors  # Typer parses with its own copy of click
from typer.core import TyperGroup

from ...apps import app_names, get_app

__all__ = ["WithAppCommands"]


def app_commands(name: str) -> click.Command | None:
    """App `name`'s commands as one click group named after it, or None (no such app, or it has none). Built anew
    each time: an app registered again brings its own."""
    if name not in app_names():
        return None
    app_def = get_app(name)
    if app_def.terminal.commands is None:
        return None
    group = typer.main.get_group(app_def.terminal.commands())  # a group even when the app has one command
    group.name = name
    group.help = group.help or app_def.description
    return _lang_checked(group)


def _lang_checked(command: Any) -> Any:
    """Each `--lang` of an app's commands refuses a language Consulta does not speak, as `consulta`'s own do."""
    from ._usage import check_lang

    def check(ctx: Any, param: Any, value: Any) -> Any:
        check_lang(value)
        return value

    for param in command.params:
        if "--lang" in getattr(param, "opts", ()) and param.callback is None:
            param.callback = check
    for sub in getattr(command, "commands", {}).values():
        if sub is not command:
            _lang_checked(sub)
    return command


def quiet_metavars(command: Any) -> Any:
    """No type or range shown in `command`'s help (`<bool>`, `<str>`, `<int range> [0<=x<=65535]`): each option's and
    argument's help says what it takes, in words (a `<bool>` after a switch reads as if it took a value)."""

    def quiet(param: Any) -> Any:
        kind = getattr(param, "param_type_name", "")
        if kind == "option":
            param.metavar = ""
        if kind == "argument":
            param.display_type_rich = lambda ctx: None
        if kind in ("option", "argument"):
            param._get_number_range_help_str = lambda: None
        return param

    for param in command.params:
        quiet(param)
    for sub in getattr(command, "commands", {}).values():  # an app's group: its commands' help too
        if sub is not command:
            quiet_metavars(sub)
    if not getattr(command, "_quiet_help", False):
        given = command.get_help_option

        def get_help_option(ctx: Any) -> Any:
            option = given(ctx)
            return quiet(option) if option is not None else None

        command.get_help_option = get_help_option  # type: ignore[method-assign]
        command._quiet_help = True  # type: ignore[attr-defined]
    return command


class WithAppCommands(TyperGroup):
    """`consulta`'s commands, then each app's own under the app's name.

    Only `consulta APP …` imports app APP: the help lists `consulta`'s own commands and names the apps (which of them
    has commands is known once an app is imported, and importing every app costs seconds)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name) or app_commands(cmd_name)
        return quiet_metavars(command) if command is not None else None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """A name that is no command: said in one line, with the nearest among `consulta`'s commands and the apps
        (an unknown flag before the command is the parser's, raised as it is)."""
        try:
            return super().resolve_command(ctx, args)
        except (click.NoSuchOption, typer_errors.NoSuchOption):
            raise
        except (click.UsageError, typer_errors.UsageError):
            if not args or args[0].startswith("-"):
                raise
            from ._lang import messages_lang
            from ._usage import UsageError, no_such_command

            name = args[0]
            worded = (
                UsageError(key="cli.usage.app_without_commands", values={"name": name})
                if name in app_names()  # an app, but one without commands of its own
                else no_such_command(name, [*self.list_commands(ctx), *app_names()])
            )
            # click's own kind of error, so that a caller in click's standalone mode says it too (exit 2)
            raise typer_errors.UsageError(worded.localized(messages_lang()), ctx=ctx) from None

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        quiet_metavars(self)
        self.epilog = (
            f"An app's own commands: consulta APP COMMAND (consulta APP --help). Apps: {', '.join(app_names())}."
        )
        super().format_help(ctx, formatter)
