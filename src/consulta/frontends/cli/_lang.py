"""The language the terminal tells a person what went wrong in: `--lang` on the command line once seen, the
command's settings once read, else `CONSULTA_LANG`. One state per process (a command is a process)."""

from __future__ import annotations

import os

from ...i18n import normalize_lang

__all__ = ["choose_lang", "env_lang", "messages_lang", "new_command"]


def env_lang() -> str:
    """The language for messages given before the settings are read (`CONSULTA_LANG`)."""
    return normalize_lang(os.environ.get("CONSULTA_LANG"))


_chosen_lang: str | None = None
"""The language of the command's settings, once read (`--lang`, else `CONSULTA_LANG`)."""


def new_command(argv: list[str] | None = None) -> None:
    """A command starts: its language is the `--lang` among `argv` when it names one Consulta speaks (so that even
    a mistyped command line is answered in it), else not known until its settings are read."""
    global _chosen_lang
    _chosen_lang = None
    args = argv or []
    for i, arg in enumerate(args):
        value = (
            arg.partition("=")[2]
            if arg.startswith("--lang=")
            else args[i + 1]
            if arg == "--lang" and i + 1 < len(args)
            else None
        )
        if value is not None and value.replace("_", "-").lower().startswith(("en", "zh")):
            _chosen_lang = normalize_lang(value)


def messages_lang() -> str:
    """The language to tell the person what went wrong in: the command's (`--lang`) once its settings are read, else
    `CONSULTA_LANG`."""
    return _chosen_lang or env_lang()


def choose_lang(lang: str) -> str:
    """The command's language from now on (`messages_lang`), normalised; returned."""
    global _chosen_lang
    _chosen_lang = normalize_lang(lang)
    return _chosen_lang
