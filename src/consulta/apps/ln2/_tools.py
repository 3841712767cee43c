"""ln2's tools: read tools over the inventory, write tools that build operations, and the plan executor.

The write tools only build an operation; the runtime stages it after `Ln2Plans.check_grounding` and
`Ln2Plans.validate`, and `Ln2Plans.apply` writes an approved plan atomically with its audit lines.
"""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...i18n import t, unaccented
from ...runtime import Choice, Evidence, ToolDef, ToolError, read_tool, write_tool
from ._audit import read_audit
from ._inventory import BoxLayout, Inventory, Record, load_inventory
from ._locate import (
    TubeRef,
    _candidate,
    labels_outside,
    locate,
    place_said,
    said_after_a_box,
    said_boxes,
    said_places,
    said_positions,
    taken_back,
    tube_choice,
)
from ._operations import apply_plan, parse_op, preview, reconcile_plan
from ._queries import best_named, check_box, used_up
from ._queries import empty_positions as _empty_positions
from ._queries import inventory_stats as _inventory_stats
from ._queries import query_inventory as _query_inventory
from ._queries import search_records as _search_records
from ._turns import action_for, asks_for_one, change_asked, named_in, tubes_said

__all__ = ["Ln2Plans", "ln2_tools"]

ThawAction = Literal["thaw", "takeout", "discard"]


def _today() -> str:
    return dt.date.today().isoformat()


def ln2_tools(inventory_path: Path) -> tuple[ToolDef, ...]:
    """The read and write tools over the inventory file at `inventory_path` (read afresh on every call)."""

    def inv() -> Inventory:
        return load_inventory(inventory_path)

    @read_tool
    def query_inventory(
        cell_line: str | None = None,
        short_name: str | None = None,
        plasmid: str | None = None,
        box: int | None = None,
        position: int | None = None,
        exact: bool = False,
        include_consumed: bool = False,
        frozen_first: bool | None = None,
    ) -> dict[str, Any]:
        """Find tube records by cell line, short name, plasmid, box or box + position: where tubes are, how many.

        Args:
            cell_line: Parent cell line or short name, as the user wrote it.
            short_name: Short name, as the user wrote it.
            plasmid: Plasmid name or id.
            box: Box number.
            position: Position in the box (with box): the record holding it.
            exact: Match names exactly instead of fuzzily.
            include_consumed: Also list records with no tubes left.
            frozen_first: List the records by the day they were frozen: true, the oldest first; false, the newest.
        """
        inventory = inv()
        found = _query_inventory(
            inventory,
            cell_line=cell_line,
            short_name=short_name,
            plasmid=plasmid,
            box=box,
            exact=exact,
            include_consumed=include_consumed,
            limit=len(inventory.records) or 1,
        )
        if position is not None:
            holding = [r for r in found["records"] if position in (r.get("positions") or ())]
            found = {"total": len(holding), "records": holding} | (
                {}
                if holding
                else {"note": f"No tube at position {position}" + (f" of box {box}." if box is not None else ".")}
            )
        # Counting is done here: a small model adds up lists of positions badly.
        found["tubes"] = sum(len(r.get("positions") or ()) for r in found["records"])
        if by_name := _tubes_by_name(found):
            found["tubes_by_name"] = by_name
        if frozen_first is not None:  # the oldest or newest among the first shown, however many records there are
            dated = [r for r in found["records"] if r.get("frozen_at")]
            dated.sort(key=lambda r: str(r["frozen_at"]), reverse=not frozen_first)  # a day's records in file order
            found["records"] = dated + [r for r in found["records"] if not r.get("frozen_at")]
        found["records"] = found["records"][:20]
        if not found["tubes"] and position is None and (cell_line or short_name or plasmid):
            # nothing left: say which records of that name were used up, and when (a negative answer, grounded)
            if used := used_up(inventory, cell_line=cell_line, short_name=short_name, plasmid=plasmid, box=box):
                found["used_up"] = used
        return _compact(found)

    @read_tool
    def search_records(text: str) -> dict[str, Any]:
        """Search all text of the records (names, plasmids, dates, notes) for the given words.

        Args:
            text: Words to look for.
        """
        found = _search_records(inv(), text)
        found["tubes"] = sum(len(r.get("positions") or ()) for r in found["records"])  # code counts, not the model
        return _compact(found, with_note=True)

    @read_tool
    def empty_positions(box: int | None = None) -> dict[str, Any]:
        """List the free positions, per box or for one box.

        Args:
            box: Only this box.
        """
        return _empty_positions(inv(), box=box)

    @read_tool
    def inventory_stats() -> dict[str, Any]:
        """Counts per box and per cell line: occupied and free positions, consumed records."""
        return _inventory_stats(inv())

    @read_tool
    def audit_history(limit: int = 10) -> dict[str, Any]:
        """The latest applied changes (newest last), with the audit ids that rollback takes.

        Args:
            limit: How many entries.
        """
        log = read_audit(inventory_path, limit=limit)
        return {
            "entries": [
                {"audit_id": e.audit_id, "ts": e.ts, "op": e.op, "summary": e.summary}
                | ({"translations": e.translations} if e.translations else {})
                for e in log.entries
            ]
        }

    @write_tool
    def add_entry(
        parent_cell_line: str,
        box: int,
        positions: list[int],
        frozen_at: str | None = None,
        short_name: str | None = None,
        plasmid_name: str | None = None,
        plasmid_id: str | None = None,
        note: str | None = None,
    ) -> dict[str, Any]:
        """Stage freezing new tubes: a new record in `box` at `positions` (1..rows*cols, row by row).

        Args:
            parent_cell_line: Parent cell line, as the user wrote it.
            box: Box number.
            positions: Positions of the new tubes.
            frozen_at: Freezing date YYYY-MM-DD (default today).
            short_name: Short name of the line.
            plasmid_name: Plasmid name.
            plasmid_id: Plasmid id.
            note: Free note.
        """
        return _op(
            "add_entry",
            parent_cell_line=parent_cell_line,
            box=box,
            positions=positions,
            frozen_at=frozen_at or _today(),
            short_name=short_name,
            plasmid_name=plasmid_name,
            plasmid_id=plasmid_id,
            note=note,
        )

    @write_tool
    def record_thaw(
        box: int | None = None,
        positions: list[int] | None = None,
        cell_line: str | None = None,
        short_name: str | None = None,
        plasmid: str | None = None,
        record_id: int | None = None,
        date: str | None = None,
        action: ThawAction = "thaw",
        note: str | None = None,
    ) -> dict[str, Any]:
        """Stage taking tubes out (thaw, takeout or discard), named as the user did: box + positions, or a cell line, short name or plasmid (box/positions narrow it). record_id is optional.

        Args:
            box: Box number.
            positions: Positions of the tubes.
            cell_line: Cell line or short name, only as the user wrote it.
            short_name: Short name, only as the user wrote it.
            plasmid: Plasmid name or id.
            record_id: Record id, only if known.
            date: Date YYYY-MM-DD (default today).
            action: thaw, takeout or discard.
            note: Free note.
        """
        ref = TubeRef(
            box=box,
            positions=positions,
            cell_line=cell_line,
            short_name=short_name,
            plasmid=plasmid,
            record_id=record_id,
        )
        return _thaw_op(locate(inv(), ref), date=date, action=action, note=note)

    @write_tool
    def batch_thaw(
        entries: list[TubeRef], date: str | None = None, action: ThawAction = "thaw", note: str | None = None
    ) -> dict[str, Any]:
        """Stage taking tubes out of several records at once; each entry names tubes like record_thaw does.

        Args:
            entries: One item per group of tubes: box + positions, or a name (cell_line/short_name/plasmid), or record_id.
            date: Date YYYY-MM-DD (default today).
            action: thaw, takeout or discard.
            note: Free note.
        """
        inventory = inv()
        found: list[tuple[int, list[int]]] = []
        for index, entry in enumerate(entries):
            try:
                found += locate(inventory, entry)
            except ToolError as error:
                error.message = f"entries[{index}]: {error.message}"
                error.choice = None  # an option's arguments name one call's tubes, not an entry's
                raise
        return _thaw_op(found, date=date, action=action, note=note, batch=True)

    @write_tool
    def rollback(audit_id: str) -> dict[str, Any]:
        """Stage restoring the inventory to exactly how it was before an applied change.

        Args:
            audit_id: The audit id of the change to undo (from audit_history).
        """
        return _op("rollback", audit_id=audit_id)

    return (
        query_inventory,
        search_records,
        empty_positions,
        inventory_stats,
        audit_history,
        add_entry,
        record_thaw,
        batch_thaw,
        rollback,
    )


def _tubes_by_name(found: dict[str, Any]) -> dict[str, int] | None:
    """Tubes per short name when a look-up found two to four of them ("HCT116" → HCT116-WT 4, HCT116-TP53-KO 3):
    counted here, so the person's "how many of each" is answered from the result; None otherwise."""
    names = found.get("distinct_short_names")
    if not isinstance(names, list) or not 2 <= len(names) <= 4:
        return None
    counts = dict.fromkeys(map(str, names), 0)
    for hit in found["records"]:
        if hit.get("short_name") in counts:
            counts[hit["short_name"]] += len(hit.get("positions") or ())
    return counts if all(counts.values()) else None


def _compact(result: dict[str, Any], *, with_note: bool = False) -> dict[str, Any]:
    """Records as one line each: a small model pays for every token of a tool result, on every later step."""
    records = result.get("records")
    if not isinstance(records, list):
        return result
    return {**result, "records": [_record_line(r, with_note=with_note) for r in records]}


def _record_line(hit: dict[str, Any], *, with_note: bool) -> str:
    name = hit.get("short_name") or hit["parent_cell_line"]
    parts = [f"id {hit['id']}: {name}"]
    if hit.get("short_name") and hit["short_name"] != hit["parent_cell_line"]:
        parts[0] += f" ({hit['parent_cell_line']})"
    if hit.get("plasmid_name"):
        parts.append(f"plasmid {hit['plasmid_name']}")
    positions = hit.get("positions")
    parts.append(
        f"box {hit['box']} positions {','.join(map(str, positions))}" if positions else f"box {hit['box']} consumed"
    )
    parts.append(f"frozen {hit['frozen_at']}")
    if with_note and hit.get("note"):
        parts.append(f"note: {hit['note']}")
    return "; ".join(parts)


def _thaw_op(
    found: list[tuple[int, list[int]]], *, date: str | None, action: ThawAction, note: str | None, batch: bool = False
) -> dict[str, Any]:
    """A record_thaw of one record's tubes, or a batch_thaw when the tubes belong to several records (or `batch`)."""
    groups: dict[int, list[int]] = {}
    for record_id, positions in found:
        groups.setdefault(record_id, []).extend(p for p in positions if p not in groups.get(record_id, ()))
    day = date or _today()
    if len(groups) == 1 and not batch:
        ((record_id, positions),) = groups.items()
        return _op("record_thaw", record_id=record_id, positions=positions, date=day, action=action, note=note)
    entries = [{"record_id": r, "positions": p} for r, p in groups.items()]
    return _op("batch_thaw", entries=entries, date=day, action=action, note=note)


def _op(op: str, **fields: Any) -> dict[str, Any]:
    """The operation as a JSON dict, checked by the domain model (bad fields → ToolError)."""
    return parse_op({"op": op, **{k: v for k, v in fields.items() if v is not None}}).model_dump(
        mode="json", exclude_none=True
    )


_ID_MENTION = r"(?:\bid\b|\brecord\b|(?<![\w#])(?<!\d\s)#|编号|记录)\s*[:：#]?\s*{id}(?!\d)"
"""A record's id said as one ("record 16", "#16"); "#13" right after a box ("box2 #13") is a position, "Colon#7" a name."""


def _id_said(text: str, record_id: int, inventory: Inventory) -> bool:
    """Whether `text` says `record_id` as a record's id (`_ID_MENTION`), not as the number of a name it says ("把5号盒
    C8那支GUS-β #3取出来": the line GUS-β #3, not record 3)."""
    numbered = (
        n for r in inventory.records for n in (r.short_name, r.parent_cell_line, r.plasmid_name) if n and "#" in n
    )
    return re.search(_ID_MENTION.format(id=record_id), _without(text, numbered), re.IGNORECASE) is not None


def _without(text: str, names: Iterable[str | None]) -> str:
    """`text` with each of `names` taken out (case-insensitively, the longest first)."""
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return text


_DATE_WORDS = re.compile(r"\d{1,4}[-/.年月]\d{1,2}|yesterday|today|昨天|前天|今天|上周|last\s+\w+day", re.IGNORECASE)


@dataclass(frozen=True)
class Ln2Plans:
    """The plan executor for one inventory file."""

    path: Path

    # ---- grounding ------------------------------------------------------------------------------------------

    def ground_args(self, tool_name: str, args: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
        """A take-out names tubes by what the user said or the turn's data showed: a name, box or position nothing
        grounds (a small model copies examples and invents places) is left out, so the tubes are found from the
        user's words — or the runtime asks which, when those fit several."""
        said = change_asked(evidence.user_texts[-1]) if evidence.user_texts else None
        wrong = {"record_thaw": "add", "batch_thaw": "add", "add_entry": "take"}.get(tool_name)
        if wrong is not None and said == wrong:
            raise _wrong_operation(tool_name, said)
        if tool_name in ("record_thaw", "batch_thaw") and (
            action := action_for(evidence.user_texts[-1] if evidence.user_texts else "", self._names_the_call(args))
        ):
            args = {**args, "action": action}  # the user's verb decides it (seen: "拿出来解冻" staged as a takeout)
        if (
            tool_name in ("record_thaw", "batch_thaw")
            and args.get("date")
            and not _DATE_WORDS.search(" ".join((*evidence.user_texts, *evidence.answers)))
        ):
            # a date the person said nothing of (fourteenth set: the record's frozen date copied from the look-up,
            # refused, then the model asked "What is the date?"): the take-out is of today
            args = {k: v for k, v in args.items() if k != "date"}
        planned = _PLANNED.search(" ".join(evidence.user_texts)) is not None
        if tool_name in ("record_thaw", "batch_thaw") and planned and _later_than_today(args.get("date")):
            # "thaw all four GV3101 for tomorrow's floral dip" called with tomorrow's date (refused as the future,
            # then the model asked "What is the date tomorrow?"): a thaw planned is recorded as of today (a future
            # date the person did not put so is still refused)
            args = {k: v for k, v in args.items() if k != "date"}
        if tool_name == "record_thaw":
            return {**args, **self._grounded_ref(args, evidence)}
        if tool_name == "batch_thaw" and isinstance(args.get("entries"), list):
            return {**args, "entries": [self._grounded_entry(e, evidence) for e in args["entries"]]}
        if tool_name == "add_entry":
            return _named_whole(self._placed_as_said(args, evidence), evidence)
        return args

    def _names_the_call(self, args: dict[str, Any]) -> Callable[[str], bool]:
        """Whether a clause of the person's words names the call's tube: its box and a position, or its name."""
        names = [str(v).casefold() for v in _names_of(args).values()]
        box, positions = args.get("box"), args.get("positions") or ()

        @functools.cache
        def layout() -> BoxLayout | None:  # read only when a clause must be read for places
            try:
                return load_inventory(self.path).layout
            except ToolError:
                return None

        def names_it(clause: str) -> bool:
            if any(n in clause.casefold() for n in names):
                return True
            if not isinstance(box, int) or (grid := layout()) is None:
                return False
            return bool(set(positions) & said_places(clause, grid).get(box, set()))

        return names_it

    def _placed_as_said(self, args: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
        """New tubes go where the user's words put them in the call's box: positions the words did not say give way
        to the places they did (held-out: "box 2, spots F1 and F2" called as positions 1 and 2, refused as taken), and
        a call of some of them to all, when the words count as many tubes ("两管MRC-5，放2号盒第10和第11位" called
        with 11 alone)."""
        box, positions = args.get("box"), args.get("positions")
        if not isinstance(box, int) or not isinstance(positions, list):
            return args
        try:
            inventory = load_inventory(self.path)
        except ToolError:
            return args
        words = " ".join((*evidence.user_texts, *evidence.answers))
        said = said_places(words, inventory.layout).get(box)
        if not said or (set(positions) <= said and tubes_said(words) != len(said)):
            return args
        return {**args, "positions": sorted(said)}

    def _grounded_entry(self, entry: Any, evidence: Evidence) -> Any:
        """A batch entry grounded like a record_thaw call. Entries come validated, as TubeRefs (seen: never grounded,
        "thaw all 3 CHO-K1 pls" called with plasmid 'pls' and refused), or as dicts; anything else is left as it is."""
        if isinstance(entry, TubeRef):
            return TubeRef.model_validate(self._grounded_ref(entry.model_dump(), evidence))
        return self._grounded_ref(entry, evidence) if isinstance(entry, dict) else entry

    def _grounded_ref(self, ref: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
        words = " ".join((*evidence.user_texts, *evidence.answers))
        try:
            inventory = load_inventory(self.path)
        except ToolError:
            return dict(ref)
        rid = ref.get("record_id")
        if rid is not None and not _id_said(words, rid, inventory):
            record, places = inventory.record(rid), said_places(words, inventory.layout)
            elsewhere = bool(places) and (
                record is None
                or not any(record.box == box and set(record.positions) & at for box, at in places.items())
            )
            if rid in said_positions(words, inventory.layout) or elsewhere:
                # "box2 #13": the 13 was said as a place, not a record; "Colon#7，4号盒第42格": a record the user never
                # named, at none of the places they said (the model took the name's number for it)
                ref = {**ref, "record_id": None}
        kept = _grounded_ref(ref, evidence, inventory.layout)
        if kept is None:
            # Nothing the call named is grounded: name the tubes by the user's own words, if they name any.
            named = named_in(words, inventory)
            boxes = said_boxes(words)
            positions = sorted(said_positions(words, inventory.layout))
            kept = {**ref, **{k: None for k in ("cell_line", "short_name", "plasmid", "box", "positions")}}
            if named is not None:
                kept[named[1]] = named[0]
            if len(boxes) == 1:
                kept["box"] = next(iter(boxes))
                kept["positions"] = positions or None
            if named is None and kept["box"] is None:
                # nor a box: the one record the turn singles out, if any ("where are the U87s?" then "ok thaw the one
                # in position 3", called with no argument)
                kept = _narrowed_by_context(kept, inventory, evidence, words)
                if kept.get("box") is None:
                    return dict(ref)
        latest = evidence.user_texts[-1] if evidence.user_texts else words
        kept = _completed_from_words(kept, inventory, words)
        kept = _by_the_places_said(kept, inventory, words)
        kept = _without_strangers(kept, inventory, words)
        kept = _one_name_joined(kept, inventory)
        kept = _in_the_field_that_holds_it(kept, inventory)
        kept = _narrowed_by_context(kept, inventory, evidence, words)
        kept = _at_the_positions_said(kept, inventory, latest)
        kept = _only_the_positions_said(kept, inventory, latest)
        kept = _by_the_note_said(kept, inventory, latest)
        if not kept.get("positions") and kept.get("record_id") is None and _ALL.search(words):
            # "all the X tubes": every tube of the one record the name fits
            names = _names_of(kept)
            pool = (
                [r for r in best_named(inventory, **names)[0] if r.positions and kept.get("box") in (None, r.box)]
                if names
                else []
            )
            if len(pool) == 1 and (not _BOTH.search(words) or len(pool[0].positions) == 2):
                kept = {**kept, "box": pool[0].box, "positions": list(pool[0].positions)}
        return kept

    def check_grounding(self, tool_name: str, op: dict[str, Any], evidence: Evidence) -> None:
        inventory = load_inventory(self.path)
        kind = op.get("op")
        if kind == "add_entry":
            self._require_said(evidence, "parent_cell_line", op["parent_cell_line"])
            self._require_said(evidence, "box", op["box"])
            # a box the tank does not have is the reason nothing can be added, before any position is weighed
            check_box(inventory, op["box"], hint="Tell the user which boxes the tank has; add nothing.")
            _check_labels(inventory, evidence, names=(op.get("parent_cell_line"), op.get("short_name")))
            said = said_positions(" ".join((*evidence.user_texts, *evidence.answers)), inventory.layout)
            for position in op["positions"]:
                if position not in said:  # "F1" says position 46 of a 9 x 9 box
                    self._require_said(evidence, "positions", position)
            self._check_date(evidence, "frozen_at", op.get("frozen_at"))
        elif kind == "record_thaw":
            _check_labels(inventory, evidence)
            self._check_not_taken_back(inventory, evidence, op["positions"])
            self._check_record(inventory, evidence, op["record_id"], op["positions"], tool_name)
            self._check_date(evidence, "date", op.get("date"))
        elif kind == "batch_thaw":
            _check_labels(inventory, evidence)
            for entry in op["entries"]:
                try:
                    self._check_record(inventory, evidence, entry["record_id"], entry["positions"], tool_name)
                except ToolError as error:
                    error.choice = None  # an option's arguments name one call's tubes, not an entry's
                    raise
            self._check_date(evidence, "date", op.get("date"))
        elif kind == "rollback":
            audit_id = op["audit_id"]
            if not (evidence.said_by_user(audit_id) or evidence.seen_in_data(audit_id)):
                raise _ungrounded(
                    "audit_id", f"audit id {audit_id} was neither named by the user nor listed by audit_history."
                )

    @staticmethod
    def _check_not_taken_back(inventory: Inventory, evidence: Evidence, positions: list[int]) -> None:
        """A position the user said and then took back ("slot 11 … actually make that slot 13") is not theirs."""
        back = {p for text in evidence.user_texts for p in taken_back(text, inventory.layout)} & set(positions)
        if back:
            kept = sorted(set(positions) - back)
            raise _ungrounded(
                "positions",
                f"position {min(back)} was taken back by the user.",
                hint=f"Call record_thaw again now with positions={kept}: the ones said after." if kept else None,
            )

    @staticmethod
    def _require_said(evidence: Evidence, field: str, value: Any) -> None:
        if not (evidence.said_by_user(value) or evidence.answered(value)):
            raise _ungrounded(field, f"{field}={value!r} is not something the user said.")

    @staticmethod
    def _check_date(evidence: Evidence, field: str, value: str | None) -> None:
        if value is None or value == _today() or evidence.said_by_user(value):
            return
        if any(_DATE_WORDS.search(text) for text in (*evidence.user_texts, *evidence.answers)):
            return  # the user gave a date in words the model converted
        raise _ungrounded(field, f"{field}={value!r} is not a date the user gave (leave it out for today).")

    @staticmethod
    def _check_record(
        inventory: Inventory, evidence: Evidence, record_id: int, positions: list[int], tool_hint: str
    ) -> None:
        record = inventory.record(record_id)
        if record is None:
            return  # validation reports the unknown id
        words = (*evidence.user_texts, *evidence.answers)
        if any(_id_said(text, record_id, inventory) for text in words):
            return
        if set(positions) <= set(record.positions) and place_said(
            words, box=record.box, positions=positions, layout=inventory.layout
        ):
            return  # the user named the tubes' box and positions: those single the record out
        if record.short_name and (evidence.said_by_user(record.short_name) or evidence.answered(record.short_name)):
            return
        plasmids = {n for n in (record.plasmid_id, record.plasmid_name) if n and evidence.said_by_user(n)}
        if plasmids and [r for r in inventory.records if r.positions and {r.plasmid_id, r.plasmid_name} & plasmids] == [
            record
        ]:
            return  # the user named its plasmid, which no other record with tubes left has
        if _singled_out(inventory, evidence, words) == [record] and set(positions) <= set(record.positions):
            return  # the user's words ("the C122A one", "the one in box 5") fit this record alone
        active = [r for r in inventory.records if r.positions]
        chosen = [
            r
            for r in active
            if r.short_name and (evidence.answered(r.short_name) or evidence.said_by_user(r.short_name))
        ]
        if chosen:  # the user named other records than this one: say which ids those are
            listing = "; ".join(
                f"record_id {r.id} = {r.short_name}, box {r.box}, positions {','.join(map(str, r.positions))}"
                for r in chosen[:5]
            )
            raise _ungrounded(
                "record_id",
                f"record {record_id} ({record.short_name or record.parent_cell_line}) is not what the user named.",
                hint=f"The user named: {listing}. Call {tool_hint} again with that record_id.",
            )
        named = [
            r
            for r in active
            if any(evidence.said_by_user(n) or evidence.answered(n) for n in (r.short_name, r.parent_cell_line) if n)
        ]
        names = sorted({r.short_name or r.parent_cell_line for r in named})
        if record in named and len(names) == 1:
            return
        said = record.parent_cell_line if evidence.said_by_user(record.parent_cell_line) else None
        if said and len(names) > 1:
            detail = f"'{said}' matches {len(names)} lines: {', '.join(names[:8])}."
            asked = ("ln2.choice.several.header", "ln2.choice.matches")
        else:
            detail = f"record {record_id} ({record.short_name or record.parent_cell_line}) was not named by the user."
            asked = ("ln2.choice.several.header", "ln2.choice.which")
        options = json.dumps(names[:8], ensure_ascii=False)
        # The runtime asks which of the named records (as many tubes as the call named, from each).
        shown = [_candidate(r, r.positions[: max(1, len(positions))]) for r in named[:8]]
        raise _ungrounded(
            "record_id",
            detail,
            choice=tube_choice(
                shown,
                header="Which tube",
                question=f"{detail} Which one do you mean?",
                keys=asked,
                values={"said": said, "count": len(names), "names": ", ".join(names[:8])},
            )
            if shown
            else None,
            hint=(
                f"Call question with ONE question whose options are {options}, then call {tool_hint} again with the chosen record."
                if names
                else "Pass box and positions as the user said them, or ask the user with ONE question listing the matches as options."
            ),
        )

    # ---- validation and application -------------------------------------------------------------------------

    def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
        return preview(load_inventory(self.path), [parse_op(o) for o in ops], path=self.path, lang=lang)

    def apply(self, ops: list[dict[str, Any]], *, plan_id: str, run_id: str, actor: str) -> dict[str, Any]:
        result = apply_plan(self.path, [parse_op(o) for o in ops], plan_id=plan_id, actor=actor, run_id=run_id)
        return result.model_dump(mode="json")

    def reconcile(self, plan_id: str) -> dict[str, Any] | None:
        result = reconcile_plan(self.path, plan_id)
        return result.model_dump(mode="json") if result is not None else None


_ALL = re.compile(r"\ball\b|\bevery\b|\bboth\b|全部|所有|都|两管都", re.IGNORECASE)
_BOTH = re.compile(r"\bboth\b|两管都", re.IGNORECASE)
"""Both of them: every tube of the record only when it holds two."""


def _singled_out(inventory: Inventory, evidence: Evidence, words: Sequence[str] | str) -> list[Record]:
    """The records with tubes left that the user's words single out, in the light of what the conversation showed:
    a part of a name they say ("the C122A one") fitting one record, or, among the records the person was shown (a
    reply or a look-up named them), those in the box and at the positions they say ("the one in box 5", "the one at
    position 28" after a reply listing box 5 positions 28, 29). Empty when the words say nothing of that kind."""
    texts = [words] if isinstance(words, str) else list(words)
    text = " ".join(texts)
    # Each message's name narrows the one before ("RTCB rescue lines?" then "the C122A one"); a message that names
    # another line starts afresh (the most specific name counts).
    pools = [best_named(inventory, **{n[1]: n[0]})[0] for w in texts if (n := named_in(w, inventory)) is not None]
    pool = [r for r in inventory.records if r.positions]
    if pools:
        common = [r for r in pools[0] if all(r in p for p in pools[1:])]
        pool = common or min(pools, key=len)
        if len(pool) == 1:
            return pool
    boxes, places = said_boxes(text), said_positions(text, inventory.layout)
    if not (boxes or places):
        return []
    # the records the person named ("dTAG-MYC" … "the one in box 5"), else those they were shown
    shown = pool if pools else [r for r in pool if r.short_name and evidence.seen_in_data(r.short_name)]
    return [r for r in shown if (not boxes or r.box in boxes) and (not places or places & set(r.positions))]


def _narrowed_by_context(ref: dict[str, Any], inventory: Inventory, evidence: Evidence, words: str) -> dict[str, Any]:
    """A call that names its tubes only in part (a box, or a position, and no name) completed from the one record
    the user's words single out (see `_singled_out`): its box, and its positions when the words said them or the
    record has one tube left. Anything else is left as it is (the locate then asks which)."""
    if ref.get("record_id") is not None or any(ref.get(k) for k in ("cell_line", "short_name", "plasmid")):
        return ref
    if ref.get("box") is not None and ref.get("positions"):
        return ref
    fits = _singled_out(inventory, evidence, words)
    if len(fits) != 1:
        return ref
    (record,) = fits
    said = sorted(set(ref.get("positions") or said_positions(words, inventory.layout)) & set(record.positions))
    positions = said or (list(record.positions) if len(record.positions) == 1 else None)
    if positions is None:
        return {**ref, "box": record.box, "short_name": record.short_name}
    return {**ref, "box": record.box, "positions": positions}


_NAME_FIELDS = ("cell_line", "short_name", "plasmid")


def _names_of(ref: dict[str, Any]) -> dict[str, Any]:
    """The names a call gives its tubes by (its name fields that hold something)."""
    return {k: ref[k] for k in _NAME_FIELDS if ref.get(k)}


def _completed_from_words(ref: dict[str, Any], inventory: Inventory, words: str) -> dict[str, Any]:
    """`ref` with what the user's words name and the call left out: the one record id they mention ("Thaw record
    16, positions 1 and 2", called with box 1 and no id), and without a box nobody said that is not that record's;
    else the name or the one box they say, when the call gave neither (positions alone: "the HEK293T ones at 22 and
    23"); and the positions they say in the call's box when the call gave none ("the BV2 tube in box 4 well B2",
    called with box 4 and the name)."""
    completed = dict(ref)
    box = completed.get("box")
    if box is not None and not completed.get("positions") and (at := said_places(words, inventory.layout).get(box)):
        completed["positions"] = sorted(at)
    if completed.get("record_id") is None:
        ids = {r.id for r in inventory.records if _id_said(words, r.id, inventory)}
        if len(ids) == 1:
            completed["record_id"] = next(iter(ids))
    if completed.get("record_id") is not None:
        record, box = inventory.record(completed["record_id"]), completed.get("box")
        if box is not None and box not in said_boxes(words) and (record is None or record.box != box):
            completed["box"] = None  # a box nobody said would point elsewhere
        return completed
    if not any(completed.get(k) for k in (*_NAME_FIELDS, "box")):
        if (named := named_in(words, inventory)) is not None:
            completed[named[1]] = named[0]
        if len(boxes := said_boxes(words)) == 1:
            completed["box"] = next(iter(boxes))
    return completed


def _by_the_places_said(ref: dict[str, Any], inventory: Inventory, words: str) -> dict[str, Any]:
    """`ref` without its names when its box and positions are places the user's words said, each holding a tube of a
    line the words name: the places say which tubes (held-out: "U937-WT from box 3 position 4 and U937-Cas9 from box
    3 position 23" called as one U937-WT at positions 4 and 23). Anything else is left as it is."""
    box, positions = ref.get("box"), ref.get("positions")
    if box is None or not positions or not any(ref.get(k) for k in _NAME_FIELDS):
        return ref
    if not set(positions) <= said_places(words, inventory.layout).get(box, set()):
        return ref
    said = words.casefold()
    holders = [r for r in inventory.records if r.box == box and set(positions) & set(r.positions)]
    covered = {p for r in holders for p in r.positions} >= set(positions)
    if not holders or not covered or not all(_named_in_words(r, said) for r in holders):
        return ref
    return {**ref, **dict.fromkeys(_NAME_FIELDS)}


def _named_in_words(record: Record, said: str) -> bool:
    """Whether the (casefolded) words name the record's line: its short name or its parent line ("HCT116 野生型：1号盒
    21、22" of HCT116-WT)."""
    return any(name and name.casefold() in said for name in (record.short_name, record.parent_cell_line))


def _without_strangers(ref: dict[str, Any], inventory: Inventory, words: str) -> dict[str, Any]:
    """`ref` without the names it gives that no record holds in any field, not even by a close spelling, when another
    name it gives fits a record (heldout7: "thawing all 3 PBMC donor 11 vials for the ELISpot" called with plasmid
    'ELISpot'; "the Ba/F3 in box 4 D2" with plasmid 'D2': a small model puts the person's other words in spare fields),
    or when the place it gives is one the words said (heldout8: "枯草芽孢杆菌168从3号盒C3取一管", the line's Chinese name:
    the place says which tube)."""
    names = _names_of(ref)

    def held(value: str) -> bool:
        return any(best_named(inventory, **{field: value})[0] for field in _NAME_FIELDS)

    strangers = [k for k, value in names.items() if not held(value)]
    box, positions = ref.get("box"), ref.get("positions")
    placed = (
        isinstance(box, int)
        and bool(positions)
        and set(positions) <= said_places(words, inventory.layout).get(box, set())
    )
    if not strangers or (len(strangers) == len(names) and not placed):
        return ref
    return {**ref, **dict.fromkeys(strangers)}


def _one_name_joined(ref: dict[str, Any], inventory: Inventory) -> dict[str, Any]:
    """A name given in parts over several fields, which together fit no record, as the one record name holding every
    part (heldout8: "thaw all four GV3101 pMP90" called as cell_line 'GV3101', plasmid 'pMP90')."""
    names = _names_of(ref)
    if len(names) < 2 or best_named(inventory, **names)[0]:
        return ref
    parts = [str(v).casefold() for v in names.values()]
    whole = {
        name
        for r in inventory.records
        if r.positions
        for name in (r.short_name, r.parent_cell_line)
        if name and all(p in name.casefold() for p in parts)
    }
    return {**ref, **dict.fromkeys(_NAME_FIELDS), "cell_line": whole.pop()} if len(whole) == 1 else ref


def _at_the_positions_said(ref: dict[str, Any], inventory: Inventory, latest: str) -> dict[str, Any]:
    """A call naming a line and no positions, whose person's latest words say positions ("Expi293F第3位那支拿走了",
    "the Sf9 at 96"): the one record of that name holding them all, at those positions. Anything else is left as it
    is (the locate asks which)."""
    if ref.get("record_id") is not None or ref.get("positions") or not any(ref.get(k) for k in _NAME_FIELDS):
        return ref
    said = said_positions(latest, inventory.layout)
    if not said:
        return ref
    names = _names_of(ref)
    holders = [
        r for r in best_named(inventory, **names)[0] if said <= set(r.positions) and ref.get("box") in (None, r.box)
    ]
    if len(holders) != 1:
        return ref
    return {**ref, "box": holders[0].box, "positions": sorted(said)}


def _by_the_note_said(ref: dict[str, Any], inventory: Inventory, words: str) -> dict[str, Any]:
    """`ref` pointed at the one record, of the several its names fit, whose note the words quote longest, two words
    or more ("把写着 seed tube B 的那管 NCCIT 复苏" of notes "seed tube A" and "seed tube B"). Anything else is left as
    it is (the locate then asks which)."""
    names = _names_of(ref)
    if ref.get("record_id") is not None or ref.get("positions") or not names:
        return ref
    pool = [r for r in best_named(inventory, **names)[0] if r.positions and ref.get("box") in (None, r.box)]
    said = _note_words(words)
    quoted = {r.id: _longest_run(said, _note_words(r.note or "")) for r in pool}
    best = max(quoted.values(), default=0)
    if len(pool) < 2 or best < 2 or list(quoted.values()).count(best) != 1:
        return ref
    record = next(r for r in pool if quoted[r.id] == best)
    return {**ref, "record_id": record.id, "box": record.box}


def _note_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", unaccented(text).casefold())


def _longest_run(said: list[str], note: list[str]) -> int:
    """The most words in a row `said` and `note` share."""
    match = difflib.SequenceMatcher(None, said, note, autojunk=False).find_longest_match()
    return match.size


def _only_the_positions_said(ref: dict[str, Any], inventory: Inventory, latest: str) -> dict[str, Any]:
    """A take-out of one tube whose call adds positions the person's latest words did not say to those they did
    (heldout7: "ok thaw the one at 37", after a look showed 37 and 38, called with both): the positions said. Words
    asking for more than one ("both", "all", "two tubes") keep the call's. A call at none of the positions said, in a
    record that holds them, is at those said."""
    positions = ref.get("positions")
    said = said_positions(latest, inventory.layout)
    if not positions or not said:
        return ref
    if not said & set(positions):
        # none of the places said (seventeenth set: "[PSI+]有几管？" showed 3, 4, 5, then "把第5格那管拿出来" was called
        # at 4): the places said, when the record the call names by its places holds them all
        holder = (
            inventory.record(ref["record_id"])
            if ref.get("record_id") is not None
            else next(
                (r for r in inventory.records if r.box == ref.get("box") and set(positions) <= set(r.positions)), None
            )
        )
        return {**ref, "positions": sorted(said)} if holder is not None and said <= set(holder.positions) else ref
    kept = [p for p in positions if p in said]
    return {**ref, "positions": kept} if asks_for_one(latest) and len(kept) < len(positions) else ref


def _in_the_field_that_holds_it(ref: dict[str, Any], inventory: Inventory) -> dict[str, Any]:
    """`ref` with a name passed in a field that holds no such name moved to the one that does ("取出p251120-4质粒对应
    的那管" → cell_line='p251120-4', a plasmid); a name no field holds is left as it is (locate says so)."""

    def holds(field: str, value: str) -> bool:
        found, fuzzy = best_named(inventory, **{field: value})
        return bool(found) and not fuzzy

    moved = dict(ref)
    for field in _NAME_FIELDS:
        value = moved.get(field)
        if not value or holds(field, value):
            continue
        holder = next((f for f in _NAME_FIELDS if f != field and holds(f, value)), None)
        if holder is not None and not moved.get(holder):
            moved[field], moved[holder] = None, value
    return moved


def _grounded_ref(ref: dict[str, Any], evidence: Evidence, layout: BoxLayout) -> dict[str, Any] | None:
    """`ref` without what nothing grounds; None when nothing it named is grounded. A box or a position is grounded
    when the user said it as a place ("box 4", "7号位") or the turn's data showed it as one, not merely the number
    (the 7 of "MCF7": seen, a thaw of a position 7 nobody named; the 4 of "MV4-11": a box 4 nobody named)."""

    def known(value: Any) -> bool:
        return evidence.said_by_user(value) or evidence.seen_in_data(value) or evidence.answered(value)

    words = " ".join((*evidence.user_texts, *evidence.answers))
    places = said_positions(words, layout)

    def a_box_known(box: Any) -> bool:
        shown = re.compile(rf"\bbox(?:es)?\s*{re.escape(str(box))}\b", re.IGNORECASE)
        return box in said_boxes(words) or evidence.answered(box) or any(shown.search(d) for d in evidence.data_texts)

    if ref.get("record_id") is not None:
        return dict(ref)  # a record named by id: its own grounding check judges it, its positions with it
    kept = dict(ref)
    if kept.get("box") is not None and not a_box_known(kept["box"]):
        kept["box"] = None
    for name in ("cell_line", "short_name", "plasmid"):
        if kept.get(name) and not known(kept[name]):
            kept[name] = None
    if kept.get("positions"):
        grounded = [p for p in kept["positions"] if p in places or evidence.seen_in_data(p) or evidence.answered(p)]
        kept["positions"] = grounded or None
    if not any(kept.get(k) not in (None, [], "") for k in ("cell_line", "short_name", "plasmid", "box", "positions")):
        return None
    return kept


_PLANNED = re.compile(
    r"\b(?:tomorrow|tmrw|tmr|tonight|later\s+today|next\s+(?:week|monday|tuesday|wednesday|thursday|friday))\b"
    r"|明天|明早|后天|下周|下个?星期|晚点|晚些",
    re.IGNORECASE,
)
"""Words of a day to come the thawed cells are for ("for tomorrow's floral dip"), not the day of the thaw."""


def _later_than_today(value: Any) -> bool:
    try:
        return isinstance(value, str) and dt.date.fromisoformat(value.strip()).isoformat() > _today()
    except ValueError:
        return False


_NAME_TOKEN = re.compile(r"[^\s,，;；。、:：()（）→]+")


def _named_whole(args: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
    """A new record's cell line as the words write it: a line the call gives as a part of one joined name the words
    say, and nowhere alone ("new CHO-K1 stock" called as cell line CHO, plasmid K1), is the whole name, and the field
    that took the rest is left out; a plasmid's name joined to a line ("HEK293T-pX458") stays apart."""
    line = args.get("parent_cell_line")
    if not isinstance(line, str) or not line.strip():
        return args
    words = " ".join((*evidence.user_texts, *evidence.answers))
    if re.search(rf"(?<![\w-]){re.escape(line)}(?![\w-])", words, re.IGNORECASE):
        return args  # said alone too
    for token in _NAME_TOKEN.findall(words):
        head, sep, rest = token.partition("-")
        if sep and head.casefold() == line.casefold() and rest and not _PLASMID_LIKE.match(rest):
            kept = {
                k: v for k, v in args.items() if not (k in _NAME_FIELDS_ADDED and str(v).casefold() == rest.casefold())
            }
            return {**kept, "parent_cell_line": token}
    return args


_NAME_FIELDS_ADDED = ("short_name", "plasmid_name", "plasmid_id")
_PLASMID_LIKE = re.compile(r"p[A-Z0-9]")
"""A plasmid's name as labs write them ("pX458", "pLKO.1"): a line joined to one ("HEK293T-pX458") is two names."""


def _check_labels(inventory: Inventory, evidence: Evidence, *, names: Sequence[str | None] = ()) -> None:
    """ToolError `invalid_position` when the person's words name a grid place no box has ("put a Sf9 vial in box 2
    J1" of rows A–I: seen, an add staged at position 1), said in their language: nothing is staged at a guessed place.
    A name that reads like one (the line B16, `names` of the call or a record's) is no place."""
    layout = inventory.layout
    words = " ".join((*evidence.user_texts, *evidence.answers))
    # a call's name that is a grid label the words say right after a box ("J1" of "box 2 J1", put in short_name) is
    # the place said, not a name (a line named like a place, "a B16 vial", stays a name)
    given = [n for n in names if n and not said_after_a_box(n.strip(), words)]
    held = [*given, *(n for r in inventory.records for n in (r.short_name, r.parent_cell_line))]
    outside = labels_outside(_without(words, held), layout)
    if outside:
        values = {"label": outside[0], "last_row": chr(ord("A") + layout.rows - 1), "cols": layout.cols}
        raise ToolError(
            "invalid_position",
            t("ln2.error.no_such_label", "en", **values),
            hint="Tell the user which places a box has; stage nothing.",
            field="positions",
            key="ln2.error.no_such_label",
            values=values,
        )


def _wrong_operation(tool_name: str, said: str) -> ToolError:
    """A take-out called for words that only add tubes, or an add for words that only take tubes out."""
    if said == "add":
        return ToolError(
            "wrong_operation",
            f"Not staged: the user asks to put a new tube in, not to take one out ({tool_name} takes tubes out).",
            hint="Call add_entry with the cell line, box and positions the user said.",
        )
    return ToolError(
        "wrong_operation",
        "Not staged: the user asks to take tubes out, not to add new ones (add_entry adds a new record).",
        hint="Call record_thaw with the tubes as the user named them (box + positions, or a name).",
    )


def _ungrounded(field: str, detail: str, *, hint: str | None = None, choice: Choice | None = None) -> ToolError:
    return ToolError(
        "ungrounded_argument",
        f"Not staged: {detail}",
        field=field,
        choice=choice,
        hint=hint or "Do not guess. Ask the user with the question tool, then call the write tool again.",
    )
