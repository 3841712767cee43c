"""What each step of a run leaves: its checkpoint (the conversation, one message a row) and its tool call records,
written with the step's events (and, at the run's end, its status) in one transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert

from .._records import EventRow, RunStatus, ToolCallRecord
from ._database import Database
from ._events import LegacyEventRow, insert_events, numbering
from ._runs import set_status, status_row
from ._schema import checkpoints, messages, tool_calls
from ._values import dumps, loads, record_from_row, utcnow

__all__ = ["Steps"]

# Built once: the per-step write is the hot path of every run, and a built statement is compiled once (cached).
_DELETE_MESSAGES_FROM = delete(messages).where(
    messages.c.run_id == bindparam("run_id"), messages.c.idx >= bindparam("first")
)
_INSERT_MESSAGE = insert(messages)
_INSERT_TOOL_CALL = insert(tool_calls)


class Steps:
    """Checkpoints and tool call records of a store's runs (a part of `Store`)."""

    _db: Database

    def save_step(
        self,
        run_id: str,
        *,
        checkpoint: tuple[int, int, list[str]] | None,
        tool_calls: Sequence[dict[str, Any]] = (),
        events: Sequence[EventRow | LegacyEventRow] = (),
        status: RunStatus | None = None,
        output: str | None = None,
        error: str | None = None,
    ) -> int | None:
        """Write what one step produced in one transaction: its checkpoint, tool call records and events (in order),
        and the run's new `status` if given (with its output or error: its end, see `set_run_status`). Returns the
        number of the last event written (None when none was).

        `checkpoint` is (step, first, messages): the run's messages from index `first` on (each as JSON); messages
        before `first` are kept as stored. Each event carries its number (`EventRow.seq`) or None for the store to
        number it; an event written as (type, data, ts) is numbered by the store too.
        """
        db = self._db
        upsert_checkpoint = db.prepared("upsert checkpoint", _upsert_checkpoint)
        ending = status_row(run_id, status, output=output, error=error) if status is not None else None

        def write(conn: Connection) -> int | None:
            if checkpoint is not None:
                step, first, items = checkpoint
                db.write(conn, _DELETE_MESSAGES_FROM, [{"run_id": run_id, "first": first}])
                db.write(
                    conn,
                    _INSERT_MESSAGE,
                    [{"run_id": run_id, "idx": first + i, "data": d} for i, d in enumerate(items)],
                )
                db.write(
                    conn,
                    upsert_checkpoint,
                    [{"run_id": run_id, "step": step, "count": first + len(items), "updated_at": utcnow()}],
                )
            db.write(conn, _INSERT_TOOL_CALL, [_tool_call_row(run_id, **c) for c in tool_calls])
            last = insert_events(db, conn, run_id, events)
            if ending is not None:
                set_status(db, conn, ending)
            return last

        return numbering(db.begin_kept, run_id, write)

    def save_checkpoint(self, run_id: str, step: int, messages_json: str) -> None:
        """Replace the run's whole checkpoint with `messages_json` (a JSON array of messages)."""
        items = [json.dumps(m, ensure_ascii=False) for m in json.loads(messages_json)]
        self.save_step(run_id, checkpoint=(step, 0, items))

    def load_checkpoint(self, run_id: str) -> tuple[int, str] | None:
        """(step, the conversation as a JSON array), or None before the run's first checkpoint."""
        with self._db.read() as conn:
            head = conn.execute(
                select(checkpoints.c.step, checkpoints.c.count).where(checkpoints.c.run_id == run_id)
            ).first()
            if head is None:
                return None
            rows = conn.execute(
                select(messages.c.data)
                .where(messages.c.run_id == run_id, messages.c.idx < head.count)
                .order_by(messages.c.idx)
            ).scalars()
            return head.step, "[" + ",".join(rows) + "]"

    def record_tool_call(
        self,
        *,
        run_id: str,
        step: int,
        tool_call_id: str,
        tool_name: str,
        args: Any,
        result: Any,
        started_at: str,
        duration_ms: float,
    ) -> None:
        row = _tool_call_row(
            run_id,
            step=step,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            args=args,
            result=result,
            started_at=started_at,
            duration_ms=duration_ms,
        )
        with self._db.begin() as conn:
            conn.execute(_INSERT_TOOL_CALL, row)

    def list_tool_calls(self, run_id: str) -> list[ToolCallRecord]:
        with self._db.read() as conn:
            rows = conn.execute(
                select(tool_calls).where(tool_calls.c.run_id == run_id).order_by(tool_calls.c.id)
            ).mappings()
            return [record_from_row(ToolCallRecord, row, args=loads, result=loads, ok=bool) for row in rows]


def _upsert_checkpoint(db: Database) -> Insert:
    return db.upsert(checkpoints, key=["run_id"], set_=["step", "count", "updated_at"])


def _tool_call_row(
    run_id: str,
    *,
    step: int,
    tool_call_id: str,
    tool_name: str,
    args: Any,
    result: Any,
    started_at: str,
    duration_ms: float,
) -> dict[str, Any]:
    ok = not (isinstance(result, dict) and result.get("ok") is False)
    return {
        "run_id": run_id,
        "step": step,
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        "args": dumps(args),
        "result": dumps(result),
        "ok": int(ok),
        "error_code": result.get("error_code") if isinstance(result, dict) else None,
        "started_at": started_at,
        "duration_ms": duration_ms,
    }
