"""Audit log, backups and rollback targets of an ln2 inventory file.

Next to `inventory.yaml` live (all names derive from the inventory's file name):

- `inventory.yaml.audit.jsonl` — append-only, one JSON object per applied operation:
  `{audit_id, ts, plan_id, run_id, actor, op, args, summary, before_sha256, after_sha256, backup}`.
  All operations of one plan are applied at once, so they share the plan's `before_sha256`/`after_sha256`.
- `.inventory.yaml.backups/<sha256>.yaml` — the exact bytes the file had before each plan, stored once per state
  (content-addressed). `backup` in an audit entry is that path relative to the inventory's folder.
- `.inventory.yaml.lock` — the lock file writers hold (see `_operations.apply_plan`).
- `.inventory.yaml.journal` — only while a plan is being applied (or after a crash interrupted it): what the apply
  intends, written durably before the file is replaced — the plan id, the file's sha256 before and after, and the
  audit entries to append. Whoever takes the lock next settles it (`_operations.reconcile_plan`): if the file holds
  the intended bytes, the missing audit entries are appended; either way the journal and stray temporary files
  (`.inventory.yaml.*.tmp`) are removed.

Rolling back an audit entry restores the bytes the file had before that entry's plan; the rollback itself is a
plan with its own audit entry and backup, so it can be rolled back too. Writing happens only in `_operations`,
under the lock; this module stores backups, appends entries and finds what a rollback restores.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from consulta.runtime._errors import ToolError

from ..._files import append_durable, fsync_dir, write_atomic
from ._inventory import sha256_hex

__all__ = [
    "AuditEntry",
    "SkippedLine",
    "AuditLog",
    "RollbackTarget",
    "ApplyJournal",
    "audit_log_path",
    "backup_dir",
    "lock_path",
    "journal_path",
    "write_journal",
    "read_journal",
    "discard_journal",
    "remove_stray_temps",
    "plan_entries",
    "read_audit",
    "find_audit_entry",
    "store_backup",
    "load_backup",
    "append_audit",
    "resolve_rollback",
    "utc_timestamp",
]

_AUDIT_ID_RE = re.compile(r'"audit_id"\s*:\s*"a_(\d+)"')


class AuditEntry(BaseModel):
    """One applied operation as recorded in the audit log."""

    audit_id: str
    ts: str
    plan_id: str
    run_id: str | None = None
    actor: str
    op: str
    args: dict[str, Any]
    summary: str
    """What the operation did, in English (the record's language)."""
    translations: dict[str, str] = {}
    """The summary in each language people read it in (`en`, `zh-CN`); entries written before it existed have none."""
    before_sha256: str
    after_sha256: str
    backup: str


class SkippedLine(BaseModel):
    """A line of the audit log that could not be read (1-based line number and why)."""

    line: int
    reason: str


class AuditLog(BaseModel):
    """What `read_audit` found: the readable entries in file order, and the lines it had to skip."""

    entries: list[AuditEntry]
    skipped: list[SkippedLine] = []


class RollbackTarget(BaseModel):
    """What rolling back `entry` restores: the verified bytes of the file before the entry's plan."""

    entry: AuditEntry
    data: bytes
    undone: list[str]  # audit ids whose changes the rollback undoes: the entry's plan and everything after it

    @property
    def sha256(self) -> str:
        """sha256 of the bytes that will be restored (equals `entry.before_sha256`)."""
        return self.entry.before_sha256


class ApplyJournal(BaseModel):
    """What an apply in progress intends, recorded before the inventory is replaced (see the module docstring)."""

    plan_id: str
    before_sha256: str
    after_sha256: str
    records: list[dict[str, Any]]
    """The audit entries the apply appends once the file is replaced (all fields but `audit_id`), one per operation."""


def audit_log_path(path: Path | str) -> Path:
    """The audit log of the inventory at `path`: `<inventory file>.audit.jsonl` in the same folder."""
    path = Path(path)
    return path.with_name(path.name + ".audit.jsonl")


def backup_dir(path: Path | str) -> Path:
    """The backup folder of the inventory at `path`: `.<inventory file>.backups/` in the same folder."""
    path = Path(path)
    return path.with_name(f".{path.name}.backups")


def lock_path(path: Path | str) -> Path:
    """The lock file writers of the inventory at `path` hold: `.<inventory file>.lock` in the same folder."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


def journal_path(path: Path | str) -> Path:
    """The journal of an apply in progress on the inventory at `path`: `.<inventory file>.journal` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.journal")


def utc_timestamp() -> str:
    """Now, as an ISO 8601 UTC timestamp with milliseconds, e.g. 2025-06-01T08:30:00.123Z."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_audit(path: Path | str, *, limit: int | None = None) -> AuditLog:
    """Read the audit log of the inventory at `path` (no log yet = no entries).

    Lines that are not a valid entry (a torn write, a hand edit) are skipped and listed in `skipped`, never fatal.
    With `limit`, only the last `limit` entries are returned (still oldest first).
    """
    log = audit_log_path(path)
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return AuditLog(entries=[])
    entries, skipped = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(AuditEntry.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            skipped.append(SkippedLine(line=number, reason=f"not JSON ({exc.msg})"))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "entry"
            skipped.append(SkippedLine(line=number, reason=f"not an audit entry ({where}: {err['msg']})"))
    if limit is not None:
        entries = entries[-limit:] if limit > 0 else []
    return AuditLog(entries=entries, skipped=skipped)


def find_audit_entry(path: Path | str, audit_id: str) -> AuditEntry:
    """The entry `audit_id` of the inventory's log; ToolError `unknown_audit_entry` if there is none."""
    entries = read_audit(path).entries
    for entry in entries:
        if entry.audit_id == audit_id:
            return entry
    known = f"the log has {entries[0].audit_id}..{entries[-1].audit_id}" if entries else "the audit log is empty"
    raise ToolError(
        "unknown_audit_entry",
        f"There is no audit entry {audit_id!r}; {known}.",
        hint="Read the audit log (most recent entries) to find the id of the change to undo.",
        field="audit_id",
    )


def plan_entries(path: Path | str, plan_id: str) -> list[AuditEntry]:
    """The audit entries of plan `plan_id` (one per operation once it is applied; none before), in order."""
    return [entry for entry in read_audit(path).entries if entry.plan_id == plan_id]


def write_journal(path: Path | str, journal: ApplyJournal) -> None:
    """Record `journal` durably (atomically, fsynced) beside the inventory at `path`. Call this under the lock."""
    write_atomic(journal_path(path), journal.model_dump_json().encode("utf-8"))


def read_journal(path: Path | str) -> ApplyJournal | None:
    """The journal of an apply the inventory at `path` has in progress; None when there is none or it cannot be
    read (it is written whole before the file is replaced, so a damaged one means the file was never replaced)."""
    try:
        return ApplyJournal.model_validate_json(journal_path(path).read_bytes())
    except (FileNotFoundError, ValidationError):  # pydantic reports bad JSON as a ValidationError too
        return None


def discard_journal(path: Path | str) -> None:
    """Remove the journal of the inventory at `path` (if any), durably: the apply it recorded is settled."""
    journal = journal_path(path)
    if journal.exists():
        journal.unlink()
        fsync_dir(journal.parent)


def remove_stray_temps(path: Path | str) -> list[Path]:
    """Remove the temporary files interrupted writes left beside the inventory at `path` (drafts of the file, of its
    journal, of its backups); return them. Call this under the lock: then no write of them is in progress."""
    path = Path(path)
    draft = f".{glob.escape(path.name)}.{'?' * 8}.tmp"  # `write_atomic`'s drafts: mkstemp's 8 random characters
    journal_draft = f".{glob.escape(journal_path(path).name)}.{'?' * 8}.tmp"
    drafts = [*path.parent.glob(draft), *path.parent.glob(journal_draft), *backup_dir(path).glob(".*.tmp")]
    for draft in drafts:
        draft.unlink(missing_ok=True)
    if drafts:
        fsync_dir(path.parent)
    return drafts


def store_backup(path: Path | str, data: bytes) -> str:
    """Keep `data` (a state of the inventory) in the backup folder; return its path relative to the inventory's folder.

    Backups are named by their sha256, so a state is stored once; an existing backup whose bytes do not match its
    name (damaged) is rewritten.
    """
    path = Path(path)
    folder = backup_dir(path)
    folder.mkdir(exist_ok=True)
    digest = sha256_hex(data)
    target = folder / f"{digest}.yaml"
    try:
        intact = sha256_hex(target.read_bytes()) == digest
    except FileNotFoundError:
        intact = False
    if not intact:
        target.unlink(missing_ok=True)  # a damaged backup may be read-only, like the inventory it copied
        write_atomic(target, data, mode_like=path)  # readable by whoever may read the inventory
    return f"{folder.name}/{target.name}"


def load_backup(path: Path | str, entry: AuditEntry) -> bytes:
    """The bytes the inventory had before `entry`'s plan, verified against `entry.before_sha256`.

    ToolError `inventory_file_error` if the backup is missing or does not match.
    """
    backup = Path(path).parent / entry.backup
    try:
        data = backup.read_bytes()
    except OSError:
        raise ToolError(
            "inventory_file_error",
            f"The backup of the state before {entry.audit_id} ({entry.backup}) is missing, so it cannot be restored.",
            hint="Pick another audit entry, or restore the file by hand from your own backups.",
            field="audit_id",
        ) from None
    if sha256_hex(data) != entry.before_sha256:
        raise ToolError(
            "inventory_file_error",
            f"The backup of the state before {entry.audit_id} ({entry.backup}) is damaged: its sha256 does not match "
            "the audit log, so it is not restored.",
            hint="Pick another audit entry, or restore the file by hand from your own backups.",
            field="audit_id",
        )
    return data


def resolve_rollback(path: Path | str, audit_id: str) -> RollbackTarget:
    """What a rollback of `audit_id` restores, checked: the entry exists and its backup is intact.

    ToolError `unknown_audit_entry` or `inventory_file_error`; reads only, changes nothing.
    """
    entry = find_audit_entry(path, audit_id)
    data = load_backup(path, entry)
    entries = read_audit(path).entries
    first = next(i for i, e in enumerate(entries) if e.plan_id == entry.plan_id)
    return RollbackTarget(entry=entry, data=data, undone=[e.audit_id for e in entries[first:]])


def append_audit(path: Path | str, records: list[dict[str, Any]]) -> list[AuditEntry]:
    """Append one entry per record (all fields but `audit_id`, which is assigned here) and fsync the log.

    Ids continue the log's numbering (a_000001, a_000002, ...), also past lines that are damaged. Call this only
    while holding the inventory's lock. All lines go out in one write, so a crash leaves at most one torn line,
    which `read_audit` skips.
    """
    log = audit_log_path(path)
    try:
        existing = log.read_bytes()
    except FileNotFoundError:
        existing = b""
    numbers = [int(n) for n in _AUDIT_ID_RE.findall(existing.decode("utf-8", errors="replace"))]
    start = max(numbers, default=0) + 1
    entries = [AuditEntry(audit_id=f"a_{start + i:06d}", **record) for i, record in enumerate(records)]
    # a torn last line is not continued (append_durable starts a new line), so read_audit still skips only it
    append_durable(log, "".join(e.model_dump_json() + "\n" for e in entries).encode("utf-8"), mode=0o666)
    return entries
