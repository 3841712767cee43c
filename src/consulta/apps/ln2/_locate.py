"""Tubes in the user's words: the record(s) named by box + positions, a cell line, a short name or a plasmid.

People say "box 2 position 15" or "a K562-GFP tube", not record ids. The write tools take those words and
`locate` finds the record(s) they name: exactly one fit builds the operation; none is `no_matching_tube`, several
is `ambiguous_tube`, both with the nearest/possible tubes in a machine-readable `candidates` list (what a question
to the user offers as options). `place_said` tells grounding whether the user's own words named the box and
positions of a tube.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from ...i18n import LANGUAGES, ZH_NUMERALS, PerLanguage, chinese_number, simplified, t
from ...runtime import Choice, ToolError
from ._inventory import BoxLayout, Inventory, Record
from ._operations import Positions
from ._queries import _ranges, best_named, check_box, used_up

__all__ = [
    "TubeChoiceError",
    "said_after_a_box",
    "TubeRef",
    "labels_outside",
    "locate",
    "place_said",
    "said_boxes",
    "said_places",
    "said_positions",
    "taken_back",
    "tube_choice",
]


class TubeRef(BaseModel):
    """Tubes as the user named them: record_id, or box + positions, or a name (box/positions narrow it)."""

    box: int | None = None
    positions: Positions | None = None
    cell_line: str | None = None
    short_name: str | None = None
    plasmid: str | None = None
    record_id: int | None = None

    def names(self) -> dict[str, str]:
        return {k: v for k in ("cell_line", "short_name", "plasmid") if (v := getattr(self, k)) and v.strip()}

    def describe(self, lang: str = "en") -> str:
        """What the words named, for messages: "cell line 'SH-SY5Y', box 2, positions 5, 6" (zh-CN: "「SH-SY5Y」，2号盒，
        5、6号位")."""
        zh = lang == "zh-CN"
        fields: dict[str, str] = {}
        for field, name in self.names().items():
            fields.setdefault(name, field)  # a name given in several fields is said once
        parts = [f"「{v}」" if zh else f"{k.replace('_', ' ')} {v!r}" for v, k in fields.items()]
        if self.record_id is not None:
            parts.insert(0, f"记录 {self.record_id}" if zh else f"record {self.record_id}")
        if self.box is not None:
            parts.append(f"{self.box}号盒" if zh else f"box {self.box}")
        if self.positions:
            listed = ("、" if zh else ", ").join(map(str, self.positions))
            parts.append(f"{listed}号位" if zh else f"position{'s' if len(self.positions) > 1 else ''} {listed}")
        return ("，" if zh else ", ").join(parts) or ("（未指明）" if zh else "nothing")

    def said(self) -> PerLanguage:
        """`describe` in each language, for a message's placeholder."""
        return PerLanguage({lang: self.describe(lang) for lang in LANGUAGES})


class TubeChoiceError(ToolError):
    """A ToolError whose result also lists `candidates`: the tubes the user may have meant."""

    def __init__(
        self,
        error_code: str,
        message: str,
        *,
        hint: str,
        candidates: list[dict[str, Any]],
        choice: Choice | None = None,
        key: str | None = None,
        values: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(error_code, message, hint=hint, choice=choice, key=key, values=values)
        self.candidates = candidates

    def to_result(self, lang: str = "en") -> dict[str, Any]:
        return {**super().to_result(lang), "candidates": self.candidates}


def _candidate(record: Record, positions: Sequence[int]) -> dict[str, Any]:
    """A tube the words may have meant, its label the English words of its option (`_option_words`)."""
    candidate: dict[str, Any] = {
        "record_id": record.id,
        "short_name": record.display_name,
        "box": record.box,
        "positions": list(positions),
    }
    return {**candidate, "label": _option_label(candidate, "en")}


def _option_label(candidate: dict[str, Any], lang: str) -> str:
    key, values = _option_words(candidate)
    return t(key, lang, **values)


def _option_words(candidate: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A candidate's label as a catalog key and values (asked in the run's language)."""
    positions = sorted(candidate["positions"])
    values = {
        "name": candidate["short_name"],
        "box": candidate["box"],
        "at": _ranges(positions),
        "record": candidate["record_id"],
    }
    return ("ln2.choice.option.one" if len(positions) == 1 else "ln2.choice.option.many"), values


def tube_choice(
    candidates: list[dict[str, Any]],
    *,
    header: str,
    question: str,
    keys: tuple[str, str] | None = None,
    values: dict[str, Any] | None = None,
) -> Choice:
    """The question the runtime asks itself: the candidates' labels as options, each naming its tubes by record, box
    and positions (what the write tool is called again with)."""
    return Choice(
        header=header,
        question=question,
        header_key=keys[0] if keys else None,
        question_key=keys[1] if keys else None,
        values=values or {},
        options=[c["label"] for c in candidates],
        option_keys=[_option_words(c) for c in candidates],
        args_for_option={
            c["label"]: {"record_id": c["record_id"], "box": c["box"], "positions": c["positions"]} for c in candidates
        },
    )


def locate(inventory: Inventory, ref: TubeRef) -> list[tuple[int, list[int]]]:
    """The (record id, positions) the words in `ref` name — one pair, or one per record when the positions belong to
    several records (a one-tube-per-record file). A record id alone is passed on as it is (validation judges it).
    Raises `no_matching_tube` / `ambiguous_tube` (TubeChoiceError) or `missing_required_field`; changes nothing."""
    names = ref.names()
    positions = list(dict.fromkeys(ref.positions or ()))
    if ref.record_id is not None and ref.box is None and not names:
        record = inventory.record(ref.record_id)
        if positions or record is None or len(record.positions) != 1:
            return [(ref.record_id, positions)]
        return [(record.id, list(record.positions))]  # the record's one tube
    if ref.record_id is None and ref.box is None and not names:
        raise ToolError(
            "missing_required_field",
            "Say which tubes: box + positions, or a cell line / short name / plasmid, or a record id.",
            # no example numbers: a small model copies them as the place (tenth set: box 2 position 15, never said)
            hint="Pass the box and positions the user said, or the name they said; if they said neither, ask them "
            "which tube.",
            field="box",
            key="ln2.error.which_tubes",
        )
    check_box(inventory, ref.box, hint="Ask the user which box they mean; inventory_stats() lists the boxes.")
    pool, fuzzy = best_named(inventory, **names)
    if fuzzy:
        pool = []
    if ref.record_id is not None:
        pool = [r for r in pool if r.id == ref.record_id]
    if ref.box is not None:
        pool = [r for r in pool if r.box == ref.box]
    if positions:
        holders = {p: [r for r in pool if p in r.positions] for p in positions}
        if [p for p, rs in holders.items() if not rs] and len(names) > 1:
            # names of two tubes in one call ("HAP1-WT … and one WTC11-LMNB1-mEGFP from box 3 pos 13"), whatever
            # their fields: the place said is held by what one of the names fits alone
            apart = [r for r in _fits_any_name(inventory, ref) if ref.box is None or r.box == ref.box]
            if all(any(p in r.positions for r in apart) for p in positions):
                pool, holders = apart, {p: [r for r in apart if p in r.positions] for p in positions}
        if missing := [p for p, rs in holders.items() if not rs]:
            raise _none(inventory, ref, missing)
        whole = [r for r in pool if set(positions) <= set(r.positions)]
        if len(positions) > 1 and len(whole) == 1:
            return [(whole[0].id, positions)]  # "the ones at 22 and 23": the one record holding them all
        if any(len(rs) > 1 for rs in holders.values()):
            several = list({r.id: r for rs in holders.values() for r in rs}.values())
            raise _several(ref, [_candidate(r, [p for p in positions if p in r.positions]) for r in several])
        groups: dict[int, list[int]] = {}
        for p, (record,) in holders.items():
            groups.setdefault(record.id, []).append(p)
        return list(groups.items())
    if not pool:
        raise _none(inventory, ref, [])
    if len(pool) > 1:
        raise _several(ref, [_candidate(r, r.positions) for r in pool])
    (record,) = pool
    if len(record.positions) == 1:
        return [(record.id, list(record.positions))]
    raise _several(ref, [_candidate(record, [p]) for p in record.positions], which="position")


def _several(ref: TubeRef, candidates: list[dict[str, Any]], *, which: str = "record") -> TubeChoiceError:
    shown = candidates[:8]
    options = PerLanguage(
        {lang: ("；" if lang == "zh-CN" else "; ").join(_option_label(c, lang) for c in shown) for lang in LANGUAGES}
    )
    values = {"what": ref.said(), "count": len(candidates), "options": options}
    return TubeChoiceError(
        "ambiguous_tube",
        t(f"ln2.error.several.{which}", "en", **values),
        hint="Ask the user which one with the question tool (these as options), then call again with box and positions.",
        candidates=shown,
        choice=tube_choice(
            shown,
            header=f"Which {which}",
            question=f"{ref.describe()} fits {len(candidates)} {which}s. Which one do you mean?",
            keys=("ln2.choice.several.header", "ln2.choice.several.question"),
            values={"what": ref.said(), "count": len(candidates)},
        ),
        key=f"ln2.error.several.{which}",
        values=values,
    )


def _none(inventory: Inventory, ref: TubeRef, missing: list[int]) -> TubeChoiceError:
    what = ref.describe()
    values: dict[str, Any] = {"what": ref.said()}
    if missing and ref.box is not None:
        at = ", ".join(map(str, missing))
        holders = [r for r in inventory.records if r.box == ref.box and set(missing) & set(r.positions)]
        values |= {"box": ref.box, "at": at}
        if holders:
            held = ", ".join(r.display_name for r in holders)
            detail, case = f"box {ref.box} position {at} holds {held}, not {what}", "held"
            values["held"] = held
        else:
            detail, case = f"box {ref.box} holds no tube at position {at}", "empty"
    else:
        if not _named_apart(inventory, ref) and (gone := _gone(inventory, ref)):
            return _used_up_error(ref, gone)
        detail, case = f"no record with tubes left matches {what}", "unmatched"
    near = _nearest(inventory, ref)
    nearest = [_candidate(r, r.positions) for r in near]
    listing = "; ".join(c["label"] for c in nearest)
    choice = None
    named = bool(_named_apart(inventory, ref))
    if near and (named or ref.box is not None):
        # What the words could have meant becomes the runtime's question (as many tubes as were named, from each);
        # a name that fits nothing at all is not asked about with unrelated tubes.
        count = max(1, len(ref.positions or ()))
        shown = [_candidate(r, r.positions[:count]) for r in near]
        choice = tube_choice(
            shown,
            header="Which tube",
            question=t("ln2.choice.none.unmatched", "en", what=what)
            if case == "unmatched"
            else f"{detail[:1].upper()}{detail[1:]}. Which tube do you mean?",
            keys=("ln2.choice.none.header", f"ln2.choice.none.{case}"),
            values=values,
        )
    nearby = f" Nearest: {listing}." if listing else ""
    return TubeChoiceError(
        "no_matching_tube",
        f"Not staged: {detail}.{nearby}",
        hint="Check with query_inventory or empty_positions, or ask the user which tube they mean.",
        candidates=nearest,
        choice=choice,
        key=f"ln2.error.no_tube.{case}",
        values={**values, "nearest": PerLanguage({"en": nearby, "zh-CN": ""})},  # the options are the model's
    )


def _gone(inventory: Inventory, ref: TubeRef) -> list[dict[str, Any]]:
    """The used-up records the names fit, each name alone (newest use first, at most 3)."""
    found = {u["id"]: u for field, name in ref.names().items() for u in used_up(inventory, **{field: name})}
    return sorted(found.values(), key=lambda u: u.get("on", ""), reverse=True)[:3]


def _used_up_error(ref: TubeRef, gone: list[dict[str, Any]]) -> TubeChoiceError:
    """`no_matching_tube` for a line whose tubes are all used up: when each went, not other lines' tubes to choose
    from (heldout5: "thaw a CT26 vial" answered with eight unrelated records)."""
    name = next(iter(ref.names().values()))
    records = PerLanguage(
        {
            lang: ("；" if lang == "zh-CN" else "; ").join(
                t("ln2.reply.used_up_record", lang, id=u["id"], name=u["name"], on=u.get("on", "?")) for u in gone
            )
            for lang in LANGUAGES
        }
    )
    values = {"name": name, "records": records}
    return TubeChoiceError(
        "no_matching_tube",
        t("ln2.error.no_tube.used_up", "en", **values),
        hint="Tell the user no such tube is left and when the last one was used; stage nothing.",
        candidates=[],
        key="ln2.error.no_tube.used_up",
        values=values,
    )


def _named_apart(inventory: Inventory, ref: TubeRef) -> list[Record]:
    """The records the names fit together, else those each name fits alone ("Thaw NCCIT_ctrl_A and K562_WT_P8" in
    one call: no record is both, each is one), in file order; [] when no name fits."""
    names = ref.names()
    if not names:
        return []
    together, fuzzy = best_named(inventory, **names)
    if together and not fuzzy or len(names) == 1:
        return together
    apart = {r.id: r for field, name in names.items() for r in best_named(inventory, **{field: name})[0]}
    return [r for r in inventory.records if r.id in apart] or together


def _fits_any_name(inventory: Inventory, ref: TubeRef) -> list[Record]:
    """The records with tubes left that one of the names fits (not a close spelling), whichever field it was passed
    in (a small model puts a second tube's name in `plasmid`)."""
    fits: dict[int, Record] = {}
    for name in ref.names().values():
        for field in ("cell_line", "plasmid"):
            found, fuzzy = best_named(inventory, **{field: name})
            fits |= {} if fuzzy else {r.id: r for r in found}
    return [r for r in inventory.records if r.id in fits]


def _nearest(inventory: Inventory, ref: TubeRef, *, limit: int = 8) -> list[Record]:
    """The records nearest to what was asked: those of the names (close spellings too), else those in the box; none
    for a name that fits nothing and no box (the tank's first records are not near "Raji")."""
    active = [r for r in inventory.records if r.positions]
    named = _named_apart(inventory, ref)
    if not named and ref.box is None and ref.names():
        return []
    pool = named or ([r for r in active if r.box == ref.box] if ref.box is not None else active)

    def distance(record: Record) -> tuple[int, int]:
        gap = min((abs(p - q) for p in record.positions for q in ref.positions or ()), default=0)
        return (record.box != ref.box if ref.box is not None else 0, gap)

    return sorted(pool, key=distance)[:limit]


# ---- grounding: did the user's words name the place? -------------------------------------------------------------

_BOX = re.compile(
    r"(?:\bbox(?:es)?\s*(?:no\.?|number|#)?\s*[:：#]?\s*(\d+))|(?:(\d+)\s*号?\s*(?:冻存)?盒)|(?:盒子?\s*[:：#]?\s*(\d+))",
    re.IGNORECASE,
)


def said_after_a_box(label: str, words: str) -> bool:
    """Whether `label`, written like a grid label ("J1"), follows a box in `words` ("box 2 J1", "2号盒J1")."""
    if not re.fullmatch(r"[A-Za-z]\d{1,2}", label):
        return False
    after = rf"(?:{_BOX.pattern})\s*[,，:：]?\s*(?:at\s+|position\s+)?{re.escape(label)}(?![A-Za-z0-9])"
    return re.search(after, words, re.IGNORECASE) is not None


_ITEM = r"[A-Za-z]?\d+"
_TO = r"(?:[~–-]|\bto\b|\bthrough\b|\bthru\b|到|至)"
"""What joins the two ends of a range ("1-3", "H3到H5", "21 to 24")."""
_LIST = rf"({_ITEM}(?:\s*(?:[,，、/&+~–-]|\band\b|\bto\b|\bthrough\b|\bthru\b|和|与|及|到|至)\s*{_ITEM})*)"
_POSITIONS = re.compile(
    rf"(?:\b(?:positions?|pos\.?|slots?|wells?|spots?|the\s+(?:one|tube|vial)\s+(?:at|in))|位置|孔位|孔|位|格)\s*[:：#]?\s*{_LIST}",
    re.IGNORECASE,
)
_SPACED = re.compile(
    r"\b(?:positions|pos|slots|wells|spots)\s*[:：]?\s*(\d+(?:\s+\d+)+)(?![\d.])(?!\s*(?:vials?|tubes?|stocks?|管|支))",
    re.IGNORECASE,
)
"""Positions listed with spaces alone after a plural word for them ("slots 24 25 26"), not a count after them."""
_AT = re.compile(
    r"(?<![\w-])(?:[A-Za-z][\w./-]*|\d+[A-Za-z][\w./-]*)\s+at\s+(\d{1,3})(?!\d)(?!\s*(?:°|º|℃|degrees?\b|deg\b|[cC]\b|[ap]\.?m\b|h\b|hrs?\b|"
    r"min|s\b|sec|%|x\b|×|g\b|rpm|[:.]\d))",
)
"""A tube named and its place ("the Sf9 at 96", "the one at 37"), not a temperature, a time or a speed ("thaw at 37 °C")."""
_ZH_ORDINALS = re.compile(r"第\s*(\d+(?:\s*(?:[、,，和与及跟/~–-]|到|至)\s*第?\s*\d+)+)\s*个?\s*号?\s*(?:位|孔|格)")
"""Positions each said with 第 ("第10和第11位", "第3到第5位", "第31-33格")."""
_ZH_POSITION = re.compile(
    r"(?:第\s*)?(\d+)\s*号\s*(?:位|孔|格)|第\s*(\d+)\s*个?\s*(?:位|孔|格)|(?:^|(?<=[盒的]))\s*(\d+)\s*(?:位|孔|格)(?!数)|"
    r"(?<=盒)\s*(\d+)\s*号(?!\s*盒)"
)
"""A position said the Chinese way: "15号位", "第15位", "第15个位置", and after its box "1号盒21位", "3号盒22号的"."""
_ZH_LIST = re.compile(rf"{_LIST}\s*号\s*(?:位|孔|格)")
"""A list said before its one "号位" ("1、2、3号位": each of them a position)."""
_HASH_AFTER_BOX = re.compile(rf"(?:{_BOX.pattern})\s*[,，:：(（]?\s*#\s*(?P<at>\d+)", re.IGNORECASE)
_HASH_BEFORE_BOX = re.compile(rf"(?<![\w#])#\s*(?P<at>\d+)\s*(?:,|，|in|of|from)?\s*(?:{_BOX.pattern})", re.IGNORECASE)
"""A position said by its number next to its box ("box2 #13", "#13 in box 2"); a "#7" with no box beside it is part
of a name ("A549-ACE2 #7", a clone's number), not a place."""
_LABEL = re.compile(r"(?<![A-Za-z0-9_-])(?<![A-Za-z]/)(?<!\w\.)([A-Za-z])(\d{1,2})(?![A-Za-z0-9_-])(?!/\w)(?!\.\w)")
"""A grid label ("B6", "4号盒B1"), not an end of a name with a slash ("Ba/F3", "C6/36") nor a part of a dotted name
("D10.G4.1": neither D10 nor G4)."""
_NAME_BEFORE = re.compile(r"(?<![A-Za-z])([A-Za-z]+)[ ]$")
_BEFORE_A_LABEL = frozenset(
    "take thaw discard add put box spot spots position positions pos slot slots well wells and or at in on from of to "
    "into is was the rack tank row tube vial".split()
)


_LABEL_RANGE = re.compile(
    rf"(?<![A-Za-z0-9_-])([A-Za-z]\d{{1,2}})\s*{_TO}\s*([A-Za-z]\d{{1,2}})(?![A-Za-z0-9_-])", re.I
)
"""A range of grid labels said on its own ("H3到H5", "B2-B4"), with no word for positions before it."""


def _label_tokens(text: str) -> list[str]:
    """The grid labels `text` says, as said; a label that is the second word of a name ("Vero E6", "Jurkat E6", and
    typed all in lower case, "vero e6") is none."""
    said = []
    for label in _LABEL.finditer(text):
        before = _NAME_BEFORE.search(text, 0, label.start())
        named = before is not None and (before.group(1)[0].isupper() or label.group(1).islower())
        if named and before is not None and before.group(1).casefold() not in _BEFORE_A_LABEL:
            continue
        said.append(label.group(1) + label.group(2))
    return said


def _labels(text: str, layout: BoxLayout) -> set[int]:
    """The positions grid labels say (`_label_tokens`) in a box of `layout`."""
    return {p for label in _label_tokens(text) if (p := _position(label, layout)) is not None}


def labels_outside(text: str, layout: BoxLayout) -> list[str]:
    """The grid labels `text` says beside a box that no box of `layout` has ("box 2 J1" of rows A–I, "C10" of 8
    columns), as said: a place that does not exist, not a position to guess."""
    text = _as_read(text)
    if not _BOX.search(text):
        return []
    return [label for label in _label_tokens(text) if _position(label, layout) is None]


_AFTER_BOX = re.compile(
    rf"(?:\s*[,，:：]\s*|\s+){_LIST}(?=\s*(?:$|[()（）.;:!?。；，,！？—–]|\band\b|\bfrom\b|和|及|以及))", re.IGNORECASE
)
"""A list said right after one box, with no word for positions ("box 1, 25 and 26", "1号盒：25、26", "box 2 31-33 (the
shKRAS ones)", "box 1: 1 and 2 — …"); a count after a box ("box 1, 3 HeLa tubes") is not one, nor a list after
"boxes"."""
_AFTER_ZH_BOX = re.compile(rf"\s*[,，:：]?\s*{_LIST}(?=\s*(?:$|[()（）.;:!?。；，,！？—–]|和|及|以及|[格位孔]))")
"""The same right after a box said the Chinese way, where no separator is needed ("1号盒21、22")."""
_RANGE = re.compile(rf"({_ITEM})\s*{_TO}\s*({_ITEM})", re.IGNORECASE)


def _position(token: str, layout: BoxLayout) -> int | None:
    token = token.strip()
    if token.isdigit():
        return int(token)
    row, col = ord(token[0].upper()) - ord("A"), int(token[1:])
    if 0 <= row < layout.rows and 1 <= col <= layout.cols:
        return row * layout.cols + col
    return None


def _listed(listed: str, layout: BoxLayout) -> set[int]:
    """The positions of a list said of them ("1-3, 7", "1到3号位": 1, 2, 3, 7): each item, and each range whole."""
    said: set[int] = set()
    for lo, hi in _RANGE.findall(listed):
        a, b = _position(lo, layout), _position(hi, layout)
        if a is not None and b is not None and 0 <= b - a <= layout.capacity:
            said.update(range(a, b + 1))
    said.update(p for token in re.findall(_ITEM, listed) if (p := _position(token, layout)) is not None)
    return said


def said_boxes(text: str) -> set[int]:
    """The box numbers `text` names as boxes ("box 2", "2号盒", "盒子 2")."""
    text = _as_read(text)
    return {int(n) for groups in _BOX.findall(text) for n in groups if n}


_ZH_COUNTED = re.compile(
    rf"([{ZH_NUMERALS}]+)(?=\s*号?\s*(?:冻存)?盒|\s*号?\s*(?:位|孔|格))|(?<=第)([{ZH_NUMERALS}]+)(?=\s*个?\s*号?\s*(?:位|孔|格))"
)


def _as_read(text: str) -> str:
    """The words as the readers of places read them: simplified characters, and Chinese numerals of boxes and
    positions as digits ("四号盒第二格" → "4号盒第2格")."""
    text = simplified(text)
    return _ZH_COUNTED.sub(lambda m: str(chinese_number(m.group(0)) or m.group(0)), text)


_CORRECTION = re.compile(
    r"\b(?:no\s*,?\s+wait|wait\s*,?\s+no|no\s*,?\s+sorry|sorry\s*,?\s+no|sorry\s*,?\s+I\s+mean[t]?|I\s+mean[t]?|"
    r"scratch\s+that|make\s+(?:it|that)|actually\s*,?\s+(?:it'?s|its)|correction|"
    # "box 4 pos 22 -- sorry, 23": a sorry or an oops right before a place said again
    r"(?:sorry|oops|whoops)(?=\s*[,，:]?\s*(?:pos(?:ition)?\s*|slot\s*|#\s*)?\d))\b"
    r"|不对|说错了|搞错了|写错了|应该是|更正一下|哦不|啊不|我是说",
    re.IGNORECASE,
)
"""Words that take back a place just said ("pos 19 — no wait, 20", "19号位，啊不对，是20号位")."""
_BARE = re.compile(r"(?<![A-Za-z0-9_.#-])(\d{1,3})(?![A-Za-z0-9_.])")


def _taken_back(text: str, layout: BoxLayout) -> tuple[str, str, set[int]] | None:
    """(words before the last correction, words after it, the positions said after it) when a correction says
    positions again; a bare number right after it is one ("no wait, 20, sorry")."""
    marks = list(_CORRECTION.finditer(text))
    if not marks:
        return None
    before, after = text[: marks[-1].start()], text[marks[-1].end() :]
    again = _said_positions(after, layout) or {
        n for found in _BARE.findall(after[:24]) if 1 <= (n := int(found)) <= layout.capacity
    }
    taken = _said_positions(before, layout)
    # "make that slot 13, 11 is promised to Haddad": a place taken back and named again in passing is still taken back
    again = (again - taken) or again
    return (before, after, again) if again and taken else None


def said_positions(text: str, layout: BoxLayout) -> set[int]:
    """The positions `text` names as places ("position 15", "positions 1-3", "15号位", "第15位", "第15个位置", "B6",
    "box 1, 25 and 26"); a place taken back is not one ("pos 19 — no wait, 20": 20)."""
    text = _as_read(text)
    corrected = _taken_back(text, layout)
    return corrected[2] if corrected is not None else _said_positions(text, layout)


def _said_positions(text: str, layout: BoxLayout) -> set[int]:
    said: set[int] = set()
    for listed in [m.group(1) for m in _POSITIONS.finditer(text)] + _ZH_LIST.findall(text):
        said |= _listed(listed, layout)
    said.update(int(n) for groups in _ZH_POSITION.findall(text) for n in groups if n)
    for listed in _ZH_ORDINALS.findall(text):
        said |= _listed(listed.replace("第", ""), layout)
    said.update(n for found in _AT.findall(text) if 1 <= (n := int(found)) <= layout.capacity)
    for spaced in _SPACED.findall(text):
        said.update(n for found in spaced.split() if 1 <= (n := int(found)) <= layout.capacity)
    said |= _labels(text, layout)
    for lo, hi in _LABEL_RANGE.findall(text):  # "H3到H5", "B2-B4": the places between the labels too
        said |= _listed(f"{lo}-{hi}", layout)
    for hashed in (*_HASH_AFTER_BOX.finditer(text), *_HASH_BEFORE_BOX.finditer(text)):
        if 1 <= (n := int(hashed["at"])) <= layout.capacity:
            said.add(n)
    for box in _BOX.finditer(text):
        after = _AFTER_ZH_BOX if box.group(0).endswith("盒") else _AFTER_BOX
        if not box.group(0).lower().startswith("boxes") and (listed := after.match(text, box.end())):
            numbers = [int(n) for n in re.findall(r"\d+", listed.group(1))]  # "1号盒21、22": no separator needed
            if all(1 <= n <= layout.capacity for n in numbers):  # "box 3 2025-10" is a month, not places
                said |= _listed(listed.group(1), layout)
    return said


def said_places(text: str, layout: BoxLayout) -> dict[int, set[int]]:
    """The positions `text` names in each box it names, read box by box: the positions said after a box (and before
    the next) are that box's ("box 4 position 1 and box 5 position 19" → {4: {1}, 5: {19}}; "3号盒1、2、3号位" →
    {3: {1, 2, 3}}). A box named with no position is left out. Positions taken back give way to those said again, in
    the box said again or else the last box said before ("box 1 pos 19 — no wait, 20" → {1: {20}}; "box 2 position 5,
    I mean box 3 position 5" → {3: {5}})."""
    text = _as_read(text)
    corrected = _taken_back(text, layout)
    if corrected is None:
        return _said_places(text, layout)
    before, after, again = corrected
    places = _said_places(before, layout)
    earlier, again_in = _box_numbers(before)[-1:], _box_numbers(after)[:1]
    if again_in:  # "box 2 position 5, I mean box 3 position 5": the place in box 2 is taken back
        places.pop(next(iter(earlier), 0), None)
    for box in again_in or earlier:
        places[box] = again
    return places


def _box_numbers(text: str) -> list[int]:
    return [int(next(g for g in m.groups() if g)) for m in _BOX.finditer(text)]


def _said_places(text: str, layout: BoxLayout) -> dict[int, set[int]]:
    marks = list(_BOX.finditer(text))
    places: dict[int, set[int]] = {}
    for i, mark in enumerate(marks):
        box = int(next(g for g in mark.groups() if g))
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        if positions := _said_positions(text[mark.start() : end], layout):
            places.setdefault(box, set()).update(positions)
    return places


def taken_back(text: str, layout: BoxLayout) -> set[int]:
    """The positions the words said and then took back ("slot 11 … actually make that slot 13": {11})."""
    text = _as_read(text)
    corrected = _taken_back(text, layout)
    return _said_positions(corrected[0], layout) - corrected[2] if corrected is not None else set()


def place_said(texts: Iterable[str], *, box: int, positions: Sequence[int], layout: BoxLayout) -> bool:
    """Whether the texts (the user's words and answers) name box `box` and every one of `positions` as places —
    "box 2 position 15", "2号盒 15号位", "box 2, B6" — not merely the numbers."""
    if not positions:
        return False
    boxes: set[int] = set()
    places: set[int] = set()
    for text in texts:
        boxes |= said_boxes(text)
        places |= said_positions(text, layout)
    return box in boxes and set(positions) <= places
