"""An app's options (and its terminal-only flags) as command-line flags, read from the pydantic models the app
declares: `--field-name VALUE` per field, its description as help; values validated by the model."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ...apps import AppDef, AppOptions
from ...i18n import t
from ._base import env_lang

__all__ = ["AppFlags", "app_flags", "flags_help"]

_SCALARS: dict[Any, click.ParamType] = {
    str: click.STRING,
    int: click.INT,
    float: click.FLOAT,
    Path: click.Path(path_type=Path),
}


class AppFlags(BaseModel):
    """What the flags said: the app's options, and its terminal-only flags (None when it has none)."""

    model_config = {"arbitrary_types_allowed": True}

    options: AppOptions
    terminal: BaseModel | None = None


def _flag(name: str, info: FieldInfo) -> str | None:
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    flag = extra.get("flag", True)
    if flag is False:
        return None
    return flag if isinstance(flag, str) else "--" + name.replace("_", "-")


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The field's scalar type and whether it is a list (Optional[...] unwrapped)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else str
    if typing.get_origin(annotation) in (list, tuple, Sequence):
        return (typing.get_args(annotation) or (str,))[0], True
    return annotation, False


def _params(model: type[BaseModel]) -> list[tuple[str, click.Option]]:
    params = []
    for name, info in model.model_fields.items():
        flag = _flag(name, info)
        if flag is None:
            continue
        scalar, many = _unwrap(info.annotation)
        if scalar is bool and not many:
            option = click.Option([f"{flag}/--no-{flag[2:]}", name], default=None, help=info.description)
        else:
            option = click.Option(
                [flag, name],
                type=_SCALARS.get(scalar, click.STRING),
                multiple=many,
                default=None,
                help=info.description,
            )
        params.append((name, option))
    return params


def _command(app: AppDef) -> click.Command:
    params = [p for _, p in _params(app.options)]
    if app.terminal.flags is not None:
        params += [p for _, p in _params(app.terminal.flags)]
    return click.Command(name=app.name, params=params, add_help_option=False)


def flags_help(app: AppDef) -> str:
    """The app's flags, one a line, for help texts."""
    return "\n".join(
        f"{' / '.join(p.opts)}: {p.help or ''}" for p in _command(app).params if isinstance(p, click.Option)
    )


def app_flags(app: AppDef, args: Sequence[str]) -> AppFlags:
    """Read `args` (what the command left unparsed) as the app's flags; unknown flags and bad values are a usage
    error naming the flag."""
    command = _command(app)
    try:
        with command.make_context(f"consulta {app.name}", list(args)) as ctx:
            values = {k: v for k, v in ctx.params.items() if v is not None and v != ()}
    except click.UsageError as error:
        raise typer.BadParameter(
            t("cli.bad.app_flag", env_lang(), error=error.format_message(), app=app.name, flags=flags_help(app))
        ) from None
    own = {name for name in app.options.model_fields}
    try:
        options = app.parse_options({k: v for k, v in values.items() if k in own})
        terminal = (
            app.terminal.flags.model_validate({k: v for k, v in values.items() if k not in own})
            if app.terminal.flags
            else None
        )
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise typer.BadParameter(problems) from None
    return AppFlags(options=options, terminal=terminal)
