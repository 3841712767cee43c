"""Tool 5's retry queue: saves that could not reach the database, kept durably until they land.

The database may be the thing that is away (locked, read-only, renamed), so the queue is not kept in it: it is an
append-only journal file (JSON Lines) in the app's data folder. Each line is one event, written in one `write` of an
`O_APPEND` file and fsynced before the caller is told `queued_for_retry`:

    {"op": "queued", "key": <content_hash>, "item": {...the save's arguments...}, "at": ...}
    {"op": "saved", "key": <content_hash>, "question_id": ..., "at": ...}

The pending items are the `queued` keys without a later `saved` line. A torn last line (a crash mid-write) is
skipped on reading. Saves are idempotent (the question's `content_hash` is unique in the table), so an item saved by
another process, or saved twice by a drain that crashed before writing `saved`, is still one question. When nothing
is pending the journal is compacted (replaced atomically by an empty file, under an exclusive lock).

`drain(save)` retries every pending item once; `RetryQueue.run_drainer(save)` keeps draining with exponential
backoff (1 s doubling to 60 s) until the queue is empty: started at start-up and whenever a save is queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._files import append_durable, write_atomic
from ...runtime import utcnow

__all__ = ["DrainReport", "RetryQueue", "SaveOutcome"]

log = logging.getLogger(__name__)

SaveOutcome = str | None
"""What a save attempt of a queued item gives: the question's id once it is in the database, None if it is still
away (the item stays queued)."""


@dataclass(frozen=True)
class DrainReport:
    saved: list[str]
    """The keys that landed in this drain."""
    pending: int
    """Items still queued after it."""


@dataclass
class RetryQueue:
    """The durable journal at `path` (made with its folder when first written)."""

    path: Path
    initial_backoff: float = 1.0
    max_backoff: float = 60.0
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _task: asyncio.Task[None] | None = field(default=None, init=False, repr=False)

    # ---- the journal ------------------------------------------------------------------------------------------

    def _append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        with self._lock, self._locked(shared=True):
            append_durable(self.path, line, mode=0o600)

    @contextlib.contextmanager
    def _locked(self, *, shared: bool) -> Iterator[None]:
        """Appends share the lock; compaction (a rename) takes it alone, across processes too."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _records(self) -> list[dict[str, Any]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        records = []
        for line in raw.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                log.warning("skipping a torn line in the retry journal %s", self.path)
                continue
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                records.append(record)
        return records

    def pending(self) -> dict[str, dict[str, Any]]:
        """The queued items not saved yet, by key, oldest first."""
        queued: dict[str, dict[str, Any]] = {}
        for record in self._records():
            if record.get("op") == "queued" and isinstance(record.get("item"), dict):
                queued.setdefault(record["key"], record["item"])
            elif record.get("op") == "saved":
                queued.pop(record["key"], None)
        return queued

    def __len__(self) -> int:
        return len(self.pending())

    def put(self, key: str, item: dict[str, Any]) -> None:
        """Keep `item` (a save's arguments, JSON-able) until `mark_saved(key)`; durable when this returns."""
        self._append({"op": "queued", "key": key, "item": item, "at": utcnow()})

    def mark_saved(self, key: str, question_id: str) -> None:
        self._append({"op": "saved", "key": key, "question_id": question_id, "at": utcnow()})

    def _compact(self) -> None:
        """Replace a journal with nothing pending by an empty one (atomically; appends wait for it)."""
        with self._lock, self._locked(shared=False):
            if self.pending() or not self.path.exists():
                return
            write_atomic(self.path, b"")

    # ---- draining ---------------------------------------------------------------------------------------------

    async def drain(self, save: Callable[[dict[str, Any]], Awaitable[SaveOutcome]]) -> DrainReport:
        """Try every pending item once with `save(item) -> question id | None`; what lands is marked saved."""
        saved: list[str] = []
        items = self.pending()
        for key, item in items.items():
            try:
                question_id = await save(item)
            except Exception as error:  # noqa: BLE001 - an item that cannot land now is tried again later
                log.info("retry of queued question %s failed: %s", key[:12], error)
                question_id = None
            if question_id is not None:
                self.mark_saved(key, question_id)
                saved.append(key)
        left = len(items) - len(saved)
        if left == 0 and items:
            self._compact()
        return DrainReport(saved=saved, pending=left)

    async def drain_until_empty(
        self,
        save: Callable[[dict[str, Any]], Awaitable[SaveOutcome]],
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        """Drain, waiting `initial_backoff * 2**n` (at most `max_backoff`) between tries, until nothing is pending."""
        delay = self.initial_backoff
        while True:
            report = await self.drain(save)
            if report.pending == 0:
                return
            await sleep(delay)
            delay = min(delay * 2, self.max_backoff)

    def run_drainer(self, save: Callable[[dict[str, Any]], Awaitable[SaveOutcome]]) -> asyncio.Task[None] | None:
        """Start the background drainer on the running loop (one at a time per queue); None outside a loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        if self._task is not None and not self._task.done() and self._task.get_loop() is loop:
            return self._task
        self._task = loop.create_task(self.drain_until_empty(save), name=f"quiz-retry-drainer:{self.path.name}")
        return self._task

    async def stop(self) -> None:
        """Stop the background drainer (the journal keeps what is pending)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
