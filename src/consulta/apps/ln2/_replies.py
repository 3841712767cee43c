"""ln2's own check of a final reply: a look-up turn is answered from its results, in the user's language, with the
counts code made.

The runtime's claim check (every agent) keeps a reply from saying something was done that was not. This check adds
what an inventory user needs on a turn that only looked things up: a reply that gives up ("I'm sorry, I can't assist
with that"), repeats the request back, answers a Chinese request in English, or answers "how many" with none of the
counts the tools made is written again with the reason, and if the rewrite fails too,
code says what the first look-up of the turn returned (its records, free positions, counts or audit entries).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...i18n import has_chinese, t
from ...runtime import FactRules, ReplyCheck, ReplyRefused, ToolOutcome, TurnFacts, compose_reply, echoes
from ._dates import said_date, said_days
from ._inventory import Inventory, load_inventory
from ._locate import said_boxes, said_places
from ._turns import (
    about_the_tank,
    asks_by_age,
    asks_for_cells,
    asks_for_change,
    asks_how,
    asks_lab_knowledge,
    asks_to_move,
    change_asked,
    named_in,
    tube_counts,
    unnamed_request,
)

__all__ = [
    "say_record",
    "answer_from_results",
    "asks_which_cells",
    "check_ln2_reply",
    "found_nothing",
    "ln2_facts",
    "stages_every_place",
    "summarize",
]

_HELPLESS = re.compile(
    r"\b(?:sorry|apologi[sz]e|can(?:no|')t\s+(?:assist|help)|unable\s+to\s+(?:assist|help)|try\s+again\s+later|"
    r"I\s+don'?t\s+know)\b|抱歉|对不起|无法(?:协助|帮助|继续|完成|提供)|请稍后",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"\b(?:no|not|none|nothing|never|zero|0|used\s+up|empty|free|out\s+of)\b|n't\b|没有|无|未|不|用完|空(?!位)",
    re.IGNORECASE,
)
_STILL_HAVE = re.compile(
    r"\bwe\s+(?:still\s+)?have\s+(?!no\b)|\bthere\s+(?:is|are)\s+still\b|(?:我们|咱们)?(?:还有|仍有)(?!没有)", re.I
)
"""Saying the tank still holds it (seen after a look-up that found none: "我们还有白色念珠菌SC5314，还有1个空位。")."""
_HOW_MANY = re.compile(r"\bhow\s+many\b|\bcount\b|\bnumber\s+of\b|多少|几管|几支|几个|几只|数量", re.IGNORECASE)


def _result(call: ToolOutcome) -> dict[str, Any] | None:
    """A successful read call's result as a dict (None for anything else)."""
    if not (call.kind == "read" and call.ok and call.data):
        return None
    try:
        data = json.loads(call.data)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def counted(facts: TurnFacts) -> set[int]:
    """The counts code made in the turn's look-ups (tubes listed, free positions of one box): what a reply to "how
    many" must say one of."""
    numbers: set[int] = set()
    for data in filter(None, map(_result, facts.calls)):
        if isinstance(data.get("tubes"), int):
            numbers.add(data["tubes"])
        boxes = data.get("boxes")
        if (
            isinstance(boxes, list)
            and len(boxes) == 1
            and isinstance(boxes[0], dict)
            and isinstance(boxes[0].get("free"), int)
        ):
            numbers.add(boxes[0]["free"])
        if isinstance(data.get("occupied"), int):
            numbers.add(data["occupied"])
        if isinstance(data.get("free_in_all"), int):
            numbers.add(data["free_in_all"])
    return numbers


def _record_counts(facts: TurnFacts) -> set[int]:
    """The tubes each record the turn's look-ups listed holds (a reply may count one record's tubes)."""
    return {
        len(found["positions"].split(","))
        for data in filter(None, map(_result, facts.calls))
        if isinstance(data.get("records"), list)
        for line in data["records"]
        if (found := _RECORD_LINE.match(str(line))) is not None and found["positions"]
    }


_RECORD_LINE = re.compile(
    r"^id (?P<id>\d+): (?P<name>.+?)(?:; plasmid (?P<plasmid>.+?))?; box (?P<box>\d+) "
    r"(?:positions (?P<positions>[\d,]+)|(?P<consumed>consumed)); frozen (?P<frozen>[^;]+)(?:; note: (?P<note>.*))?$"
)


def say_record(line: str, lang: str) -> str:
    """A record as the look-up tools list it ("id 4: HeLa; box 1 positions 28,29; frozen 2024-11-05"), said in
    `lang` (the names, dates and notes as they are); a line of another shape as it is."""
    found = _RECORD_LINE.match(line)
    if found is None or lang == "en":
        return line
    parts = [t("ln2.record.name", lang, id=found["id"], name=found["name"])]
    if found["plasmid"]:
        parts.append(t("ln2.record.plasmid", lang, plasmid=found["plasmid"]))
    if found["consumed"]:
        parts.append(t("ln2.record.consumed", lang, box=found["box"]))
    else:
        parts.append(t("ln2.record.positions", lang, box=found["box"], positions=found["positions"]))
    parts.append(t("ln2.record.frozen", lang, frozen=found["frozen"]))
    if found["note"]:
        parts.append(t("ln2.record.note", lang, note=found["note"]))
    return t("ln2.record.sep", lang).join(parts)


def summarize(call: ToolOutcome, lang: str) -> str | None:
    """What one read call returned, said by code in `lang` (None for a result it does not know the shape of)."""
    data = _result(call)
    if data is None:
        return None
    sep = "；" if lang == "zh-CN" else "; "
    if isinstance(data.get("records"), list):
        lines = [str(r) for r in data["records"]]
        if not lines:
            return _nothing_found(call, data, lang)
        total = data.get("total", len(lines))
        tubes = data.get("tubes", None)
        key = "ln2.reply.records" if tubes is not None else "ln2.reply.records_only"
        records = "\n".join(f"- {say_record(line, lang)}" for line in lines)  # one a line
        if by_name := _tubes_by_name(data):  # several lines of one name: how many of each, before the records
            counts = ("，" if lang == "zh-CN" else ", ").join(f"{n} {c}" for n, c in by_name.items())
            records = t("ln2.reply.by_name", lang, counts=counts) + "\n" + records
        said = t(key, lang, total=total, tubes=tubes, records=records)
        # nothing matched as asked: these are only close spellings, and the person is told so first
        return t("ln2.reply.close_spellings", lang) + said if data.get("close_spellings") else said
    if isinstance(data.get("entries"), list):
        entries = [f"{e.get('audit_id')}: {_summary_in(e, lang)}" for e in data["entries"] if isinstance(e, dict)]
        return t("ln2.reply.audit", lang, entries=sep.join(entries[-5:])) if entries else t("ln2.reply.no_audit", lang)
    boxes = data.get("boxes")
    if isinstance(boxes, list) and boxes and isinstance(boxes[0], dict):
        if "occupied" in data and "capacity" in data:  # the whole tank: its totals, not a table of every box
            return t(
                "ln2.reply.tank",
                lang,
                tubes=data["occupied"],
                boxes=len(boxes),
                free=data.get("free"),
            )
        if "positions" in boxes[0]:
            parts = [
                t("ln2.reply.free", lang, box=b.get("box"), free=b.get("free"), positions=b.get("positions"))
                for b in boxes
            ]
            if isinstance(data.get("free_in_all"), int):
                parts.insert(0, t("ln2.reply.free_in_all", lang, free=data["free_in_all"]))
        else:
            parts = [
                t("ln2.reply.box", lang, box=b.get("box"), occupied=b.get("occupied"), free=b.get("free"))
                for b in boxes
            ]
        return sep.join(parts) + ("。" if lang == "zh-CN" else ".")
    return None


def _summary_in(entry: dict[str, Any], lang: str) -> str:
    """An audit entry's summary in `lang` when the log holds it so (entries written before translations: English)."""
    said = entry.get("translations")
    summary = str(said.get(lang) or entry.get("summary")) if isinstance(said, dict) else str(entry.get("summary"))
    return summary.rstrip("。. ")  # the reply's own sentence ends it


def _tubes_by_name(data: dict[str, Any]) -> dict[str, int] | None:
    """Tubes per short name, as the look-up counted them (`tubes_by_name`, two to four names); None otherwise."""
    counts = data.get("tubes_by_name")
    if not isinstance(counts, dict) or not counts:
        return None
    return {str(name): int(count) for name, count in counts.items() if isinstance(count, int)}


def _nothing_found(call: ToolOutcome, data: dict[str, Any], lang: str) -> str:
    """A look-up that found no tube, said by code: the empty place asked about, or the name's used-up records."""
    args = call.args
    if args.get("position") is not None and args.get("box") is not None:
        return t("ln2.reply.no_tube_at", lang, box=args["box"], position=args["position"])
    name = next((str(args[k]) for k in ("cell_line", "short_name", "plasmid") if args.get(k)), None)
    used = [u for u in data.get("used_up") or () if isinstance(u, dict)]
    if name is not None and used:
        sep = "；" if lang == "zh-CN" else "; "
        records = sep.join(
            t("ln2.reply.used_up_record", lang, id=u.get("id"), name=u.get("name"), on=u.get("on", "?")) for u in used
        )
        return t("ln2.reply.none_left", lang, name=name, records=records)
    if name is not None:
        return t("ln2.reply.no_such", lang, name=name)
    return t("ln2.reply.none", lang)


def found_nothing(facts: TurnFacts) -> bool:
    """Whether the turn's first look-up of records found no tube (a negative answer is due)."""
    for call in facts.calls:
        data = _result(call)
        if data is not None and isinstance(data.get("records"), list):
            return not data["records"]
    return False


def _named_lookup(call: ToolOutcome) -> str | None:
    """The name a look-up of records asked for (cell line, short name or plasmid), folded; None for other calls."""
    if _result(call) is None:
        return None
    return next(
        (str(call.args[k]).casefold() for k in ("cell_line", "short_name", "plasmid") if call.args.get(k)), None
    )


def answer_from_results(facts: TurnFacts) -> str | None:
    """The turn's first successful look-up, said by code, and after it each later look-up of another name the person
    said ("where's the Calu-3, and how many T47D": both are the answer); None when the turn looked nothing up."""
    said: list[str] = []
    names: set[str | None] = set()
    asked = (facts.prompt or "").casefold()
    for call in facts.calls:
        name = _named_lookup(call)
        if said and (name is None or name in names or name not in asked):  # a later look-up: of a name the person said
            continue
        if name is not None and name not in asked and not (_result(call) or {}).get("records"):
            continue  # "no K562 tube" of a line the model guessed (seen: "can someone pull a vial for me …")
        if (summary := summarize(call, facts.lang)) is None:
            continue
        said.append(summary)
        names.add(name)
    return "\n".join(said) or None


_RECORD_NAME = re.compile(r"^id (\d+): ([^;(]+?)\s*(?:\(([^)]+)\))?(?:;|$)")


def _subject(facts: TurnFacts) -> set[str] | None:
    """What the turn's first look-up by name, of one box position or by a search (a month, a note's words) was about:
    the name asked for, the names of the records it found and their ids as "record N" / "记录 N" (None when the turn
    looked up none of these, or found no record). A reply about that look-up names one."""
    for call in facts.calls:
        data = _result(call)
        if data is None or not isinstance(data.get("records"), list):
            continue
        asked = [str(call.args[k]) for k in ("cell_line", "short_name", "plasmid") if call.args.get(k)]
        at_place = call.args.get("box") is not None and call.args.get("position") is not None
        searched = bool(call.args.get("text"))  # "frozen in February 2026": the records found are the answer
        if not (asked or at_place or searched) or not data["records"]:
            return None
        names = set(asked)
        for line in data["records"]:
            if found := _RECORD_NAME.match(str(line)):
                record, *named = found.groups()
                names |= {n.strip() for n in named if n} | {f"record {record}", f"记录 {record}", f"记录{record}"}
        return {n for n in names if n}
    return None


def _off_subject(text: str, facts: TurnFacts) -> bool:
    """Whether a reply to a look-up by name or place names none of what it found ("Do we have HeLa?" → "11 free
    positions in box 1"; "What is in box 4 position 28?" → "3 tubes in box 4 position 28, 29, and 30")."""
    names = _subject(facts)
    folded = text.casefold()
    return names is not None and not any(n.casefold() in folded for n in names)


_BOX_OF_HIT = re.compile(r"; box (\d+) positions? ")


_WHERE = re.compile(
    r"\bwhere\b|\blocat(?:e|ed|ion)\b|\bwhich\s+(?:box|position|slot|spot)\b|哪里|哪儿|在哪|放哪|哪个(?:位置|盒)|什么位置|位置",
    re.IGNORECASE,
)
_POSITIONS_OF_HIT = re.compile(r"; box \d+ positions ([\d,]+)")


_CLAUSE = re.compile(r"[,，;；、。?？!！]|\band\b|\balso\b|和|还有|以及|另外|再")


def _unplaced(text: str, facts: TurnFacts) -> bool:
    """Whether a reply to "where is …" leaves out the positions of a line the turn looked up by name and found (the
    box alone is not where a tube is: "1 Calu-3 tube in box 2" for box 2 position 37). The lines asked "where" of are
    those named in a clause that asks it ("where's the Calu-3, and how many T47D": the Calu-3); all found when no
    clause names one ("where are they?")."""
    where = [c.casefold() for c in _CLAUSE.split(facts.prompt or "") if _WHERE.search(c)]
    found = {
        name: data["records"]
        for call in facts.calls
        if (name := _named_lookup(call)) is not None
        and (data := _result(call)) is not None
        and isinstance(data.get("records"), list)
    }
    asked = {name: records for name, records in found.items() if any(name in clause for clause in where)} or found
    said = {int(n) for n in re.findall(r"\d+", text)}
    for records in asked.values():
        positions = {int(p) for line in records for run in _POSITIONS_OF_HIT.findall(str(line)) for p in run.split(",")}
        if positions and not positions & said:
            return True
    return False


def _unlocated(text: str, facts: TurnFacts) -> bool:
    """Whether a reply to a look-up by name ("Do we have HeLa?") that found tubes says none of their boxes: where
    they are is half the answer; to "where is …", their positions too. A "how many" question alone is answered by
    its count."""
    if facts.prompt and _WHERE.search(facts.prompt) and _unplaced(text, facts):
        return True
    if facts.prompt and _HOW_MANY.search(facts.prompt):
        return False
    for call in facts.calls:
        data = _result(call)
        if data is None or not isinstance(data.get("records"), list):
            continue
        if not any(call.args.get(k) for k in ("cell_line", "short_name", "plasmid")) or not data["records"]:
            return False
        boxes = {int(b) for line in data["records"] for b in _BOX_OF_HIT.findall(str(line))}
        return bool(boxes) and not (said_boxes(text) & boxes)
    return False


def check_ln2_reply(text: str, facts: TurnFacts) -> None:
    """Refuse a reply that gives up, repeats the user's words back, is not in the user's language, speaks of
    something other than the records the turn looked up by name, or does not say where they are, on a turn that
    only looked things up (its replacement: the look-up's result, said by code). A turn that tried a write is the
    claim check's."""
    if facts.staged or facts.applied or facts.questions or any(c.kind == "write" for c in facts.calls):
        return
    if facts.prompt and asks_for_cells(facts.prompt) and not _by_name(facts):
        return  # which cells is asked by `asks_which_cells`, not answered by a summary of the whole tank
    # On a request to change, what the turn did or did not do is the claim check's to say; this one only keeps a
    # reply from giving up, echoing, answering in another language or hiding that nothing is there.
    looking = not (facts.prompt and asks_for_change(facts.prompt))
    helpless = _HELPLESS.search(text)
    off_subject = looking and _off_subject(text, facts)
    echo = facts.prompt is not None and echoes(text, facts.prompt)
    wrong_language = facts.lang == "zh-CN" and not has_chinese(text)
    how_many = looking and facts.prompt is not None and _HOW_MANY.search(facts.prompt) is not None
    counts = counted(facts) if how_many else set()
    said = {int(n) for n in re.findall(r"\d+", text)}
    by_name = next((b for c in facts.calls if (d := _result(c)) is not None and (b := _tubes_by_name(d))), None)
    split = set(by_name.values()) if how_many and by_name else set()
    # a number said as a count of tubes is one the results counted (seen: "There are 7 Sf9 tubes left in box 7
    # positions 95,96" — the box's number said as the count), asked how many or not (eighteenth set: "3 tubes … frozen
    # this past week" of three records holding 5)
    each = _record_counts(facts)
    as_tubes = set(tube_counts(text)) if how_many or each else set()
    miscounted = (
        (bool(counts) and not ((counts | split) & said))
        or not split <= said
        or bool(as_tubes - counted(facts) - split - each)
    )
    not_negative = found_nothing(facts) and (not _NEGATIVE.search(text) or bool(_STILL_HAVE.search(text)))
    unlocated = looking and _unlocated(text, facts)
    if not (helpless or echo or wrong_language or miscounted or not_negative or off_subject or unlocated):
        return
    answer = answer_from_results(facts)
    if answer is None:
        return
    if helpless:
        reason = f'Your reply says "{helpless.group(0)}", but the tool results above answer the request.'
    elif echo:
        reason = "Your reply repeats the user's words; answer them."
    elif not_negative:
        reason = "The look-up found no tube: say that plainly (nothing is left, or nothing is there)."
    elif off_subject:
        reason = (
            "The user asked about the records the look-up found; your reply names none of them: answer about those."
        )
    elif unlocated:
        reason = "Say where the tubes are: each record's box and positions, as the results list them."
    elif miscounted and split:
        reason = (
            f"The user asked how many; the tubes of each name are {by_name}: say each count, do not count yourself."
        )
    elif miscounted:
        reason = f"The user asked how many; the tool results counted {sorted(counts)}: say that number, do not count yourself."
    else:
        reason = "The user writes Chinese: reply in Chinese."
    raise ReplyRefused(
        f"{reason} Say what the results show, in one or two short sentences, in the user's language.",
        replacement=answer,
        check="ln2",
    )


# ---- what counts as a fact, and the request that names no cells ------------------------------------------------

_UNITS = re.compile(
    r"-?\d+(?:\.\d+)?\s*(?:°\s*C|℃|%|(?:x\s*g|rpm|min|mins|minutes?|h|hrs?|hours?|s|secs?|seconds?|days?|weeks?|"
    r"ml|mL|µl|μl|ul|mM|µM|μM|nM)\b|分钟|小时|秒|天|周|度)",
    re.IGNORECASE,
)
"""Measurements (a thawing protocol's "37 °C", "5 minutes"): general knowledge, not facts of the inventory."""


_GENERAL = "an LN2 (liquid nitrogen, -196 °C) tank; a -80 freezer; a CO2 incubator; DMSO; 1 tube"
"""What the app itself says of its domain: words of the lab a reply may use without a tool saying them."""


def ln2_facts(inventory_path: Path) -> FactRules:
    """What counts as a fact in an ln2 reply: numbers, dates, ids, and every name the inventory holds; the tank's
    layout and today's date are declared; code's statement of a turn is what its first look-up found."""

    def inventory() -> Inventory | None:
        try:
            return load_inventory(inventory_path)
        except Exception:  # an unreadable file is reported by the tools; the check then knows no names
            return None

    def names() -> list[str]:
        inv = inventory()
        if inv is None:
            return []
        found = {
            v
            for r in inv.records
            for v in (r.parent_cell_line, r.short_name, r.plasmid_name, r.plasmid_id)
            if v and len(v) >= 3
        }
        return sorted(found)

    def declared() -> list[str]:
        inv = inventory()
        today = dt.date.today().isoformat()
        known = [today, _GENERAL]
        if inv is None:
            return known
        layout = inv.layout
        return [*known, f"{inv.meta.box_count} boxes of {layout.rows}x{layout.cols}, {layout.capacity} positions"]

    def say_found(facts: TurnFacts) -> str | None:
        """Which cells, when the words ask for cells and name none (the lines the tank holds); what the app does, when
        they do not touch the tank; else the look-up."""
        inv, words = inventory(), facts.prompt or ""
        if facts.staged or inv is None:
            return answer_from_results(facts)
        if _unnamed_request(facts, inv):
            return _which_cells(facts, inv)
        if words and (not about_the_tank(words, inv) or asks_lab_knowledge(words, inv)):
            return _off_tank(facts)
        if words and asks_to_move(words):
            found = answer_from_results(facts)
            return " ".join(part for part in (t("ln2.reply.no_move", facts.lang), found) if part)
        return answer_from_results(_by_age(_frozen_then(facts)))

    return FactRules(names=names, declared=declared, ignore=_UNITS, say_found=say_found)


_FROZE = re.compile(
    r"\b(?:froze|frozen|freez\w*|put\s+in(?:to)?|added|stored|went\s+in(?:to)?)\b|冻存|冻的|冻了|存进|存了|放进|放了",
    re.IGNORECASE,
)
_FROZEN_ON = re.compile(r"frozen (\d{4}-\d{2}-\d{2})")
_POSITIONS = re.compile(r"\bpositions? ([\d,\s]+)")
_PLACES = re.compile(r"\d+")


def _frozen_then(facts: TurnFacts) -> TurnFacts:
    """The turn's facts, a search of a month narrowed to the records frozen then when the words ask what was frozen
    ("2025年4月冻存了哪些细胞？") — within the days they name, for a span ("what went in over the last 7 days?": each
    month of the span searched) — the search finds every record whose text holds the month, a thaw's date too."""
    words = facts.prompt or ""
    month, span = said_date(words), said_days(words)
    if (month is None and span is None) or not _FROZE.search(words):
        return facts

    def kept(line: object, searched: str) -> bool:
        frozen = _FROZEN_ON.search(str(line))
        if span is None:
            return f"frozen {searched}" in str(line)
        return (
            frozen is not None
            and frozen[1].startswith(searched)
            and span[0].isoformat() <= frozen[1] <= span[1].isoformat()
        )

    def narrowed(call: ToolOutcome) -> ToolOutcome:
        data = _result(call)
        searched = str(call.args.get("text") or "")
        if call.name != "search_records" or data is None or (span is None and searched != month):
            return call
        if span is not None and not re.fullmatch(r"\d{4}-\d{2}", searched):
            return call
        return _with_records(call, data, [r for r in data.get("records") or [] if kept(r, searched)])

    return replace(facts, calls=tuple(narrowed(c) for c in facts.calls))


def _by_age(facts: TurnFacts) -> TurnFacts:
    """The turn's facts, each look-up of records narrowed to those frozen first (or last) when the words ask for the
    oldest (or newest) tubes ("whats the oldest stuff in the tank"): code compares the dates, not the model."""
    age = asks_by_age(facts.prompt or "")
    if age is None:
        return facts

    def narrowed(call: ToolOutcome) -> ToolOutcome:
        data = _result(call)
        records = data.get("records") if data is not None else None
        dated = [(m[1], r) for r in records or () if (m := _FROZEN_ON.search(str(r)))]
        if data is None or not dated:
            return call
        when = (max if age == "newest" else min)(d for d, _ in dated)
        return _with_records(call, data, [r for d, r in dated if d == when])

    return replace(facts, calls=tuple(narrowed(c) for c in facts.calls))


def _with_records(call: ToolOutcome, data: dict[str, Any], lines: list[Any]) -> ToolOutcome:
    """`call` as if its look-up had found only the records `lines` (of its result `data`): their total, and their
    tubes counted again when the result counts tubes (its count by name left out, no longer true)."""
    kept = {k: v for k, v in data.items() if k != "tubes_by_name"} | {"records": lines, "total": len(lines)}
    if "tubes" in data:
        kept["tubes"] = sum(len(_PLACES.findall(m[1])) for line in lines if (m := _POSITIONS.search(str(line))))
    return replace(call, data=json.dumps(kept, ensure_ascii=False))


_THANKS = re.compile(r"\b(?:thanks?|thank\s+you|thx|cheers)\b|谢谢|多谢|感谢|谢了", re.IGNORECASE)


def _off_tank(facts: TurnFacts) -> str:
    """Code's reply to words that do not touch the tank, or ask how to do something in the lab: that the app keeps
    the tank's inventory and gives no lab methods, thanks acknowledged, or what the app does; then the tank's totals
    as the turn's look-up returned them."""
    words = facts.prompt or ""
    key = (
        "ln2.reply.how_to"
        if asks_how(words)
        else "ln2.reply.welcome"
        if _THANKS.search(words)
        else "ln2.reply.off_tank"
    )
    lead = t(key, facts.lang)
    found = answer_from_results(facts)
    return f"{lead} {found}" if found else lead


_ASKS = re.compile(r"[?？]|吗|呢")


def asks_which_cells(inventory_path: Path) -> ReplyCheck:
    """A request for cells that names none ("I need some cells for tomorrow") is answered with a question: which
    cells, among the lines the inventory holds — never a line the model picked itself."""

    def check(text: str, facts: TurnFacts) -> None:
        words = facts.prompt
        if not words or facts.staged or facts.applied or facts.questions or not asks_for_cells(words):
            return
        try:
            inventory = load_inventory(inventory_path)
        except Exception:
            return
        if named_in(words, inventory) is not None or said_boxes(words) or _ASKS.search(text):
            return
        raise ReplyRefused(
            "The user did not say which cells they need: do not pick any. Ask them which cells, in one short "
            "question in their language.",
            replacement=_which_cells(facts, inventory),
            check="ln2",
        )

    return check


def _which_cells(facts: TurnFacts, inventory: Inventory | None) -> str:
    """Code's question of which cells, listing the lines with tubes left: as the turn's look-up returned them (on
    record), else as the file has them; that the tank holds none, when it is empty."""
    held = _lines_held(facts)
    if held is None:
        held = [r.parent_cell_line for r in inventory.records if r.positions] if inventory is not None else []
    lines = sorted(set(held), key=str.casefold)
    if not lines:
        return t("ln2.reply.tank_empty", facts.lang)
    return t("ln2.reply.which_cells", facts.lang, lines=", ".join(lines[:12]))


def _lines_held(facts: TurnFacts) -> list[str] | None:
    """The cell lines with tubes left, as the turn's inventory statistics returned them (None: none was read)."""
    for call in facts.calls:
        data = _result(call)
        if data is not None and isinstance(data.get("cell_lines"), dict):
            return [str(n) for n, c in data["cell_lines"].items() if not isinstance(c, dict) or c.get("tubes")]
    return None


def _unnamed_request(facts: TurnFacts, inventory: Inventory) -> bool:
    """Whether the turn asks for cells, or to take tubes out, without pointing at any and looked none up by name
    (code asks which)."""
    return bool(facts.prompt) and unnamed_request(facts.prompt or "", inventory) and not _by_name(facts)


def _by_name(facts: TurnFacts) -> bool:
    """Whether the turn looked something up by a name."""
    return any(c.args.get(k) for c in facts.calls for k in ("cell_line", "short_name", "plasmid"))


def _staged_places(facts: TurnFacts) -> set[tuple[int, int]] | None:
    """The (box, position) pairs the turn's staged thaws named, or None when one named its tubes otherwise (by a
    name or a record id: their places are not in its arguments)."""
    places: set[tuple[int, int]] = set()
    for call in facts.calls:
        if call.kind != "write" or not call.ok:
            continue
        refs = call.args.get("entries") if call.name == "batch_thaw" else [call.args]
        for ref in refs if isinstance(refs, list) else []:
            box, positions = (ref.get("box"), ref.get("positions")) if isinstance(ref, dict) else (None, None)
            if not isinstance(box, int) or not isinstance(positions, list) or not positions:
                return None
            places |= {(box, p) for p in positions if isinstance(p, int)}
    return places


def stages_every_place(inventory_path: Path) -> ReplyCheck:
    """A request naming several tubes by place ("box 4 position 1 and box 5 position 19", "2号盒1到3号位") stages
    every one of them: a reply after a plan that left some out is refused, and the model stages the rest (a plan grows
    by each call)."""

    def check(text: str, facts: TurnFacts) -> None:
        if not facts.staged or facts.applied or not facts.prompt or change_asked(facts.prompt) != "take":
            return  # new tubes go where the words put them (`Ln2Plans.ground_args`), not where the call said
        try:
            layout = load_inventory(inventory_path).layout
        except Exception:
            return
        named = said_places(facts.prompt, layout)
        staged = _staged_places(facts)
        if sum(len(ps) for ps in named.values()) < 2 or staged is None:
            return
        missing = sorted((box, p) for box, ps in named.items() for p in ps if (box, p) not in staged)
        if missing:
            places = "; ".join(f"box {box} position {p}" for box, p in missing)
            left_out = ("；" if facts.lang == "zh-CN" else "; ").join(
                t("ln2.reply.place", facts.lang, box=box, position=p) for box, p in missing
            )
            raise ReplyRefused(
                f"The user also named {places}; the plan does not take them out yet. Stage them too (record_thaw "
                "with that box and positions, the same action), then say in one sentence what is staged.",
                replacement=f"{compose_reply(facts)} {t('ln2.reply.not_staged', facts.lang, places=left_out)}",
                check="ln2",
            )

    return check
