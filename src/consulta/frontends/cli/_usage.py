"""What a person typed wrong on the command line, said in one line in their language: an unknown flag with the near
match among every flag that applies (the command's and the app's), a value that does not fit its flag, a language
Consulta does not speak. Click's and pydantic's own wording ("Value error, …", usage boxes) never reaches them."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click
from typer._click import exceptions as typer_errors  # Typer parses with its own copy of click

from ...i18n import LANGUAGES, t
from ...runtime import ConsultaError

__all__ = [
    "CLICK_ERRORS",
    "UsageError",
    "bad_value",
    "check_lang",
    "from_click",
    "no_such_command",
    "no_such_flag",
    "option_flags",
]

CLICK_ERRORS = (click.ClickException, typer_errors.ClickException)
_NO_SUCH = (click.NoSuchOption, typer_errors.NoSuchOption)
_MISSING = (click.MissingParameter, typer_errors.MissingParameter)
_BAD = (click.BadParameter, typer_errors.BadParameter)
_NEEDS_VALUE = (click.BadOptionUsage, typer_errors.BadOptionUsage)
_USAGE = (click.UsageError, typer_errors.UsageError)


class UsageError(ConsultaError):
    """A command line that cannot be used as typed (exit code 2, one line)."""


def option_flags(params: Iterable[Any]) -> list[str]:
    """The long flags of `params` (click's or Typer's; `--port`, `--no-x` too), in order."""
    flags: list[str] = []
    for param in params:
        flags += [o for o in (*param.opts, *getattr(param, "secondary_opts", ())) if o.startswith("--")]
    return flags


def _near(typed: str, known: Sequence[str]) -> list[str]:
    """The known words nearest to `typed`: the best, and a second only when it is about as near (`--prot`: `--port`,
    not `--host` too)."""
    scored = sorted(
        ((difflib.SequenceMatcher(None, typed, word).ratio(), word) for word in dict.fromkeys(known)), reverse=True
    )
    scored = [(score, word) for score, word in scored if score >= 0.6]
    return [word for score, word in scored[:2] if score >= scored[0][0] - 0.05]


def no_such_flag(flag: str, flags: Sequence[str]) -> UsageError:
    """`flag` is none of `flags`: the nearest ones suggested, all of them listed (no flags: they follow a command)."""
    if not flags:
        return UsageError(key="cli.usage.flag_before_command", values={"flag": flag})
    near = _near(flag, flags)
    values = {"flag": flag, "near": " / ".join(near), "flags": ", ".join(flags)}
    return UsageError(key="cli.usage.no_such_flag_near" if near else "cli.usage.no_such_flag", values=values)


def no_such_command(name: str, commands: Sequence[str]) -> UsageError:
    """`name` is none of `commands` (`consulta`'s and the apps'): the nearest suggested, all of them listed."""
    near = _near(name, commands)
    values = {"name": name, "near": " / ".join(near), "commands": ", ".join(commands)}
    return UsageError(key="cli.usage.no_such_command_near" if near else "cli.usage.no_such_command", values=values)


def bad_value(flag: str, problem: str) -> UsageError:
    return UsageError(key="cli.usage.bad_value", values={"flag": flag, "problem": problem})


def check_lang(lang: str | None) -> None:
    """Refuse a `--lang` Consulta has no words for (`zh`, `zh_CN`, `EN` are fine)."""
    if lang is None:
        return
    spelled = lang.replace("_", "-").lower()
    if spelled not in {code.lower() for code in LANGUAGES} and spelled not in ("zh", "zh-hans"):
        raise UsageError(key="cli.usage.lang", values={"asked": lang, "langs": ", ".join(LANGUAGES)})


def _expected(param: Any, lang: str) -> str:
    """What `param` (click's, or Typer's, which keeps its annotation) takes, in words."""
    kind = getattr(param, "type", None)
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    low, high = getattr(param, "min", getattr(kind, "min", None)), getattr(param, "max", getattr(kind, "max", None))
    choices = getattr(descriptor, "choices", None) or getattr(kind, "choices", None)
    if typing.get_origin(annotation) is not None:
        annotation = next((a for a in typing.get_args(annotation) if a is not type(None)), annotation)
    if choices:
        return t("cli.usage.expect.choice", lang, choices=", ".join(map(str, choices)))
    if annotation is int or isinstance(kind, click.types.IntParamType):
        if low is not None and high is not None:
            return t("cli.usage.expect.int_range", lang, low=low, high=high)
        return t("cli.usage.expect.int", lang)
    if annotation is float or isinstance(kind, click.types.FloatParamType):
        return t("cli.usage.expect.number", lang)
    if annotation is Path or isinstance(kind, click.Path):
        return t("cli.usage.expect.path", lang)
    return t("cli.usage.expect.text", lang)


def from_click(error: Exception, lang: str, *, flags: Sequence[str] = ()) -> UsageError | None:
    """The person's line for a usage error click (or Typer's click) found while parsing (None: its own words will
    do)."""
    if isinstance(error, _NO_SUCH):
        context = getattr(error, "ctx", None)
        known = option_flags(context.command.params) if context is not None else []  # the command's, all of them
        return no_such_flag(error.option_name, flags or known or error.possibilities or ())
    if isinstance(error, _MISSING):
        param = error.param
        flags = option_flags([param]) if param is not None and param.param_type_name == "option" else []
        name = flags[0] if flags else (param.metavar or (param.name or "").upper()) if param is not None else ""
        return UsageError(key="cli.usage.missing", values={"name": name})
    if isinstance(error, _BAD):
        param = error.param
        if param is None:  # raised by a command's own check, already in the person's words
            return UsageError(error.message)
        flag = (option_flags([param]) or [getattr(param, "human_readable_name", "") or ""])[0] if param else ""
        return UsageError(key="cli.usage.takes", values={"flag": flag, "expected": _expected(param, lang)})
    if isinstance(error, _NEEDS_VALUE) and error.option_name:
        return UsageError(key="cli.usage.needs_value", values={"flag": error.option_name})
    if isinstance(error, _USAGE) and error.message.startswith("Got unexpected extra argument"):
        extra = error.message.rpartition(" (")[2].rstrip(")")
        return UsageError(key="cli.usage.extra", values={"extra": extra})
    return None
