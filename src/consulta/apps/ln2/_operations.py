"""Write operations on an ln2 inventory: their models, validation, previews and the atomic, audited apply.

Four operations, discriminated on `op`: `add_entry`, `record_thaw`, `batch_thaw`, `rollback`. A *plan* is a list
of them applied as one change of the file: every operation is validated against the state the previous ones leave
(so operation 2 cannot reuse a position operation 1 fills), then all are written at once or none is. Any problem
raises `ToolError` and changes nothing: not the file, not the backups' meaning, not the audit log.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, assert_never

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError

from consulta.i18n import LANGUAGES, PerLanguage, t
from consulta.runtime import ToolError, crash_point

from ..._files import write_atomic
from ._audit import (
    ApplyJournal,
    AuditEntry,
    append_audit,
    discard_journal,
    lock_path,
    plan_entries,
    read_journal,
    remove_stray_temps,
    resolve_rollback,
    store_backup,
    utc_timestamp,
    write_journal,
)
from ._inventory import (
    BoxLayout,
    Inventory,
    InventoryFile,
    Record,
    ThawAction,
    ThawEvent,
    describe_position,
    describe_positions,
    occupancy,
    parse_iso_date,
    sha256_hex,
)
from ._queries import check_box

__all__ = [
    "AddEntry",
    "RecordThaw",
    "ThawEntry",
    "BatchThaw",
    "Rollback",
    "Operation",
    "ApplyResult",
    "parse_op",
    "validate_ops",
    "preview",
    "apply_plan",
    "reconcile_plan",
]


def _as_list(value: object) -> object:
    # Small models often send one position as a bare number.
    return [value] if isinstance(value, int) and not isinstance(value, bool) else value


def _as_text(value: object) -> object:
    # A date object is as good as its YYYY-MM-DD text; everything else is checked in validation, with a hint.
    return value.isoformat() if isinstance(value, dt.date) else value


Positions = Annotated[list[int], BeforeValidator(_as_list)]
DateText = Annotated[str, BeforeValidator(_as_text)]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class AddEntry(_Op):
    """Freeze new tubes: a new record (id = largest id + 1) holding `positions` in `box`."""

    op: Literal["add_entry"] = "add_entry"
    parent_cell_line: str
    short_name: str | None = None
    plasmid_name: str | None = None
    plasmid_id: str | None = None
    box: int
    positions: Positions
    frozen_at: DateText
    note: str | None = None


class RecordThaw(_Op):
    """Remove `positions` from record `record_id` (thawed, taken out or discarded) and log it as a thaw event."""

    op: Literal["record_thaw"] = "record_thaw"
    record_id: int
    positions: Positions
    date: DateText
    action: ThawAction = "thaw"
    note: str | None = None


class ThawEntry(_Op):
    """One record's tubes in a `batch_thaw`."""

    record_id: int
    positions: Positions


class BatchThaw(_Op):
    """Several `record_thaw`s sharing a date, an action and a note."""

    op: Literal["batch_thaw"] = "batch_thaw"
    entries: list[ThawEntry]
    date: DateText
    action: ThawAction = "thaw"
    note: str | None = None


class Rollback(_Op):
    """Restore the file to the exact bytes it had before audit entry `audit_id`'s plan; must be alone in its plan."""

    op: Literal["rollback"] = "rollback"
    audit_id: str


Operation = Annotated[AddEntry | RecordThaw | BatchThaw | Rollback, Field(discriminator="op")]
_OPERATION = TypeAdapter(Operation)


class ApplyResult(BaseModel):
    """What `apply_plan` did: one audit id and one summary per operation, and the file's states around it."""

    plan_id: str
    audit_ids: list[str]
    summaries: list[str]
    before_sha256: str
    after_sha256: str
    backup: str  # the state before the plan, relative to the inventory's folder


def parse_op(data: Any) -> Operation:
    """Build an operation from a dict with an `op` key; ToolError `missing_required_field`/`invalid_argument` if bad."""
    try:
        return _OPERATION.validate_python(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(part) for part in err["loc"])
        code = "missing_required_field" if err["type"] == "missing" else "invalid_argument"
        raise ToolError(
            code,
            f"Invalid operation argument {where or 'op'}: {err['msg']}.",
            hint="op is one of add_entry, record_thaw, batch_thaw, rollback; check the argument's type and spelling.",
            field=where or "op",
        ) from None


# --------------------------------------------------------------------------------------------------------------
# Validation: a simulation of the plan on a copy of the inventory


@dataclass
class _NewRecord:
    record: Record


@dataclass
class _Removal:
    record_id: int
    positions: list[int]
    event: ThawEvent


@dataclass
class _Restore:
    data: bytes


_Edit = _NewRecord | _Removal | _Restore


@dataclass(frozen=True)
class _Phrase:
    """Words for people, rendered in their language from the `ln2.*` catalog keys. Values may be phrases
    themselves, lists of phrases (joined with the language's separator), or {lang: text} for text already written."""

    key: str
    values: dict[str, Any] = field(default_factory=dict)

    def render(self, lang: str = "en") -> str:
        def value(v: Any) -> Any:
            if isinstance(v, _Phrase):
                return v.render(lang)
            if isinstance(v, dict):  # text already written in several languages (an audit entry's summary)
                return v.get(lang) or v["en"]
            if isinstance(v, list):
                return t("ln2.separator", lang).join(value(x) for x in v)
            return v

        return t(self.key, lang, **{k: value(v) for k, v in self.values.items()})


def _tubes(n: int) -> _Phrase:
    return _Phrase("ln2.tubes.one" if n == 1 else "ln2.tubes.many", {"n": n})


@dataclass
class _Outcome:
    summary: _Phrase
    edits: list[_Edit]


@dataclass
class _Simulation:
    state: Inventory
    today: dt.date
    path: Path | None
    number: int = 0  # 1-based number of the operation being checked
    added_by: dict[int, int] = field(default_factory=dict)  # record id -> operation that added it
    removed_by: dict[tuple[int, int], int] = field(default_factory=dict)  # (record id, position) -> operation

    @property
    def layout(self) -> BoxLayout:
        return self.state.layout


def _prefixed(err: ToolError, where: PerLanguage) -> ToolError:
    """The same error, its message (in each language) saying where in the plan it happened."""
    said = PerLanguage({lang: err.message_in(lang) for lang in LANGUAGES})
    return ToolError(
        err.error_code,
        t("ln2.error.where", "en", where=where, error=said),
        hint=err.hint,
        field=err.field,
        key="ln2.error.where",
        values={"where": where, "error": said},
    )


def _words(key: str, **values: Any) -> PerLanguage:
    """A catalog entry said in every language, as a placeholder's value."""
    return PerLanguage({lang: t(key, lang, **values) for lang in LANGUAGES})


def _field_name(name: str) -> PerLanguage:
    """A field's name as a person reads it: the name itself in English (the model passes it), words in Chinese."""
    return PerLanguage({"en": name, "zh-CN": t(f"ln2.field.{name.rsplit('.', 1)[-1]}", "zh-CN")})


def _record_label(record: Record) -> str:
    return f"record {record.id} ({record.display_name})"


def _check_text(value: str | None, *, name: str) -> str:
    if value is None or not value.strip():
        raise ToolError(
            "missing_required_field",
            f"{name} is required and must not be empty.",
            hint=f"Ask the user for the {name.replace('_', ' ')} if it is not known.",
            field=name,
            key="ln2.error.required",
            values={"name": _field_name(name)},
        )
    return value.strip()


def _optional_text(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


def _check_date(
    value: str, *, name: str, today: dt.date, not_before: str | None = None, what: str | PerLanguage = ""
) -> str:
    """The YYYY-MM-DD text of a real date that is not in the future (nor before `not_before`)."""
    try:
        day = parse_iso_date(value)
    except ValueError as exc:
        reason = PerLanguage({"en": str(exc), "zh-CN": t("ln2.error.not_a_date", "zh-CN")})
        raise ToolError(
            "invalid_date",
            f"{name} {exc}.",
            hint="Write the date as YYYY-MM-DD, e.g. 2025-06-01; ask the user if the day is not known.",
            field=name,
            key="ln2.error.bad_date",
            values={"name": _field_name(name), "reason": reason},
        ) from None
    if day > today:
        values: dict[str, Any] = {"name": _field_name(name), "day": day.isoformat(), "today": today.isoformat()}
        raise ToolError(
            "invalid_date",
            t("ln2.error.future_date", "en", **values),
            hint="Record events that have happened: use today's date or an earlier one.",
            field=name,
            key="ln2.error.future_date",
            values=values,
        )
    if not_before is not None and day < parse_iso_date(not_before):
        values = {"name": _field_name(name), "day": day.isoformat(), "what": what, "since": not_before}
        raise ToolError(
            "invalid_date",
            t("ln2.error.early_date", "en", **values),
            hint="Check the date with the user.",
            field=name,
            key="ln2.error.early_date",
            values=values,
        )
    return day.isoformat()


def _check_positions(positions: Sequence[int], layout: BoxLayout, *, name: str, range_hint: str) -> None:
    """Non-empty, each in 1..capacity, no position twice."""
    if not positions:
        raise ToolError(
            "missing_required_field",
            f"{name} is empty: at least one position is needed.",
            hint="List the tube positions as numbers, e.g. [5, 6].",
            field=name,
            key="ln2.error.no_positions",
            values={"name": _field_name(name)},
        )
    for pos in positions:
        if not 1 <= pos <= layout.capacity:
            last = describe_position(layout.capacity, layout)
            raise ToolError(
                "position_out_of_range",
                f"Position {pos} does not exist: a {layout.rows}×{layout.cols} box has positions 1..{last}.",
                hint=range_hint,
                field=name,
                key="ln2.error.position_out_of_range",
                values={"position": pos, "rows": layout.rows, "cols": layout.cols, "last": last},
            )
    seen: set[int] = set()
    for pos in positions:
        if pos in seen:
            raise ToolError(
                "duplicate_position",
                f"Position {describe_position(pos, layout)} is listed twice.",
                hint="List each tube position once.",
                field=name,
                key="ln2.error.duplicate_position",
                values={"position": describe_position(pos, layout)},
            )
        seen.add(pos)


def _check_add(sim: _Simulation, op: AddEntry) -> _Outcome:
    state, layout = sim.state, sim.layout
    cell_line = _check_text(op.parent_cell_line, name="parent_cell_line")
    check_box(state, op.box, hint="Call inventory_stats() to see the boxes and how full they are.")
    free_hint = f"Call empty_positions(box={op.box}) to find a free position."
    _check_positions(op.positions, layout, name="positions", range_hint=free_hint)
    frozen_at = _check_date(op.frozen_at, name="frozen_at", today=sim.today)
    held = occupancy(state)
    for pos in op.positions:
        holder_id = held.get((op.box, pos))
        if holder_id is not None:
            holder = state.record(holder_id)
            assert holder is not None
            origin = f", added by operation {sim.added_by[holder_id]} of this plan" if holder_id in sim.added_by else ""
            where, label = describe_position(pos, layout), _record_label(holder)
            raise ToolError(
                "position_occupied",
                f"Position {where} in box {op.box} is already held by {label}{origin}.",
                hint=free_hint,
                field="positions",
                key="ln2.error.position_occupied_in_plan" if origin else "ln2.error.position_occupied",
                values={
                    "position": where,
                    "box": op.box,
                    "record": holder.id,
                    "name": holder.display_name,
                    "step": sim.added_by.get(holder_id),
                },
            )
    record = Record(
        id=state.next_id(),
        parent_cell_line=cell_line,
        short_name=_optional_text(op.short_name),
        plasmid_name=_optional_text(op.plasmid_name),
        plasmid_id=_optional_text(op.plasmid_id),
        box=op.box,
        positions=list(op.positions),
        frozen_at=frozen_at,
        note=_optional_text(op.note),
    )
    added = state.add(record)  # one record, or one per tube when the file keeps one tube per record
    for new in added:
        sim.added_by[new.id] = sim.number
    plasmid = ", ".join(p for p in (record.plasmid_name, record.plasmid_id) if p)
    names = cell_line + (f" / {record.short_name}" if record.short_name else "")
    summary = _Phrase(
        "ln2.preview.add",
        {
            "id": ", ".join(str(new.id) for new in added),
            "names": names,
            "plasmid": _Phrase("ln2.preview.plasmid", {"plasmid": plasmid}) if plasmid else "",
            "box": record.box,
            "positions": describe_positions(record.positions, layout),
            "frozen": frozen_at,
        },
    )
    return _Outcome(summary, [_NewRecord(new.model_copy(deep=True)) for new in added])


def _check_removal(
    sim: _Simulation,
    record_id: int,
    positions: Sequence[int],
    *,
    date: str,
    action: ThawAction,
    note: str | None,
    prefix: str = "",
) -> tuple[_Removal, _Phrase]:
    """Check that `record_id` holds `positions`, remove them from the state; return the edit and a summary part."""
    state, layout = sim.state, sim.layout
    record = state.record(record_id)
    if record is None:
        ids = [r.id for r in state.records]
        known = _words("ln2.error.ids_are", low=min(ids), high=max(ids)) if ids else _words("ln2.error.no_records")
        raise ToolError(
            "unknown_record",
            t("ln2.error.unknown_record", "en", id=record_id, known=known),
            hint="Call query_inventory or search_records to find the record's id.",
            field=f"{prefix}record_id",
            key="ln2.error.unknown_record",
            values={"id": record_id, "known": known},
        )
    find_hint = f"Call query_inventory(cell_line='{record.parent_cell_line}') to see which tubes are left."
    _check_positions(positions, layout, name=f"{prefix}positions", range_hint=find_hint)
    if record.consumed:
        last = record.thaw_events[-1] if record.thaw_events else None
        verb = PerLanguage({"en": last.action, "zh-CN": t(f"ln2.verb.{last.action}", "zh-CN")}) if last else ""
        why = _words("ln2.error.last_event", verb=verb, date=last.date) if last else ""
        if any(key[0] == record.id for key in sim.removed_by):
            why = _words("ln2.error.removed_in_plan")
        values = {"id": record.id, "name": record.display_name, "why": why}
        raise ToolError(
            "record_consumed",
            t("ln2.error.record_consumed", "en", **values),
            hint=find_hint,
            field=f"{prefix}record_id",
            key="ln2.error.record_consumed",
            values=values,
        )
    for pos in positions:
        if pos in record.positions:
            continue
        if (record.id, pos) in sim.removed_by:
            why = _words("ln2.error.removed_by_step", step=sim.removed_by[(record.id, pos)])
        else:
            why = _words("ln2.error.it_holds", positions=describe_positions(record.positions, layout))
        values = {
            "id": record.id,
            "name": record.display_name,
            "box": record.box,
            "position": describe_position(pos, layout),
            "why": why,
        }
        raise ToolError(
            "position_not_held",
            t("ln2.error.position_not_held", "en", **values),
            hint="Use one of the positions the record holds.",
            field=f"{prefix}positions",
            key="ln2.error.position_not_held",
            values=values,
        )
    frozen = _words("ln2.error.was_frozen", id=record.id)
    day = _check_date(date, name="date", today=sim.today, not_before=record.frozen_at, what=frozen)
    event = ThawEvent(date=day, action=action, positions=list(positions), note=_optional_text(note))
    record.positions = [p for p in record.positions if p not in positions]
    record.thaw_events.append(event)
    for pos in positions:
        sim.removed_by[(record.id, pos)] = sim.number
    left = (
        _Phrase("ln2.left.some", {"tubes": _tubes(len(record.positions))})
        if record.positions
        else _Phrase("ln2.left.none")
    )
    part = _Phrase(
        "ln2.preview.removal",
        {
            "record": _Phrase("ln2.record", {"id": record.id, "name": record.display_name}),
            "box": record.box,
            "positions": describe_positions(positions, layout),
            "left": left,
        },
    )
    return _Removal(record.id, list(positions), event), part


def _check_thaw(sim: _Simulation, op: RecordThaw) -> _Outcome:
    removal, part = _check_removal(sim, op.record_id, op.positions, date=op.date, action=op.action, note=op.note)
    verb = _Phrase(f"ln2.verb.{op.action}")
    return _Outcome(_Phrase("ln2.preview.thaw", {"verb": verb, "date": removal.event.date, "part": part}), [removal])


def _check_batch(sim: _Simulation, op: BatchThaw) -> _Outcome:
    if not op.entries:
        raise ToolError(
            "missing_required_field",
            "entries is empty: a batch_thaw needs at least one {record_id, positions} entry.",
            hint="List each record's id with the positions to remove.",
            field="entries",
        )
    removals, parts = [], []
    for index, entry in enumerate(op.entries):
        try:
            removal, part = _check_removal(
                sim,
                entry.record_id,
                entry.positions,
                date=op.date,
                action=op.action,
                note=op.note,
                prefix=f"entries[{index}].",
            )
        except ToolError as err:
            raise _prefixed(err, _words("ln2.error.entry", number=index + 1)) from None
        removals.append(removal)
        parts.append(part)
    tubes = sum(len(r.positions) for r in removals)
    date = removals[0].event.date
    summary = _Phrase(
        "ln2.preview.batch",
        {"verb": _Phrase(f"ln2.verb.{op.action}"), "tubes": _tubes(tubes), "date": date, "parts": parts},
    )
    return _Outcome(summary, removals)


def _check_rollback(sim: _Simulation, op: Rollback) -> _Outcome:
    if sim.path is None:
        # Without the file there is no audit log to check; apply_plan checks it for real.
        return _Outcome(_Phrase("ln2.preview.rollback_unchecked", {"audit_id": op.audit_id}), [])
    target = resolve_rollback(sim.path, op.audit_id)
    restored = InventoryFile.from_bytes(target.data, path=sim.path).inventory
    sim.state.meta, sim.state.records = restored.meta, restored.records
    entry, undone = target.entry, target.undone
    span = undone[0] if len(undone) == 1 else f"{undone[0]}..{undone[-1]}"
    entries = _Phrase("ln2.entries.one" if len(undone) == 1 else "ln2.entries.many", {"n": len(undone)})
    summary = _Phrase(
        "ln2.preview.rollback",
        {
            "audit_id": entry.audit_id,
            "summary": _said(entry),
            "plan_id": entry.plan_id,
            "entries": entries,
            "span": span,
        },
    )
    return _Outcome(summary, [_Restore(target.data)])


def _said(entry: AuditEntry) -> dict[str, str]:
    """An audit entry's summary in each language it was written in, without its full stop."""
    return {lang: text.rstrip(".。") for lang, text in {**entry.translations, "en": entry.summary}.items()}


def _check_op(sim: _Simulation, op: Operation) -> _Outcome:
    match op:
        case AddEntry():
            return _check_add(sim, op)
        case RecordThaw():
            return _check_thaw(sim, op)
        case BatchThaw():
            return _check_batch(sim, op)
        case Rollback():
            return _check_rollback(sim, op)
        case _:
            assert_never(op)


def _simulate(
    inventory: Inventory, ops: Sequence[Operation], *, today: dt.date | None, path: Path | None
) -> tuple[Inventory, list[_Outcome]]:
    if not ops:
        raise ToolError("invalid_argument", "The plan has no operations.", hint="Stage at least one write.")
    if len(ops) > 1 and any(isinstance(op, Rollback) for op in ops):
        raise ToolError(
            "invalid_argument",
            f"A rollback must be the only operation of its plan, but this plan has {len(ops)} operations.",
            hint="Apply the rollback on its own, then stage the other changes in a new plan.",
        )
    sim = _Simulation(state=inventory.model_copy(deep=True), today=today or dt.date.today(), path=path)
    outcomes = []
    for number, op in enumerate(ops, start=1):
        sim.number = number
        try:
            outcomes.append(_check_op(sim, op))
        except ToolError as err:
            if len(ops) == 1:
                raise
            raise _prefixed(err, _words("ln2.error.operation", number=number, total=len(ops), op=op.op)) from None
    return sim.state, outcomes


def validate_ops(
    inventory: Inventory, ops: Sequence[Operation], *, today: dt.date | None = None, path: Path | str | None = None
) -> Inventory:
    """Check `ops` in order, each against the state the previous ones leave; return the state after all of them.

    Raises the first problem as ToolError; with several ops its message starts "Operation N of M (op): ...".
    `today` (default: the local date) bounds dates. A rollback is checked against the audit log only when `path`
    (the inventory file) is given. `inventory` itself is never modified.
    """
    state, _ = _simulate(inventory, ops, today=today, path=Path(path) if path else None)
    return state


def preview(
    inventory: Inventory,
    ops: Sequence[Operation],
    *,
    today: dt.date | None = None,
    path: Path | str | None = None,
    lang: str = "en",
) -> list[str]:
    """One human-readable line per operation saying what it will do (ids, names, positions with labels), in `lang`.

    Validates like `validate_ops` and raises the same ToolError when the plan cannot be applied.
    """
    _, outcomes = _simulate(inventory, ops, today=today, path=Path(path) if path else None)
    return [outcome.summary.render(lang) for outcome in outcomes]


# --------------------------------------------------------------------------------------------------------------
# Editing the round-trip document


def _edit_document(file: InventoryFile, edit: _Edit) -> None:
    # The file writes each edit in its own dialect (key names, layout, event style).
    match edit:
        case _NewRecord(record=record):
            file.add_record(record)
        case _Removal(record_id=record_id, positions=positions, event=event):
            file.take_out(record_id, positions, event)
        case _Restore():
            raise AssertionError("a rollback replaces the bytes; it does not edit the document")
        case _:
            assert_never(edit)


# --------------------------------------------------------------------------------------------------------------
# Applying a plan


@contextlib.contextmanager
def _exclusive_lock(path: Path, *, timeout: float) -> Iterator[None]:
    """Hold the inventory's sidecar lock file (fcntl.flock) — one writer at a time, across processes."""
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ToolError(
                        "inventory_file_error",
                        f"Another write to {path.name} is still in progress (its lock is held).",
                        hint="Try again in a moment.",
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock; the lock file itself stays (deleting it would race)


def _changed_error(path: Path, expected: str, actual: str) -> ToolError:
    values = {"file": path.name, "actual": actual[:12], "expected": expected[:12]}
    return ToolError(
        "inventory_changed",
        t("ln2.error.inventory_changed", "en", **values),
        hint="Re-read the inventory (query_inventory) and stage the changes again.",
        key="ln2.error.inventory_changed",
        values=values,
    )


def apply_plan(
    path: Path | str,
    ops: Sequence[Operation],
    *,
    plan_id: str,
    actor: str,
    run_id: str | None = None,
    today: dt.date | None = None,
    expected_sha256: str | None = None,
    lock_timeout: float = 10.0,
) -> ApplyResult:
    """Apply `ops` to the inventory file at `path` as one atomic, audited change.

    Under an exclusive lock: settle what an interrupted apply left (see `reconcile_plan`), re-read the file (if
    `expected_sha256` is given and the file differs, ToolError `inventory_changed`), validate all ops, edit the
    round-trip document (or, for a rollback, take the verified backup bytes), keep the current bytes as a backup,
    record the intent in the journal (the file's sha256 before and after, the audit entries to write), write the
    new bytes atomically, append one audit entry per op and discard the journal. Any ToolError leaves the file and
    the audit log as they were; a read-only file (no write permission) is refused with ToolError
    `inventory_read_only`. A kill at any instant leaves either the file unchanged with no entry, or the file changed
    with its journal, which the next writer turns into the entries (one per op).
    """
    path = Path(path)
    with _locked(path, timeout=lock_timeout):
        return _apply_locked(path, list(ops), plan_id, actor, run_id, today, expected_sha256)


def reconcile_plan(path: Path | str, plan_id: str, *, lock_timeout: float = 10.0) -> ApplyResult | None:
    """Settle what a crash left of applying plan `plan_id` to the inventory at `path`; the plan's result if it is
    applied, else None (it can be applied, once).

    Under the lock: if the journal of an interrupted apply is there and the file holds the bytes it intended, the
    audit entries it intended that are missing are appended (so there is exactly one per operation); if the file
    holds anything else, the change never reached it. Either way the journal and stray temporary files go. Then
    the plan is applied exactly when the audit log has its entries. Changes nothing when nothing was interrupted.
    """
    path = Path(path)
    with _locked(path, timeout=lock_timeout):
        _settle(path)
        entries = plan_entries(path, plan_id)
    if not entries:
        return None
    first = entries[0]
    return ApplyResult(
        plan_id=plan_id,
        audit_ids=[e.audit_id for e in entries],
        summaries=[e.summary for e in entries],
        before_sha256=first.before_sha256,
        after_sha256=first.after_sha256,
        backup=first.backup,
    )


@contextlib.contextmanager
def _locked(path: Path, *, timeout: float) -> Iterator[None]:
    """The inventory's lock held; an OSError inside is a ToolError saying nothing was changed."""
    try:
        with _exclusive_lock(path, timeout=timeout):
            yield
    except OSError as exc:
        raise ToolError(
            "inventory_file_error",
            f"Writing {path.name} failed: {exc.strerror or exc}; nothing was changed.",
            hint="Check that the inventory's folder exists, is writable and has free space.",
        ) from None


def _settle(path: Path) -> None:
    """Under the lock: finish or drop an interrupted apply's journal (see `reconcile_plan`), remove stray drafts."""
    journal = read_journal(path)
    if journal is not None and path.exists() and sha256_hex(path.read_bytes()) == journal.after_sha256:
        done = plan_entries(path, journal.plan_id)  # a torn append leaves the first entries whole, the rest missing
        if len(done) < len(journal.records):
            append_audit(path, journal.records[len(done) :])
    remove_stray_temps(path)
    discard_journal(path)


def _refuse_read_only(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if not mode & 0o222 or not os.access(path, os.W_OK):
        values = {"file": path.name, "mode": f"{mode:o}"}
        raise ToolError(
            "inventory_read_only",
            t("ln2.error.inventory_read_only", "en", **values),
            hint=f"If it should change, make it writable (chmod u+w {path}) and approve the changes again.",
            key="ln2.error.inventory_read_only",
            values=values,
        )


def _apply_locked(
    path: Path,
    ops: list[Operation],
    plan_id: str,
    actor: str,
    run_id: str | None,
    today: dt.date | None,
    expected_sha256: str | None,
) -> ApplyResult:
    _settle(path)
    current = InventoryFile.load(path)
    if expected_sha256 is not None and current.sha256 != expected_sha256:
        raise _changed_error(path, expected_sha256, current.sha256)
    final_state, outcomes = _simulate(current.inventory, ops, today=today, path=path)
    restores = [e for o in outcomes for e in o.edits if isinstance(e, _Restore)]
    if restores:
        new_bytes = restores[0].data
        if new_bytes == current.raw:
            raise ToolError(
                "invalid_argument",
                "The file is already exactly in the state this rollback would restore; nothing to roll back.",
                hint="Pick an older audit entry to roll back, or none.",
                field="audit_id",
            )
    else:
        for outcome in outcomes:
            for edit in outcome.edits:
                _edit_document(current, edit)
        new_bytes = current.render()
        # The edited document must read back as exactly the simulated state; anything else is a bug, caught here
        # before the file is touched.
        written = InventoryFile.from_bytes(new_bytes, path=path).inventory
        if written != current.reads_back_as(final_state):
            raise RuntimeError("ln2: the edited YAML does not match the validated plan; nothing was written")
    _refuse_read_only(path)
    crash_point("before_backup")
    backup = store_backup(path, current.raw)
    crash_point("after_backup")
    if sha256_hex(path.read_bytes()) != current.sha256:  # someone wrote without the lock (an editor)
        raise _changed_error(path, current.sha256, sha256_hex(path.read_bytes()))
    after = sha256_hex(new_bytes)
    ts = utc_timestamp()
    records = [
        {
            "ts": ts,
            "plan_id": plan_id,
            "run_id": run_id,
            "actor": actor,
            "op": op.op,
            "args": op.model_dump(mode="json", exclude={"op"}, exclude_none=True),
            "summary": outcome.summary.render(),
            "translations": {lang: outcome.summary.render(lang) for lang in LANGUAGES},
            "before_sha256": current.sha256,
            "after_sha256": after,
            "backup": backup,
        }
        for op, outcome in zip(ops, outcomes, strict=True)
    ]
    # From here a kill leaves the file as it was (journal dropped on settling) or as intended (journal finished).
    write_journal(
        path, ApplyJournal(plan_id=plan_id, before_sha256=current.sha256, after_sha256=after, records=records)
    )
    crash_point("after_journal")
    write_atomic(path, new_bytes, before_replace=lambda: crash_point("before_rename"))
    crash_point("after_rename")
    try:
        entries = append_audit(path, records)
    except BaseException:
        write_atomic(path, current.raw)  # no audit line, no change
        discard_journal(path)
        raise
    crash_point("after_audit")
    discard_journal(path)
    crash_point("after_apply")
    return ApplyResult(
        plan_id=plan_id,
        audit_ids=[e.audit_id for e in entries],
        summaries=[o.summary.render() for o in outcomes],
        before_sha256=current.sha256,
        after_sha256=after,
        backup=backup,
    )
