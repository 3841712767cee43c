"""Message catalogs for everything a person reads: `en` and `zh-CN` (the seed's `ai.question.*` keys included)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["LANGUAGES", "catalog", "normalize_lang", "t"]

LANGUAGES = ("en", "zh-CN")


def normalize_lang(lang: str | None) -> str:
    """`zh`, `zh_CN`, `zh-cn` → `zh-CN`; anything else → `en`."""
    if lang and lang.replace("_", "-").lower().startswith("zh"):
        return "zh-CN"
    return "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    text = resources.files(__package__).joinpath(f"{normalize_lang(lang)}.json").read_text(encoding="utf-8")
    return json.loads(text)


def t(key: str, lang: str = "en", **values: Any) -> str:
    """The message `key` in `lang`, formatted with `values`. A missing key raises KeyError (tests check both catalogs)."""
    text = catalog(normalize_lang(lang))[key]
    return text.format(**values) if values else text
