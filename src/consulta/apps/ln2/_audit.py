"""Audit log, backups and rollback targets of an ln2 inventory file.

Next to `inventory.yaml` live (all names derive from the inventory's file name):

- `inventory.yaml.audit.jsonl` — append-only, one JSON object per applied operation:
  `{audit_id, ts, plan_id, run_id, actor, op, args, summary, before_sha256, after_sha256, backup}`.
  All operations of one plan are applied at once, so they share the plan's `before_sha256`/`after_sha256`.
- `.inventory.yaml.backups/<sha256>.yaml` — the exact bytes the file had before each plan, stored once per state
  (content-addressed). `backup` in an audit entry is that path relative to the inventory's folder.
- `.inventory.yaml.lock` — the lock file writers hold (see `_operations.apply_plan`).

Rolling back an audit entry restores the bytes the file had before that entry's plan; the rollback itself is a
plan with its own audit entry and backup, so it can be rolled back too. Writing happens only in `_operations`,
under the lock; this module stores backups, appends entries and finds what a rollback restores.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from consulta.runtime._errors import ToolError

from ._inventory import atomic_write_bytes, fsync_dir, sha256_hex

__all__ = [
    "AuditEntry",
    "SkippedLine",
    "AuditLog",
    "RollbackTarget",
    "audit_log_path",
    "backup_dir",
    "lock_path",
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
        atomic_write_bytes(target, data, mode_like=path)  # readable by whoever may read the inventory
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
    payload = "".join(e.model_dump_json() + "\n" for e in entries).encode("utf-8")
    if existing and not existing.endswith(b"\n"):
        payload = b"\n" + payload  # never glue a new entry onto a torn last line
    created = not existing and not log.exists()
    with open(log, "ab") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    if created:
        fsync_dir(log.parent)
    return entries
