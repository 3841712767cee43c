"""Asks: a run's questions to someone outside it, and their closing (once, by a conditional update)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, insert, select, update

from .._errors import ConflictError
from .._records import AskRecord, AskStatus
from ._counters import next_number
from ._database import Database
from ._schema import asks, runs
from ._values import dumps, loads, new_id, record_from_row, utcnow

__all__ = ["Asks"]


class _NotClosed(Exception):
    """The ask was not in the expected status: roll the transaction back (its closing number included)."""


class Asks:
    """The asks of a store's runs (a part of `Store`)."""

    _db: Database

    def create_ask(
        self,
        *,
        run_id: str,
        kind: str,
        payload: dict[str, Any],
        tool_call_id: str | None = None,
        timeout_s: float | None = None,
        trace_id: str = "",
    ) -> AskRecord:
        row = {
            "id": new_id("ask"),
            "run_id": run_id,
            "kind": kind,
            "tool_call_id": tool_call_id,
            "payload": dumps(payload),
            "status": AskStatus.pending,
            "answer": None,
            "outcome": None,
            "answered_by": None,
            "timeout_s": timeout_s,
            "trace_id": trace_id,
            "created_at": utcnow(),
            "closed_at": None,
            "closed_seq": None,
        }
        with self._db.begin() as conn:
            conn.execute(insert(asks).values(**row))
        return _ask_record(row)

    def get_ask(self, ask_id: str) -> AskRecord:
        return _ask_record(
            self._db.one(asks, ask_id, missing=f"No ask with id {ask_id!r}. List pending asks with `consulta asks`.")
        )

    def list_asks(
        self, *, status: str | None = AskStatus.pending, run_id: str | None = None, principal: str | None = None
    ) -> list[AskRecord]:
        query = select(asks).order_by(asks.c.created_at)
        if principal is not None:
            query = query.join(runs, runs.c.id == asks.c.run_id).where(runs.c.principal == principal)
        if status is not None:
            query = query.where(asks.c.status == status)
        if run_id is not None:
            query = query.where(asks.c.run_id == run_id)
        with self._db.read() as conn:
            return [_ask_record(row) for row in conn.execute(query).mappings()]

    def close_ask(
        self,
        ask_id: str,
        status: AskStatus,
        *,
        answer: Any = None,
        outcome: Any = None,
        answered_by: str | None = None,
        expect: AskStatus = AskStatus.pending,
    ) -> AskRecord:
        """Close the ask if it is still `expect` (one conditional UPDATE, so of two closers exactly one wins) and
        return it closed. Raises NotFoundError for an unknown id, ConflictError if it is no longer `expect`."""
        try:
            with self._db.begin() as conn:
                row = (
                    conn.execute(
                        update(asks)
                        .where(asks.c.id == ask_id, asks.c.status == expect)
                        .values(
                            status=status,
                            answer=dumps(answer),
                            outcome=dumps(outcome),
                            answered_by=answered_by,
                            closed_at=utcnow(),
                            closed_seq=next_number(self._db, conn, "ask_closed_seq"),
                        )
                        .returning(*asks.c)
                    )
                    .mappings()
                    .first()
                )
                if row is None:
                    raise _NotClosed
        except _NotClosed:
            existing = self.get_ask(ask_id)  # raises NotFoundError for an unknown id
            state = (
                f"already {existing.status.value}"
                if expect == AskStatus.pending
                else f"{existing.status.value}, not {expect.value}"
            )
            raise ConflictError(
                f"Ask {ask_id} is {state} (closed at {existing.closed_at}); it cannot be closed as {status.value}. "
                "List the pending ones with `consulta asks`.",
                key="error.ask.closed" if expect == AskStatus.pending else None,
                values={"id": ask_id, "status": existing.status.value},
            ) from None
        return _ask_record(row)

    def asks_closed_since(self, seq: int) -> tuple[int, list[tuple[str, str]]]:
        """(new high-water mark, [(ask_id, status)]) of asks closed after `seq`: one cheap query for all waiters."""
        with self._db.read() as conn:
            rows = conn.execute(
                select(asks.c.id, asks.c.status, asks.c.closed_seq)
                .where(asks.c.closed_seq > seq)
                .order_by(asks.c.closed_seq)
            ).all()
        high = max((row[2] for row in rows), default=seq)
        return high, [(row[0], row[1]) for row in rows]

    def ask_closed_high_water(self) -> int:
        with self._db.read() as conn:
            value = conn.execute(select(func.max(asks.c.closed_seq))).scalar()
        return int(value or 0)


def _ask_record(row: Mapping[str, Any]) -> AskRecord:
    return record_from_row(AskRecord, row, status=AskStatus, payload=loads, answer=loads, outcome=loads)
