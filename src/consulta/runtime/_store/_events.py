"""Events: what happened in a run, numbered 1, 2, 3 … per run (`seq`), in the store, once.

A number is given out in the writer's transaction, from the run's last stored one, while the writer holds the run's
row; should two writers still take the same number, they clash on the unique (run_id, seq) and the loser writes
again with the next one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from .._errors import ConflictError
from .._records import EventRecord, EventRow
from ._database import Database
from ._schema import events, runs
from ._values import dumps, loads, record_from_row, utcnow

__all__ = ["Events", "LegacyEventRow", "insert_events", "number_events", "numbering"]

LegacyEventRow = tuple[str, dict[str, Any], str]
"""(type, data, ts): an event without its number, as callers wrote them before events were numbered per run."""

_ATTEMPTS = 5
T = TypeVar("T")

_LAST_SEQ = select(func.coalesce(func.max(events.c.seq), 0)).where(events.c.run_id == bindparam("run_id"))
_HOLD_RUN = update(runs).where(runs.c.id == bindparam("run_id")).values(updated_at=runs.c.updated_at)
_INSERT = insert(events)
_INSERT_ONE = insert(events).returning(events.c.id)


class Events:
    """The events of a store's runs (a part of `Store`)."""

    _db: Database

    def append_event(self, run_id: str, type_: str, data: dict[str, Any], *, seq: int | None = None) -> EventRecord:
        """Store one event of the run: under `seq`, or under the run's next number when None. Raises ConflictError
        when `seq` is taken already."""
        row = EventRow(seq=seq, type=type_, data=data, ts=utcnow())

        def write(conn: Connection) -> EventRecord:
            [numbered] = number_events(self._db, conn, run_id, [row])
            with _clashes(run_id, [row]):
                event_id = conn.execute(_INSERT_ONE, _params(run_id, numbered)).scalar_one()
            return EventRecord(id=event_id, run_id=run_id, seq=numbered.seq, type=type_, data=data, ts=row.ts)

        return numbering(self._db.begin, run_id, write)

    def last_event_seq(self, run_id: str) -> int:
        """The number of the run's last stored event (0 before its first)."""
        with self._db.read() as conn:
            return int(conn.execute(_LAST_SEQ, {"run_id": run_id}).scalar_one())

    def last_event_seqs(self, run_ids: Collection[str]) -> dict[str, int]:
        """The number of each run's last stored event, for several runs in one query (runs without events: left out)."""
        if not run_ids:
            return {}
        query = (
            select(events.c.run_id, func.max(events.c.seq))
            .where(events.c.run_id.in_(list(run_ids)))
            .group_by(events.c.run_id)
        )
        with self._db.read() as conn:
            return {run_id: int(seq) for run_id, seq in conn.execute(query)}

    def list_events(self, run_id: str, *, after_seq: int = 0, after_id: int = 0) -> list[EventRecord]:
        """The run's events numbered after `after_seq` (and, for older callers, with a store-wide id after
        `after_id`), in order."""
        query = (
            select(events)
            .where(events.c.run_id == run_id, events.c.seq > after_seq, events.c.id > after_id)
            .order_by(events.c.seq)
        )
        with self._db.read() as conn:
            return [record_from_row(EventRecord, row, data=loads) for row in conn.execute(query).mappings()]


def number_events(
    db: Database, conn: Connection, run_id: str, rows: Sequence[EventRow | LegacyEventRow]
) -> list[EventRow]:
    """The rows as EventRows, those without a number numbered on from the run's last stored event (in order)."""
    numbered = [EventRow(None, *row) if len(row) == 3 else row for row in rows]
    if any(row.seq is None for row in numbered):
        # Writers of one run take turns from here to their commit: the run's row is locked (PostgreSQL) or the
        # database's write lock taken (SQLite) by this no-op update, before the last number is read.
        db.write(conn, _HOLD_RUN, [{"run_id": run_id}])
        last = int(db.scalar(conn, _LAST_SEQ, {"run_id": run_id}))
        for i, row in enumerate(numbered):
            if row.seq is None:
                numbered[i] = row._replace(seq=last + 1)
            last = max(last, numbered[i].seq)
    return numbered


def insert_events(db: Database, conn: Connection, run_id: str, rows: Sequence[EventRow | LegacyEventRow]) -> int | None:
    """Insert the run's events in order, numbering those without a number (see `number_events`); the number of the
    last one (None when there are none)."""
    if not rows:
        return None
    numbered = number_events(db, conn, run_id, rows)
    with _clashes(run_id, rows):
        db.write(conn, _INSERT, [_params(run_id, row) for row in numbered])
    return numbered[-1].seq


def numbering(
    begin: Callable[[], AbstractContextManager[Connection]], run_id: str, write: Callable[[Connection], T]
) -> T:
    """Run `write` (which inserts events of `run_id`) in a transaction from `begin`, again if another writer took the
    same event number meanwhile (bounded)."""
    for attempt in range(_ATTEMPTS):
        try:
            with begin() as conn:
                return write(conn)
        except IntegrityError as error:
            if not _seq_clash(error):
                raise
            if attempt == _ATTEMPTS - 1:
                raise ConflictError(
                    f"Events of run {run_id} could not be numbered: their numbers were taken by another writer "
                    f"{_ATTEMPTS} times in a row. Only one process should drive a run (see `Store.claim_run`)."
                ) from error
    raise AssertionError("unreachable")


@contextmanager
def _clashes(run_id: str, rows: Sequence[EventRow | LegacyEventRow]) -> Iterator[None]:
    """A clash on numbers the caller gave is a ConflictError at once; on numbers the store gave, `numbering`
    writes again."""
    try:
        yield
    except IntegrityError as error:
        if _seq_clash(error) and all(len(row) == 4 and row[0] is not None for row in rows):
            seqs = ", ".join(str(row[0]) for row in rows)
            raise ConflictError(
                f"Run {run_id} already has an event numbered among {seqs}: number the next events after "
                "`Store.last_event_seq(run_id)`, or pass seq=None to let the store number them."
            ) from error
        raise


def _params(run_id: str, row: EventRow) -> dict[str, Any]:
    data = row.data if isinstance(row.data, str) else dumps(row.data)
    return {"run_id": run_id, "seq": row.seq, "type": row.type, "data": data, "ts": row.ts}


def _seq_clash(error: IntegrityError) -> bool:
    message = str(error.orig)
    return "uq_events_run_id_seq" in message or "events.seq" in message
