"""An app's options (and its terminal-only flags) as command-line flags, read from the pydantic models the app
declares: `--field-name VALUE` per field, its description as help; values validated by the model."""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ...apps import AppDef, AppOptions
from ...i18n import t
from ._base import messages_lang
from ._usage import UsageError, bad_value, from_click, no_such_flag, option_flags

__all__ = ["AppFlags", "app_flag_names", "app_flags", "flags_help"]


class _FiniteFloat(click.types.FloatParamType):
    """A number, never `inf` or `nan` (a timeout of `inf` would be a wait without end)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


_SCALARS: dict[Any, click.ParamType] = {
    str: click.STRING,
    int: click.INT,
    float: _FiniteFloat(),
    Path: click.Path(path_type=Path),
}

_BOUNDS = {
    "greater_than": ("gt", "cli.usage.expect.gt"),
    "greater_than_equal": ("ge", "cli.usage.expect.ge"),
    "less_than": ("lt", "cli.usage.expect.lt"),
    "less_than_equal": ("le", "cli.usage.expect.le"),
}
"""A value past a field's bound, as pydantic names it: the bound's name in the error's context, and the words for
what the flag takes."""


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


def app_flag_names(app: AppDef) -> list[str]:
    """The app's long flags (its options' and its terminal-only ones), in order."""
    return option_flags(_command(app).params)


def app_flags(app: AppDef, args: Sequence[str], *, command_flags: Sequence[str] = ()) -> AppFlags:
    """Read `args` (what the command left unparsed) as the app's flags. An unknown flag, or a value that does not fit
    its flag, is a `UsageError`: one line in the person's language, suggesting the nearest of `command_flags` (the
    command's own) and the app's flags."""
    command = _command(app)
    lang = messages_lang()
    try:
        with command.make_context(f"consulta {app.name}", list(args)) as ctx:
            values = {k: v for k, v in ctx.params.items() if v is not None and v != ()}
    except click.NoSuchOption as error:
        raise no_such_flag(error.option_name, [*command_flags, *option_flags(command.params)]) from None
    except click.UsageError as error:
        worded = from_click(error, lang)
        raise (worded or UsageError(error.format_message())) from None
    own = {name for name in app.options.model_fields}
    try:
        options = app.parse_options({k: v for k, v in values.items() if k in own})
        terminal = (
            app.terminal.flags.model_validate({k: v for k, v in values.items() if k not in own}, context={"lang": lang})
            if app.terminal.flags
            else None
        )
    except ValidationError as error:
        first = error.errors()[0]
        names = {p.name: option_flags([p])[0] for p in command.params if isinstance(p, click.Option)}
        flag = names.get(str(first["loc"][0]) if first["loc"] else "", str(first["loc"][0]) if first["loc"] else "")
        raise _worded(flag, first, lang) from None
    return AppFlags(options=options, terminal=terminal)


def _worded(flag: str, error: Any, lang: str) -> UsageError:
    """The person's line for pydantic's `error` about `flag`'s value (never pydantic's wording)."""
    context = error.get("ctx") or {}
    cause = context.get("error")
    if isinstance(cause, ValueError):  # a validator's own message, written for people
        return bad_value(flag, str(cause))
    if error["type"] in _BOUNDS:
        name, key = _BOUNDS[error["type"]]
        limit = context[name]
        limit = int(limit) if isinstance(limit, float) and limit.is_integer() else limit  # 0, not 0.0
        return UsageError(key="cli.usage.takes", values={"flag": flag, "expected": t(key, lang, limit=limit)})
    return UsageError(key="cli.usage.does_not_fit", values={"flag": flag, "value": error.get("input")})
