"""Message catalogs for everything a person reads: `en` and `zh-CN` (the seed's `ai.question.*` keys included).

Each language is a folder of JSON files, one per area (`core.json`: shared and seed keys, `asks.json`, `claims.json`, `cli.json`,
`web.json`, `qt.json`, `mcp.json`) and one per app (`ln2.json`, `tutor.json`: its words on every front end, e.g.
`ln2.web.*`, `ln2.qt.*`, `ln2.cli.*`), merged into one catalog; a key defined twice is an error.

A front end's generic words may be given by an app in its own words: `t_app(app, key)` reads `<app>.<key>` when the
app's catalog has it, else the app-neutral `key` (the web page does the same in static/js/i18n.js).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "LANGUAGES",
    "ZH_NUMERALS",
    "PerLanguage",
    "catalog",
    "chinese_number",
    "han_count",
    "has_chinese",
    "language_name",
    "simplified",
    "normalize_lang",
    "t",
    "t_app",
    "unaccented",
    "writes_chinese",
]


@dataclass(frozen=True)
class PerLanguage:
    """A placeholder's value said differently in each language ("cell line 'HeLa'" / "「HeLa」"): `t` puts the
    words of its language in (the English ones where it has none)."""

    words: Mapping[str, str]

    def said_in(self, lang: str) -> str:
        return self.words.get(normalize_lang(lang), self.words.get("en", ""))


LANGUAGES = ("en", "zh-CN")


def normalize_lang(lang: str | None) -> str:
    """`zh`, `zh_CN`, `zh-cn` → `zh-CN`; anything else → `en`."""
    if lang and lang.replace("_", "-").lower().startswith("zh"):
        return "zh-CN"
    return "en"


_HAN = re.compile(r"[\u4e00-\u9fff]")  # the CJK Unified Ideographs: the characters Chinese text is written in


def has_chinese(text: str | None) -> bool:
    """Whether `text` holds a Chinese character (how the apps and the runtime tell Chinese words from others)."""
    return bool(text and _HAN.search(text))


_TRADITIONAL = (
    "復甦凍號個幾還這裡裏們麼麽嗎丟棄記錄銷刪設對應該請幫給將從後種釋細醫驗實預數組齊為標籤汙報廢餘開關壞處爛轉動錯誤說問題"
    "間時點發現無與盤儲擺讓準備寫過來張兩東於著樣總計製體條類鏈黴桿質園區層學課長僅單雙盒隻罈罐層凱蘇維達貼碼則"
)
_SIMPLIFIED = (
    "复苏冻号个几还这里里们么么吗丢弃记录销删设对应该请帮给将从后种释细医验实预数组齐为标签污报废余开关坏处烂转动错误说问题"
    "间时点发现无与盘储摆让准备写过来张两东于着样总计制体条类链霉杆质园区层学课长仅单双盒只坛罐层凯苏维达贴码则"
)
_TO_SIMPLIFIED = str.maketrans(_TRADITIONAL, _SIMPLIFIED)


def simplified(text: str) -> str:
    """`text` with the traditional characters the apps' readers of words look for written simplified ("復甦一管，8號盒"
    → "复苏一管，8号盒"): what code reads of a person's words, never what it shows them."""
    return text.translate(_TO_SIMPLIFIED)


def unaccented(text: str) -> str:
    """`text` with the accents of Latin letters taken off ("Díaz" → "Diaz", "Désirée" → "Desiree"): how a name is
    typed on a keyboard without them, for comparing what a person wrote with what a file holds."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def writes_chinese(text: str | None) -> bool:
    """Whether a person writing `text` writes Chinese: it holds more Chinese characters than ordinary lower-case
    English words ("帮我thaw一管HeLa", "HeLa还有吗"; not "the 安琪 isolate got contaminated, toss it", an
    English sentence naming a strain in Chinese)."""
    han = han_count(text or "")
    return han > 0 and han > len(re.findall(r"(?<![A-Za-z])[a-z]{2,}(?![A-Za-z])", text or ""))


def han_count(text: str) -> int:
    """How many Chinese characters `text` holds."""
    return len(_HAN.findall(text))


ZH_NUMERALS = "零一二两三四五六七八九十"
"""The characters Chinese numbers up to 九十九 are written with (for character classes in patterns)."""
_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}


def chinese_number(raw: str) -> int | None:
    """The value of a whole number written in Chinese numerals from 零 to 九十九 ("三" → 3, "两" → 2, "十二" → 12,
    "二十" → 20, "三十五" → 35) or in ASCII digits ("12" → 12); None when `raw` is neither."""
    raw = raw.strip()
    if raw.isascii() and raw.isdigit():
        return int(raw)
    if raw in _ZH_DIGIT:
        return _ZH_DIGIT[raw]
    tens, ten, ones = raw.partition("十")
    if not ten or len(tens) > 1 or len(ones) > 1:
        return None
    high = 1 if not tens else _ZH_DIGIT.get(tens)
    low = 0 if not ones else _ZH_DIGIT.get(ones)
    if high is None or low is None or high == 0 or (ones == "零"):
        return None
    return high * 10 + low


def language_name(lang: str | None) -> str:
    """The language's name as a model is told to write in it: `English`, `Chinese (简体中文)`."""
    return "Chinese (简体中文)" if normalize_lang(lang) == "zh-CN" else "English"


@cache
def catalog(lang: str) -> dict[str, str]:
    """Every message of `lang`, merged from the language's files."""
    merged: dict[str, str] = {}
    folder = resources.files(__package__).joinpath(normalize_lang(lang))
    for part in sorted((f for f in folder.iterdir() if f.name.endswith(".json")), key=lambda f: f.name):
        for key, text in json.loads(part.read_text(encoding="utf-8")).items():
            if key in merged:
                raise ValueError(f"Message key {key!r} is defined twice in the {lang} catalog ({part.name}); keep one.")
            merged[key] = text
    return merged


def t(key: str, lang: str = "en", **values: Any) -> str:
    """The message `key` in `lang`, formatted with `values`. A missing key raises KeyError (tests check both catalogs)."""
    text = catalog(normalize_lang(lang))[key]
    if not values:
        return text
    return text.format(**{k: v.said_in(lang) if isinstance(v, PerLanguage) else v for k, v in values.items()})


def t_app(app: str, key: str, lang: str = "en", /, **values: Any) -> str:
    """App `app`'s own words for the generic message `key` (its `<app>.<key>`, e.g. `tutor.qt.chat.placeholder`)
    if its catalog has them, else `key`'s app-neutral words; formatted like `t`."""
    own = f"{app}.{key}"
    return t(own if own in catalog(normalize_lang(lang)) else key, lang, **values)
