"""A tool call as a person reads it: the step in their words, from the app's catalog — the same words the web page
uses (`static/js/chat.js` `stepWords`).

An app declares `<app>.step.<tool>` (a phrase) and may declare `<app>.step.<tool>.detail` with `{arg}` placeholders,
used when the call has every one of those arguments; an argument's value may have words of its own
(`<app>.step.value.<value>`). A tool without words is "working on it": its name is for developers, never the step.
"""

from __future__ import annotations

import re
from typing import Any

from ..i18n import catalog, t

__all__ = ["step_time", "step_words"]

_PLACEHOLDER = re.compile(r"{(\w+)}")


def step_words(app: str, tool: str, args: Any, lang: str) -> str:
    """What the call of `tool` with `args` is doing, in `lang`."""
    words = catalog(lang)
    detail = words.get(f"{app}.step.{tool}.detail")
    if detail is not None and isinstance(args, dict):
        values: dict[str, str] = {}
        for name in _PLACEHOLDER.findall(detail):
            value = args.get(name)
            if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
                value = t("web.list_separator", lang).join(str(v) for v in value)
            if value is None or value == "" or isinstance(value, dict | list | bool):
                break
            values[name] = words.get(f"{app}.step.value.{value}", str(value))
        else:
            return detail.format(**values)
    return words.get(f"{app}.step.{tool}", t("web.step.generic", lang))


def step_time(duration_ms: float, lang: str) -> str:
    """How long a step took, as the page says it ("0.3 s", "12 s")."""
    value = max(duration_ms, 0.0) / 1000
    return t("web.step.seconds", lang, seconds=f"{value:.1f}" if value < 10 else str(round(value)))
