"""The reference list shipped with the question bank (`data/references.yaml`) and the choice of references for an item.

Every entry is a real, stable source — official documentation, a Wikipedia article, a textbook with its ISBN — with
the categories and topic words it serves and a line on what it covers (in en and zh-CN). Tool 6 cites at least three:
those whose topic words the item's text names, then the category's general ones, never a made-up link.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ruamel.yaml import YAML

from ...i18n import normalize_lang

__all__ = ["MIN_REFERENCES", "Reference", "choose_references", "load_references"]

MIN_REFERENCES = 3
CATEGORIES = ("technical", "business", "general")


@dataclass(frozen=True, kw_only=True)
class Reference:
    id: str
    title: str
    url: str
    kind: str  # docs | wikipedia | book | standard
    lang: str
    categories: tuple[str, ...]
    topics: tuple[str, ...]
    about: dict[str, str]
    isbn: str | None = None

    def link(self) -> dict[str, str]:
        """The seed's reference link: title and url (and the ISBN of a book)."""
        out = {"title": self.title, "url": self.url}
        if self.isbn:
            out["isbn"] = self.isbn
        return out

    def note(self, lang: str) -> str:
        return self.about.get(normalize_lang(lang)) or self.about["en"]


@cache
def load_references() -> tuple[Reference, ...]:
    """The shipped list, read once; a malformed entry is a ValueError naming it (the data ships with the code)."""
    text = (resources.files(__package__) / "data" / "references.yaml").read_text(encoding="utf-8")
    refs = []
    for raw in YAML(typ="safe").load(text)["references"]:
        try:
            refs.append(
                Reference(
                    id=raw["id"],
                    title=raw["title"],
                    url=raw["url"],
                    kind=raw["kind"],
                    lang=raw.get("lang", "en"),
                    categories=tuple(raw["categories"]),
                    topics=tuple(str(w).casefold() for w in raw.get("topics", ())),
                    about=dict(raw["about"]),
                    isbn=str(raw["isbn"]) if raw.get("isbn") else None,
                )
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"references.yaml: entry {raw.get('id', raw)!r} lacks {error}") from error
    return tuple(refs)


def choose_references(
    *, category: str | None, texts: Sequence[str], lang: str = "en", k: int = MIN_REFERENCES
) -> list[Reference]:
    """At least `k` references for an item of `category` whose words are `texts` (stem, answer, keywords, topic):
    the category's sources, those naming the most (and rarest) of its topic words first, then those written for the
    category first, the reader's language before others."""
    lang = normalize_lang(lang)
    category = category if category in CATEGORIES else "general"
    haystack = " ".join(texts).casefold()
    refs = load_references()

    spread = Counter(w for r in refs for w in set(r.topics))
    mine = [
        r for r in refs if category in r.categories
    ]  # a technical item never cites a business text for a shared word

    def hits(ref: Reference) -> float:
        """How much of the item's words the reference covers: each topic word it names, the rarer the more."""
        return sum(1 / spread[w] for w in ref.topics if _names(haystack, w))

    def rank(ref: Reference) -> tuple[float, int, int]:
        return (-hits(ref), 0 if ref.categories[0] == category else 1, 0 if ref.lang == lang else 1)

    return sorted(mine, key=rank)[:k]


def _names(haystack: str, word: str) -> bool:
    """Whether the text names a topic word: a whole word for Latin script ("sql" is not in "mysql"), any substring
    for Chinese."""
    if not word:
        return False
    if re.search(r"[\u3400-\u9fff]", word):
        return word in haystack
    return re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", haystack) is not None
