"""School and major names as people say them, normalised in code over `data/names.yaml`.

A name is looked up in steps, the surest first: the exact name, an English name or an alias (北大, PKU); an alias
that names several (交大, 华师 …) is `Ambiguous`; then its pinyin or initials ("beida", "bjdx", "qinghua", and a
homophone typed by a pinyin keyboard: 清化大学 reads qinghuadaxue); then fuzzy matching (rapidfuzz) with a cut-off.
Only a sure match is a `Match`: a weak fuzzy match, or one close to two names, is `Ambiguous` (the agent asks which),
and a name not in the data is `Unknown` with the nearest ones to offer. A wrong school is never chosen silently.

`NameBook.find(text)` finds the names inside free text, in Chinese or English ("我想考北大计算机", "PKU CS please").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

from pypinyin import Style, lazy_pinyin
from rapidfuzz import fuzz, process
from ruamel.yaml import YAML

from ...i18n import has_chinese

__all__ = [
    "Ambiguous",
    "Found",
    "Match",
    "NameBook",
    "NameResult",
    "Unknown",
    "majors",
    "schools",
]

How = Literal["exact", "alias", "pinyin", "fuzzy"]


@dataclass(frozen=True)
class Match:
    """The one name meant (`name` is the data's standard name)."""

    name: str
    said: str
    how: How = "exact"


@dataclass(frozen=True)
class Ambiguous:
    """Several names fit what was said (an ambiguous alias, or a weak fuzzy match): ask which."""

    candidates: tuple[str, ...]
    said: str


@dataclass(frozen=True)
class Unknown:
    """Nothing in the data is close enough; `nearest` are the names to offer (may be empty)."""

    nearest: tuple[str, ...]
    said: str


NameResult = Match | Ambiguous | Unknown


@dataclass(frozen=True)
class Found:
    """A name found inside free text: what it resolved to and where it was said (`start`, `end` in the text)."""

    result: NameResult
    start: int
    end: int


SURE = 90.0
"""A fuzzy score at or above which one name, clearly ahead of the next, is taken without asking."""
WEAK = 70.0
"""A fuzzy score at or above which a name is offered as a guess (a question); below it, the name is unknown."""
MARGIN = 8.0
"""How far the best fuzzy score must lead the next name's for the best to be sure."""

_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_COMMON_WORDS = frozenset({"hit"})
"""Aliases that are also ordinary words: matched inside English text only as typed in capitals (HIT)."""


def _fold(text: str) -> str:
    """The key of a name: lower case, no spaces, dashes, dots or apostrophes."""
    return re.sub(r"[\s\-_.'’·]+", "", text).casefold()


def _pinyin(text: str) -> str:
    return "".join(lazy_pinyin(text, errors="ignore")).casefold()


def _initials(text: str) -> str:
    return "".join(lazy_pinyin(text, style=Style.FIRST_LETTER, errors="ignore")).casefold()


@dataclass(frozen=True)
class _Entry:
    name: str
    en: str
    aliases: tuple[str, ...]
    city: str = ""


class NameBook:
    """The names of one kind (schools or majors): `resolve` one name as typed, `find` the names in free text."""

    def __init__(
        self,
        entries: list[_Entry],
        ambiguous: dict[str, list[str]],
        *,
        spoken: re.Pattern[str] | None = None,
        spoken_min: int = 3,
        spoken_en: re.Pattern[str] | None = None,
    ) -> None:
        self.entries = entries
        self.spoken = spoken
        self.spoken_en = spoken_en
        self.spoken_min = spoken_min
        self.names = tuple(e.name for e in entries)
        self._en = {e.name: e.en for e in entries}
        self._city = {e.name: e.city for e in entries if e.city}
        self._exact: dict[str, str] = {}
        self._ambiguous: dict[str, tuple[str, ...]] = {_fold(k): tuple(v) for k, v in ambiguous.items()}
        for e in entries:
            self._exact[_fold(e.name)] = e.name
            self._exact[_fold(e.en)] = e.name
            for alias in e.aliases:
                self._exact.setdefault(_fold(alias), e.name)
        # pinyin keys: the full pinyin of names and aliases, the initials of those of three characters or more
        keys: dict[str, set[str]] = {}
        for e in entries:
            for form in (e.name, *e.aliases):
                if has_chinese(form):
                    keys.setdefault(_pinyin(form), set()).add(e.name)
            for form in (e.name, *e.aliases):
                if len(form) >= 3 and has_chinese(form):
                    keys.setdefault(_initials(form), set()).add(e.name)
        for alias, names in ambiguous.items():
            if has_chinese(alias):
                keys.setdefault(_pinyin(alias), set()).update(names)
        self._pinyin = {k: tuple(sorted(v, key=self.names.index)) for k, v in keys.items() if len(k) >= 3}
        # surface forms searched for in free text, longest first
        forms: dict[str, str] = {}
        for e in entries:
            for form in (e.name, e.en, *e.aliases):
                forms.setdefault(form, e.name)
        for alias in ambiguous:
            forms[alias] = ""
        self._forms = sorted(forms, key=len, reverse=True)
        self._fuzzy_cjk = sorted({f for f in (*self._exact_forms(), *ambiguous) if has_chinese(f)})
        self._fuzzy_ascii = sorted({_fold(f) for f in self._exact_forms() if not has_chinese(f)} | set(self._pinyin))
        # English names scored without the words every school shares ("University of …"), else Harvard University
        # would look close to Peking University
        self._stems: dict[str, set[str]] = {}
        for e in entries:
            for form in (e.en, *e.aliases):
                if not has_chinese(form) and (stem := _stem(form)):
                    self._stems.setdefault(stem, set()).add(e.name)

    def _exact_forms(self) -> list[str]:
        return [f for e in self.entries for f in (e.name, e.en, *e.aliases)]

    def narrow(self, result: NameResult, text: str) -> NameResult:
        """An ambiguous name said with the city of exactly one of its candidates (西安的交大) is that one."""
        if not isinstance(result, Ambiguous) or len(result.candidates) < 2:
            return result  # one candidate is a typo to confirm (北京打学 → 北京大学？), not a choice a city settles
        inside = [n for n in result.candidates if self._city.get(n) and self._city[n] in text]
        return Match(inside[0], result.said, "alias") if len(inside) == 1 else result

    def en(self, name: str) -> str:
        """The English name of a standard name (the name itself if unknown)."""
        return self._en.get(name, name)

    def display(self, name: str, lang: str) -> str:
        """The name in the language of a reply."""
        return name if lang.startswith("zh") else self.en(name)

    # ---- one name --------------------------------------------------------------------------------------------

    def resolve(self, text: str) -> NameResult:
        """What `text` (one name as typed: an answer, a form value) stands for."""
        said = text.strip()
        key = _fold(said)
        if not key:
            return Unknown((), said)
        if key in self._ambiguous:
            return Ambiguous(self._ambiguous[key], said)
        if key in self._exact:
            name = self._exact[key]
            return Match(name, said, "exact" if key in (_fold(name), _fold(self.en(name))) else "alias")
        by_sound = self._by_pinyin(said)
        if by_sound is not None:
            return by_sound
        return self._fuzzy(said)

    def _by_pinyin(self, said: str) -> NameResult | None:
        cjk = has_chinese(said)
        if cjk and re.search(r"[A-Za-z]", said):
            return None
        key = _pinyin(said) if cjk else re.sub(r"[^a-z]", "", said.casefold())
        names = self._pinyin.get(key)
        if not names:
            return None
        if len(names) > 1:
            return Ambiguous(names, said)
        if cjk and len(key) < 8 and len(said) <= 2:
            return Ambiguous(names, said)  # a two-character homophone (北打) is a guess: asked, not taken
        return Match(names[0], said, "pinyin")

    def _fuzzy(self, said: str) -> NameResult:
        """Latin letters: rapidfuzz's ratio over names, aliases and pinyin keys, sure only well ahead of the next.
        Chinese: a name of the same length one character off (华中科枝大学), or one the words are an abbreviation
        of (北京航天大学), is a guess to ask about (homophones were caught by pinyin); else unknown, nearest offered."""
        cjk = has_chinese(said)
        if cjk:
            return self._fuzzy_cjk_name(said)
        query = _fold(said)
        if len(query) < 4:
            return Unknown((), said)
        scored: dict[str, float] = {}
        stem = _stem(said)
        if stem != query:  # said with a shared word: compare what distinguishes it
            for form, score, _ in process.extract(stem, list(self._stems), scorer=fuzz.ratio, limit=12):
                for name in self._stems[form]:
                    scored[name] = max(scored.get(name, 0.0), float(score))
        else:
            for form, score, _ in process.extract(query, self._fuzzy_ascii, scorer=fuzz.ratio, limit=12):
                for name in self._targets(form):
                    scored[name] = max(scored.get(name, 0.0), float(score))
        ranked = sorted(scored.items(), key=lambda item: -item[1])
        if not ranked:
            return Unknown((), said)
        best, score = ranked[0]
        runner = ranked[1][1] if len(ranked) > 1 else 0.0
        if score >= SURE and score - runner >= MARGIN:
            return Match(best, said, "fuzzy")
        close = tuple(name for name, s in ranked if s >= WEAK)[:4]
        if close:
            return Ambiguous(close, said)
        return Unknown(tuple(name for name, _ in ranked[:3]), said)

    def _fuzzy_cjk_name(self, said: str) -> NameResult:
        query = re.sub(r"\s+", "", said)
        close: list[str] = []
        for form in self._fuzzy_cjk:
            one_off = len(form) == len(query) >= 3 and sum(a != b for a, b in zip(form, query, strict=True)) == 1
            if one_off or (len(query) >= 4 and len(form) > len(query) and _subsequence(query, form)):
                close.extend(n for n in self._targets(form) if n not in close)
        if close:
            return Ambiguous(tuple(close[:4]), said)
        nearest = process.extract(query, self._fuzzy_cjk, scorer=fuzz.ratio, limit=8)
        names: list[str] = []
        for form, _, _ in nearest:
            names.extend(n for n in self._targets(form) if n not in names)
        return Unknown(tuple(names[:3]), said)

    def _targets(self, form: str) -> tuple[str, ...]:
        key = _fold(form)
        if key in self._ambiguous:
            return self._ambiguous[key]
        if key in self._exact:
            return (self._exact[key],)
        return self._pinyin.get(key, ())

    # ---- names in free text ----------------------------------------------------------------------------------

    def find(self, text: str, *, taken: list[tuple[int, int]] | None = None) -> list[Found]:
        """The names said in `text`, in order, each with where it was said. Spans in `taken` (found as something
        else already) are skipped; the spans found here are added to it."""
        taken = taken if taken is not None else []
        found: list[Found] = []

        def free(start: int, end: int) -> bool:
            return all(end <= s or start >= e for s, e in taken)

        def take(result: NameResult, start: int, end: int) -> None:
            taken.append((start, end))
            found.append(Found(result, start, end))

        for form in self._forms:
            if has_chinese(form):
                pattern = re.escape(form)
                flags = 0
            else:
                words = r"[\s\-]+".join(re.escape(w) for w in form.split())
                pattern = rf"(?<![A-Za-z]){words}(?![A-Za-z])"
                flags = 0 if form.casefold() in _COMMON_WORDS else re.IGNORECASE
            for m in re.finditer(pattern, text, flags):
                if free(m.start(), m.end()):
                    take(self.resolve(form), m.start(), m.end())
        self._find_spoken(text, free, take, taken)
        return sorted(found, key=lambda f: f.start)

    def _find_spoken(
        self,
        text: str,
        free: Callable[[int, int], bool],
        take: Callable[[NameResult, int, int], None],
        taken: list[tuple[int, int]],
    ) -> None:
        """Names said another way: pinyin or initials in Latin letters (a misspelt one too), and Chinese names the
        data lacks word for word (a typo, a school not in the data), found by the book's `spoken` pattern."""
        words = [(m.start(), m.end(), m.group(0)) for m in _ASCII_WORD.finditer(text)]
        for size in (3, 2, 1):
            for i in range(len(words) - size + 1):
                start, end = words[i][0], words[i + size - 1][1]
                if not free(start, end):
                    continue
                said = text[start:end]
                letters = re.sub(r"[^a-z]", "", said.casefold())
                if len(letters) < 4 or said.casefold() in _ENGLISH:
                    continue
                names = self._pinyin.get(letters)
                if names:
                    take(Match(names[0], said, "pinyin") if len(names) == 1 else Ambiguous(names, said), start, end)
                elif size == 1 and len(letters) >= 5:
                    result = self._fuzzy(said)
                    if not isinstance(result, Unknown):
                        take(result, start, end)
        for m in self.spoken_en.finditer(text) if self.spoken_en is not None else ():
            if free(m.start(), m.end()):
                take(self.resolve(m.group(0)), m.start(), m.end())
        if self.spoken is None:
            return
        for m in self.spoken.finditer(text):
            start = max([m.start(), *(e for s, e in taken if s < m.end() and e > m.start())])
            core = _strip_fillers(text[start : m.end()])
            if len(core) < self.spoken_min or not free(m.end() - len(core), m.end()) or core in _NOT_NAMES:
                continue
            take(self.resolve(core), m.end() - len(core), m.end())


_SCHOOL_SAID = re.compile(r"[\u4e00-\u9fff]{2,10}?(?:大学|[打达答搭大][学雪血穴])(?!生)")
"""A Chinese school name not in the data word for word ends in 大学 (not 大学生), or in a typo of it (北京打学)."""
_SCHOOL_SAID_EN = re.compile(
    r"\b(?:[A-Z][A-Za-z'\-]+\s+){1,4}(?:University|College|Institute)\b|\bUniversity\s+of\s+[A-Z][A-Za-z'\-]+(?:\s+[A-Z][A-Za-z'\-]+){0,3}"
)
"""An English school name not in the data word for word (Harvard University, University of Oxford)."""
_MAJOR_SAID = re.compile(r"(?<=[读考学报])[\u4e00-\u9fff]{2,8}?(?=系|专业)")
"""A major not in the data word for word: what follows 读/考/学/报 and comes before 系/专业 (我想读材料专业)."""
_NOT_NAMES = frozenset({"上大学", "读大学", "考大学", "关系", "联系", "体系"})
_FILLERS = re.compile(r"^.*(?:考|读|是|的|在|了|去|想|要|申请|，|。|,|\s)")
"""Words before a name in a sentence; the last of them ends what is not the name (none of them is in a name)."""
_ENGLISH = frozenset(
    {
        "want",
        "study",
        "about",
        "please",
        "would",
        "like",
        "that",
        "this",
        "with",
        "from",
        "major",
        "school",
        "university",
        "college",
        "advisor",
        "advisors",
        "professor",
        "science",
        "computer",
        "engineering",
        "learning",
        "machine",
        "thanks",
        "hello",
        "first",
        "second",
        "third",
        "which",
        "where",
        "there",
        "their",
        "they",
        "then",
        "than",
        "what",
        "good",
        "great",
        "strict",
        "kind",
        "nice",
        "funding",
        "research",
        "theory",
        "industry",
        "details",
        "reviews",
        "show",
        "tell",
        "more",
        "know",
        "think",
        "maybe",
        "also",
        "just",
        "actually",
        "sorry",
        "instead",
        "change",
        "rather",
        "prefer",
    }
)


_SHARED_WORDS = re.compile(
    r"\b(?:university|college|institute|of|the|china|chinese|science|and|technology)\b", re.IGNORECASE
)


def _stem(text: str) -> str:
    """An English name without the words names share (Zhejiang University → zhejiang)."""
    return _fold(_SHARED_WORDS.sub(" ", text))


def _strip_fillers(span: str) -> str:
    """The name part of a span such as 我想考北京邮电大学 (北京邮电大学): what follows the last filler word."""
    return _FILLERS.sub("", span)


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


@cache
def _data() -> dict:
    text = resources.files(__package__).joinpath("data", "names.yaml").read_text(encoding="utf-8")
    return YAML(typ="safe").load(text)


def _entries(rows: list[dict]) -> list[_Entry]:
    return [
        _Entry(
            name=str(r["name"]),
            en=str(r.get("en") or r["name"]),
            aliases=tuple(str(a) for a in r.get("aliases") or ()),
            city=str(r.get("city") or ""),
        )
        for r in rows
    ]


@cache
def schools() -> NameBook:
    """The schools of `names.yaml`."""
    data = _data()
    return NameBook(
        _entries(data["schools"]),
        dict(data.get("ambiguous") or {}),
        spoken=_SCHOOL_SAID,
        spoken_min=4,
        spoken_en=_SCHOOL_SAID_EN,
    )


@cache
def majors() -> NameBook:
    """The majors (first-level disciplines) of `names.yaml`."""
    data = _data()
    return NameBook(_entries(data["majors"]), dict(data.get("major_ambiguous") or {}), spoken=_MAJOR_SAID, spoken_min=2)
