"""Read queries over an ln2 inventory, returning compact JSON-ready dicts for a small model's prompt.

Results never contain nulls or empty lists; long notes are cut. Positions are numbers (what write tools take)
with their row/column labels alongside.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ...i18n import unaccented
from ...runtime import ToolError
from ._inventory import BoxLayout, Inventory, Record, occupancy, position_label

__all__ = [
    "CONTAINERS_EN",
    "best_named",
    "spelled_out",
    "check_box",
    "empty_positions",
    "inventory_stats",
    "query_inventory",
    "search_records",
    "used_up",
]

_NOTE_CHARS = 60
_FUZZY_CUTOFF = 0.75  # 'K652' vs 'K562' scores exactly 0.75
_FUZZY_MIN_LEN = 4  # shorter queries match too much by accident
_WORD_ONLY_LEN = 3  # letters-only queries this short match a whole word of a name
CONTAINERS_EN = r"tubes?|vials?|cryovials?|straws?|aliquots?|ampoules?|stocks?"
"""What a tank's samples are kept in, in English (a regular expression's alternatives)."""
_HOLDER = re.compile(
    rf"^(?:the|a|an|one)\s+|\s+(?:{CONTAINERS_EN}|cells?)$|(?:那|这|一)?[管支]$",
    re.IGNORECASE,
)
"""What a name may be said with in a call ("the WIK straw", "HeLa vials", "K562那管"): no part of any name."""
_SPLIT = re.compile(r"[^0-9a-z\u00c0-\uffff]+")

# How well a query matched a value: the best level wins, and fuzzy hits are shown only when nothing matched better.
_EXACT, _SUBSTRING, _FUZZY, _NONE = 3, 2, 1, 0


_GREEK = str.maketrans(
    {
        letter: name
        for letters, name in (
            ("αΑ", "alpha"), ("βΒ", "beta"), ("γΓ", "gamma"), ("δΔ", "delta"), ("εΕϵ", "epsilon"), ("ζΖ", "zeta"),
            ("ηΗ", "eta"), ("θΘ", "theta"), ("ιΙ", "iota"), ("κΚ", "kappa"), ("λΛ", "lambda"), ("μΜµ", "mu"),
            ("νΝ", "nu"), ("ξΞ", "xi"), ("πΠ", "pi"), ("ρΡ", "rho"), ("σςΣ", "sigma"), ("τΤ", "tau"),
            ("φΦ", "phi"), ("χΧ", "chi"), ("ψΨ", "psi"), ("ωΩ", "omega"),
        )
        for letter in letters
    }
)  # fmt: skip
"""Greek letters as their names: a line named 'γδ T' is typed 'gamma delta T' (TNF-α as 'TNF-alpha')."""


def spelled_out(text: str) -> str:
    """`text` with each Greek letter as its name, a word of its own ("γδ T (Vδ2)" → " gamma  delta  T (V delta 2)"):
    the name's words as a person types them."""
    return "".join(f" {part} " if len(part) > 1 else part for part in (c.translate(_GREEK) for c in text))


def _norm(text: str) -> str:
    """Case-, punctuation- and Greek-insensitive form: 'K562 dTAG' and 'k562-dtag' are the same, so are 'γδ T' and
    'gamma delta T'."""
    return "".join(_SPLIT.split(text.translate(_GREEK).casefold()))


_PLURAL = re.compile(r"[A-Za-z0-9]{3,}s$")


def _match_level(query: str, value: str | None, *, exact: bool) -> int:
    if not value:
        return _NONE
    if exact:
        return _EXACT if value.strip().casefold() == query.strip().casefold() else _NONE
    q, v = _norm(query), _norm(value)
    if not q:
        return _NONE
    if q == v:
        return _EXACT
    if len(q) <= _WORD_ONLY_LEN and q.isalpha():
        # a few letters start a word of the name ("AB" of "Danio rerio AB", "HEK" of HEK293T), not letters inside
        # one (the "ab" of Zebrabow)
        words = _SPLIT.split(spelled_out(value).casefold())
        return _SUBSTRING if any(w.startswith(q) for w in words) else _NONE
    if q in v or (_PLURAL.search(query.strip()) and q[:-1] in v):  # "Jurkats", "HUVECs": the name's tubes
        return _SUBSTRING
    if len(q) >= _FUZZY_MIN_LEN:
        # Compare with the whole value, each of its words and its start, so 'K652' finds 'K562-dTAG-BRD4' too.
        candidates = [v, v[: len(q)], *(t for t in _SPLIT.split(value.casefold()) if t)]
        if difflib.get_close_matches(q, candidates, n=1, cutoff=_FUZZY_CUTOFF):
            return _FUZZY
    return _NONE


def _best(query: str, values: Iterable[str | None], *, exact: bool) -> int:
    return max((_match_level(query, v, exact=exact) for v in values), default=_NONE)


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise ToolError(
            "invalid_argument", f"limit must be at least 1, not {limit}.", hint="Use limit=20.", field="limit"
        )


def check_box(inventory: Inventory, box: int | None, *, hint: str = "Leave box out to search all boxes.") -> None:
    """ToolError `invalid_box` when `box` is not one of the inventory's (said in the person's language: they may
    read it as the reason nothing was done)."""
    count = inventory.meta.box_count
    if box is not None and not 1 <= box <= count:
        raise ToolError(
            "invalid_box",
            f"Box {box} does not exist: boxes are numbered 1..{count}.",
            hint=hint,
            field="box",
            key="ln2.error.invalid_box",
            values={"box": box, "count": count},
        )


def _short(text: str) -> str:
    return text if len(text) <= _NOTE_CHARS else text[: _NOTE_CHARS - 1].rstrip() + "…"


def _hit(record: Record, layout: BoxLayout) -> dict[str, Any]:
    """A record as the model sees it: only the fields that have a value."""
    hit: dict[str, Any] = {"id": record.id, "parent_cell_line": record.parent_cell_line}
    for key in ("short_name", "plasmid_name", "plasmid_id"):
        if value := getattr(record, key):
            hit[key] = value
    hit["box"] = record.box
    if record.positions:
        hit["positions"] = record.positions
        hit["labels"] = " ".join(position_label(p, layout) for p in record.positions)
    else:
        hit["consumed"] = True
    hit["frozen_at"] = record.frozen_at
    if record.note:
        hit["note"] = _short(record.note)
    if record.custom:  # the user's own fields (e.g. batch, operator)
        hit["custom"] = {key: _short(value) for key, value in record.custom.items()}
    return hit


def _distinct(values: Iterable[str | None]) -> list[str]:
    return sorted({v for v in values if v}, key=str.casefold)


def _notes(notes: Sequence[str]) -> dict[str, str]:
    return {"note": " ".join(notes)} if notes else {}


_Filters = list[tuple[str, tuple[str, ...]]]


def _filters(cell_line: str | None, short_name: str | None, plasmid: str | None) -> _Filters:
    return [
        (q, fields)
        for q, fields in (
            (cell_line, ("parent_cell_line", "short_name")),
            (short_name, ("short_name",)),
            (plasmid, ("plasmid_name", "plasmid_id")),
        )
        if q is not None and q.strip()
    ]


def _scored(inventory: Inventory, filters: _Filters, *, box: int | None, exact: bool) -> list[tuple[int, Record]]:
    """(match level, record) of the records in `box` (any box: None) that match every filter, in file order; when
    none does, those that match the filters said without the words a name comes with ("the WIK straw": WIK)."""
    scored = _scored_as_said(inventory, filters, box=box, exact=exact)
    bare = [(_HOLDER.sub("", _HOLDER.sub("", q.strip())).strip(), fields) for q, fields in filters]
    if bare == filters or not all(q for q, _ in bare) or max((level for level, _ in scored), default=_NONE) > _FUZZY:
        return scored
    return _scored_as_said(inventory, bare, box=box, exact=exact) or scored


def _scored_as_said(
    inventory: Inventory, filters: _Filters, *, box: int | None, exact: bool
) -> list[tuple[int, Record]]:
    scored: list[tuple[int, Record]] = []
    for record in inventory.records:
        if box is not None and record.box != box:
            continue
        level = min(
            (_best(q, (getattr(record, f) for f in fields), exact=exact) for q, fields in filters), default=_EXACT
        )
        if level > _NONE:
            scored.append((level, record))
    return scored


def best_named(
    inventory: Inventory, *, cell_line: str | None = None, short_name: str | None = None, plasmid: str | None = None
) -> tuple[list[Record], bool]:
    """The records with tubes left that match the names best (exact over contained over a close spelling, as in
    `query_inventory`), in file order, and whether those are only close spellings. No name: every such record."""
    scored = [
        (level, r)
        for level, r in _scored(inventory, _filters(cell_line, short_name, plasmid), box=None, exact=False)
        if not r.consumed
    ]
    top = max((level for level, _ in scored), default=_NONE)
    return [r for level, r in scored if level == top], top == _FUZZY


def query_inventory(
    inventory: Inventory,
    *,
    cell_line: str | None = None,
    short_name: str | None = None,
    plasmid: str | None = None,
    box: int | None = None,
    exact: bool = False,
    include_consumed: bool = False,
    limit: int = 20,
) -> dict[str, Any]:
    """Records matching all given filters (no filter = all records), best matches first, then in file order.

    `cell_line` is compared with parent_cell_line and short_name, `short_name` with short_name, `plasmid` with
    plasmid_name and plasmid_id — case-insensitively. By default a filter matches a substring ignoring punctuation
    ('k562' matches K562, K562-dTAG and K562-RTCB) and, when nothing matches that way, a close spelling ('K652');
    `exact=True` requires the whole value to be equal. Consumed records are left out unless `include_consumed`.

    Returns `{"total", "records": [hit, ...] (at most `limit`)}` plus, when they apply: `distinct_names` (the
    different parent cell lines among all matches, when more than one), `distinct_short_names` (when one cell line
    but several short names), `consumed_hidden` (matching consumed records left out) and `note`.
    """
    _check_limit(limit)
    check_box(inventory, box)
    filters = _filters(cell_line, short_name, plasmid)
    scored = _scored(inventory, filters, box=box, exact=exact)
    notes = []
    close = bool(scored) and max(level for level, _ in scored) == _FUZZY
    if close:
        asked = ", ".join(repr(q) for q, _ in filters)
        notes.append(f"Nothing contains {asked}; these are close spellings — confirm with the user.")
    else:
        scored = [(level, r) for level, r in scored if level > _FUZZY]
    matches = [r for _, r in sorted(scored, key=lambda item: -item[0])]  # stable: file order within a level
    consumed_hidden = 0
    if not include_consumed:
        consumed_hidden = sum(r.consumed for r in matches)
        matches = [r for r in matches if not r.consumed]
    result: dict[str, Any] = {"total": len(matches), "records": [_hit(r, inventory.layout) for r in matches[:limit]]}
    cell_lines = _distinct(r.parent_cell_line for r in matches)
    if len(cell_lines) > 1:
        result["distinct_names"] = cell_lines
    elif len(short_names := _distinct(r.short_name for r in matches)) > 1:
        result["distinct_short_names"] = short_names
    if consumed_hidden:
        result["consumed_hidden"] = consumed_hidden
    if close and matches:
        result["close_spellings"] = True
    if len(matches) > limit:
        notes.append(f"Showing {limit} of {len(matches)}; narrow the filters or raise limit.")
    return result | _notes(notes)


def used_up(inventory: Inventory, **filters: Any) -> list[dict[str, Any]]:
    """The consumed records matching `filters` (at most 3, newest use first): id, name, the day their last tube went."""
    found = query_inventory(inventory, include_consumed=True, limit=len(inventory.records) or 1, **filters)
    if found.get("close_spellings"):
        return []  # only close spellings: nothing of the name asked was used up
    used = []
    for hit in found["records"]:
        record = inventory.record(hit["id"])
        if record is None or not record.consumed:
            continue
        last = max((e.date for e in record.thaw_events), default=None)
        used.append(
            {"id": record.id, "name": record.short_name or record.parent_cell_line} | ({"on": last} if last else {})
        )
    return sorted(used, key=lambda u: u.get("on", ""), reverse=True)[:3]


def _search_fields(record: Record) -> list[tuple[str, str]]:
    fields = [
        (key, value)
        for key in ("parent_cell_line", "short_name", "plasmid_name", "plasmid_id", "frozen_at", "note")
        if (value := getattr(record, key))
    ]
    fields += [("thaw_events", f"{e.date} {e.action} {e.note or ''}") for e in record.thaw_events]
    fields += list(record.custom.items())
    return fields


def search_records(
    inventory: Inventory, text: str, *, include_consumed: bool = True, limit: int = 20
) -> dict[str, Any]:
    """Records whose text fields (names, plasmids, dates, notes, thaw-event notes, the user's own fields) contain
    every word of `text`.

    Case-insensitive substring search (works for Chinese text too); when nothing contains the words, close
    spellings are tried. Each hit says in `matched` which fields matched. Returns `{"total", "records"}` plus
    `note` when the result is approximate or cut at `limit`.
    """
    _check_limit(limit)
    terms = [unaccented(t).casefold() for t in text.split()]
    if not terms:
        raise ToolError(
            "missing_required_field",
            "text is empty.",
            hint="Give a word to look for, e.g. a cell line, a plasmid id or a word from a note.",
            field="text",
        )

    def matched_fields(record: Record, fuzzy: bool) -> list[str] | None:
        fields = _search_fields(record)
        found: list[str] = []
        for term in terms:
            hits = [
                key
                for key, value in fields
                if term in unaccented(value).casefold() or (fuzzy and _match_level(term, value, exact=False) > _NONE)
            ]
            if not hits:
                return None
            found += [k for k in hits if k not in found]
        return found

    candidates = [r for r in inventory.records if include_consumed or not r.consumed]
    notes = []
    hits = [(r, m) for r in candidates if (m := matched_fields(r, fuzzy=False))]
    close = False
    # a date or a number is not spelled: "2026-02" is never close to "2025-02-14"
    if not hits and not any(_NUMERIC.fullmatch(term) for term in terms):
        hits = [(r, m) for r in candidates if (m := matched_fields(r, fuzzy=True))]
        close = bool(hits)
        if close:
            notes.append(f"Nothing contains {text.strip()!r}; these are close spellings — confirm with the user.")
    if len(hits) > limit:
        notes.append(f"Showing {limit} of {len(hits)}; add words or raise limit.")
    records = [_hit(r, inventory.layout) | {"matched": m} for r, m in hits[:limit]]
    return {"total": len(hits), "records": records} | ({"close_spellings": True} if close else {}) | _notes(notes)


_NUMERIC = re.compile(r"[\d\-/.:年月日号]+")
"""A search term that is a date or a number."""


def _ranges(numbers: Sequence[int]) -> str:
    """Sorted numbers as ranges: [1, 2, 3, 7, 9, 10] → '1-3, 7, 9-10'."""
    parts: list[str] = []
    start = prev = None
    for n in [*numbers, None]:
        if n is not None and prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return ", ".join(parts)


def _layout_help(layout: BoxLayout) -> str:
    n, last = layout.capacity, position_label(layout.capacity, layout)
    return f"{layout.rows}x{layout.cols} boxes, positions 1..{n} row by row (1=A1, {n}={last})"


def empty_positions(inventory: Inventory, *, box: int | None = None, limit: int | None = None) -> dict[str, Any]:
    """Free positions per box (all boxes, or only `box`), as compact ranges like '7-9, 14-18'.

    Returns `{"layout": ..., "boxes": [{"box", "free" (count), "positions" (ranges)}]}` and, over several boxes,
    `free_in_all` (counted here: "how many free positions in total" is read from it); boxes with no free position
    have no "positions". With `limit`, only the first `limit` free positions of each box are listed.
    """
    _check_limit(limit)
    check_box(inventory, box)
    layout, held = inventory.layout, occupancy(inventory)
    boxes = []
    for number in [box] if box is not None else range(1, inventory.meta.box_count + 1):
        free = [p for p in range(1, layout.capacity + 1) if (number, p) not in held]
        entry: dict[str, Any] = {"box": number, "free": len(free)}
        if free:
            entry["positions"] = _ranges(free[:limit])
            if limit is not None and len(free) > limit:
                entry["positions"] += ", …"
        boxes.append(entry)
    result: dict[str, Any] = {"layout": _layout_help(layout), "boxes": boxes}
    if len(boxes) > 1:
        result["free_in_all"] = sum(b["free"] for b in boxes)
    return result


def inventory_stats(inventory: Inventory) -> dict[str, Any]:
    """Occupancy per box and in total, record counts, and records/tubes per parent cell line.

    Returns `{"layout", "boxes": [{"box", "occupied", "free"}], "capacity", "occupied", "free", "records",
    "active_records", "consumed_records", "cell_lines": {name: {"records", "tubes"}}}`.
    """
    layout, held = inventory.layout, occupancy(inventory)
    per_box = {b: 0 for b in range(1, inventory.meta.box_count + 1)}
    for box_number, _ in held:
        per_box[box_number] += 1
    cell_lines: dict[str, dict[str, int]] = {}
    for record in sorted(inventory.records, key=lambda r: r.parent_cell_line.casefold()):
        line = cell_lines.setdefault(record.parent_cell_line, {"records": 0, "tubes": 0})
        line["records"] += 1
        line["tubes"] += len(record.positions)
    capacity = layout.capacity * inventory.meta.box_count
    consumed = sum(r.consumed for r in inventory.records)
    return {
        "layout": _layout_help(layout),
        "boxes": [{"box": b, "occupied": n, "free": layout.capacity - n} for b, n in per_box.items()],
        "capacity": capacity,
        "occupied": len(held),
        "free": capacity - len(held),
        "records": len(inventory.records),
        "active_records": len(inventory.records) - consumed,
        "consumed_records": consumed,
        "cell_lines": cell_lines,
    }
