"""The store: the single source of truth for runs, checkpoints, asks, plans, tool calls and events.

SQLite through SQLAlchemy Core by default (one file, zero set-up); any SQLAlchemy URL works
(`CONSULTA_DATABASE_URL`). Every state change that must not be lost is one short transaction; an ask is
closed by a conditional UPDATE (`WHERE status = 'pending'`) so that two answerers can never both win.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, RowMapping
from sqlalchemy.exc import OperationalError

from ._errors import ConflictError, NotFoundError
from ._records import AskRecord, AskStatus, ConsultationRecord, EventRecord, EventRow, PlanRecord, PlanStatus, RunRecord, RunStatus, ToolCallRecord

__all__ = ["Store", "new_id", "utcnow"]

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("app", String(40), nullable=False),
    Column("thread_id", String(40), nullable=False, index=True),
    Column("parent_run_id", String(40), nullable=True),
    Column("status", String(16), nullable=False, index=True),
    Column("prompt", Text, nullable=False),
    Column("model", String(200), nullable=False),
    Column("lang", String(10), nullable=False),
    Column("options", Text, nullable=False, default="{}"),
    Column("trace_id", String(32), nullable=False),
    Column("output", Text, nullable=True),
    Column("error", Text, nullable=True),
    Column("owner", String(120), nullable=True, index=True),  # the process holding the run's lease
    Column("principal", String(120), nullable=True, index=True),  # whom the run belongs to (a session, a token)
    Column("agent", String(80), nullable=False, default=""),  # TEMP (runtime helper): the store helper's migration adds it
    Column("heartbeat_at", Float, nullable=True),
    Column("cancel_requested", Integer, nullable=False, default=0),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
)

checkpoints = Table(
    "checkpoints",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("step", Integer, nullable=False),
    Column("count", Integer, nullable=False),  # the checkpoint is messages 0..count-1 of the run
    Column("updated_at", String(32), nullable=False),
)

# A conversation is stored one message a row, so a step writes only what it added (not the whole history again).
messages = Table(
    "messages",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("data", Text, nullable=False),
)

asks = Table(
    "asks",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("kind", String(20), nullable=False),
    Column("tool_call_id", String(120), nullable=True),
    Column("payload", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("answer", Text, nullable=True),
    Column("outcome", Text, nullable=True),
    Column("answered_by", String(120), nullable=True),
    Column("timeout_s", Float, nullable=True),
    Column("trace_id", String(32), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("closed_at", String(32), nullable=True),
    Column("closed_seq", Integer, nullable=True, index=True),
)

plans = Table(
    "plans",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("app", String(40), nullable=False),
    Column("status", String(16), nullable=False),
    Column("items", Text, nullable=False),
    Column("ask_id", String(40), nullable=True),
    Column("result", Text, nullable=True),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("step", Integer, nullable=False),
    Column("tool_call_id", String(120), nullable=False),
    Column("tool_name", String(120), nullable=False),
    Column("args", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("ok", Integer, nullable=False),
    Column("error_code", String(80), nullable=True),
    Column("started_at", String(32), nullable=False),
    Column("duration_ms", Float, nullable=False),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("type", String(40), nullable=False),
    Column("data", Text, nullable=False),
    Column("ts", String(32), nullable=False),
    Column("seq", Integer, nullable=False, default=0),  # TEMP (runtime helper): per-run number, see INTERFACES §3
)

# The consultation ledger (seed 000): one row per consultation of an expert, numbered consult_0001, 0002, … per store.
consultations = Table(
    "consultations",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=True, index=True),
    Column("tool_call_id", String(120), nullable=True),
    Column("expert_id", String(80), nullable=False),
    Column("status", String(16), nullable=False),
    Column("request", Text, nullable=False),
    Column("expert_output", Text, nullable=True),
    Column("binding_rules", Text, nullable=False),
    Column("instruction_updates", Text, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=True),
    Column("expert_run_id", String(40), nullable=True),
    Column("started_at", String(32), nullable=False),
    Column("finished_at", String(32), nullable=False),
    Column("duration_ms", Float, nullable=False),
)

counters = Table(
    "counters",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("value", Integer, nullable=False),
)


def _split_checkpoints(conn: Connection) -> None:
    """Rewrite checkpoints stored as one JSON array per run as one message a row (`messages`) plus a count."""
    old = conn.execute(text("SELECT run_id, step, messages, updated_at FROM checkpoints")).mappings().all()
    conn.execute(text("DROP TABLE checkpoints"))
    checkpoints.create(conn)
    for row in old:
        items = [json.dumps(m, ensure_ascii=False) for m in json.loads(row["messages"])]
        conn.execute(delete(messages).where(messages.c.run_id == row["run_id"]))
        if items:
            conn.execute(insert(messages), [{"run_id": row["run_id"], "idx": i, "data": d} for i, d in enumerate(items)])
        conn.execute(insert(checkpoints).values(run_id=row["run_id"], step=row["step"], count=len(items), updated_at=row["updated_at"]))


def utcnow() -> str:
    """Now, as an ISO-8601 UTC timestamp (the store's one time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id(prefix: str) -> str:
    """A new random id such as `run_3f2a…`, short enough to type."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Store:
    """All persistence of the runtime. Thread-safe (SQLAlchemy pools connections); every method is one transaction."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        self.owner = _OWNER
        self.engine: Engine = create_engine(url, echo=echo)
        self._sqlite = url.startswith("sqlite")
        self._local = threading.local()
        self._raw_connections: list[Any] = []
        if self._sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._create_schema()

    def _create_schema(self) -> None:
        # Two processes opening a new store at once both see no tables; the loser of that race retries.
        for attempt in range(5):
            try:
                metadata.create_all(self.engine)
                self._upgrade()
                return
            except OperationalError as error:
                if attempt == 4 or not ("already exists" in str(error) or "locked" in str(error)):
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _upgrade(self) -> None:
        """Bring a store made by an earlier version up to date, in one transaction: columns added since (nullable),
        and checkpoints kept as one JSON array (before the conversation was stored one message a row)."""
        added = [("runs", "principal", "VARCHAR(120)"), ("runs", "agent", "VARCHAR(80) NOT NULL DEFAULT ''"), ("events", "seq", "INTEGER NOT NULL DEFAULT 0")]
        with self._tx() as conn:
            for table, column, sql_type in added:
                present = {c["name"] for c in inspect(conn).get_columns(table)}
                if column not in present:
                    conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}"))
                    conn.execute(text(f"CREATE INDEX IF NOT EXISTS ix_{table}_{column} ON {table} ({column})"))
            if "count" not in {c["name"] for c in inspect(conn).get_columns("checkpoints")}:
                _split_checkpoints(conn)

    def close(self) -> None:
        for conn in self._raw_connections:
            conn.close()
        self._raw_connections.clear()
        self._local = threading.local()
        self.engine.dispose()

    @contextmanager
    def _tx(self) -> Iterator[Connection]:
        with self.engine.begin() as conn:
            yield conn

    # ---- runs -------------------------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        app: str,
        prompt: str,
        model: str,
        lang: str,
        thread_id: str | None = None,
        parent_run_id: str | None = None,
        options: dict[str, Any] | None = None,
        principal: str | None = None,
        trace_id: str | None = None,
        agent: str = "",
    ) -> RunRecord:
        """A new running run; `trace_id` joins an existing trace (a nested run), else a new one starts."""
        run_id = new_id("run")
        now = utcnow()
        row = {
            "id": run_id,
            "app": app,
            "thread_id": thread_id or run_id,
            "parent_run_id": parent_run_id,
            "status": RunStatus.running,
            "prompt": prompt,
            "model": model,
            "lang": lang,
            "options": _dumps(options or {}),
            "trace_id": trace_id or uuid.uuid4().hex,
            "output": None,
            "error": None,
            "owner": self.owner,
            "principal": principal,
            "agent": agent,
            "heartbeat_at": _clock(),
            "cancel_requested": 0,
            "created_at": now,
            "updated_at": now,
        }
        with self._tx() as conn:
            conn.execute(insert(runs).values(**row))
        return _run_record(row)

    def get_run(self, run_id: str) -> RunRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(runs).where(runs.c.id == run_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"No run with id {run_id!r}. List runs with `consulta runs`.")
        return _run_record(row)

    def list_runs(
        self, *, status: str | None = None, app: str | None = None, principal: str | None = None, limit: int = 50
    ) -> list[RunRecord]:
        query = select(runs).order_by(runs.c.created_at.desc()).limit(limit)
        if principal is not None:
            query = query.where(runs.c.principal == principal)
        if status is not None:
            query = query.where(runs.c.status == status)
        if app is not None:
            query = query.where(runs.c.app == app)
        with self.engine.connect() as conn:
            return [_run_record(row) for row in conn.execute(query).mappings()]

    def set_run_status(
        self, run_id: str, status: RunStatus, *, output: str | None = None, error: str | None = None
    ) -> None:
        values: dict[str, Any] = {"status": status, "updated_at": utcnow()}
        if output is not None:
            values["output"] = output
        if error is not None:
            values["error"] = error
        if status in (RunStatus.finished, RunStatus.failed, RunStatus.cancelled):
            values["owner"] = None
        with self._tx() as conn:
            conn.execute(update(runs).where(runs.c.id == run_id).values(**values))

    def claim_run(self, run_id: str, *, stale_after: float = 15.0) -> bool:
        """Take ownership of a run whose owner is gone (no heartbeat for `stale_after` s, or a dead local pid)."""
        run = self.get_run(run_id)
        if run.owner == self.owner:
            return True
        if run.owner is not None and _owner_alive(run.owner, run.heartbeat_at, stale_after):
            return False
        with self._tx() as conn:
            result = conn.execute(
                update(runs)
                .where(runs.c.id == run_id, (runs.c.owner == run.owner) | runs.c.owner.is_(None))
                .values(owner=self.owner, heartbeat_at=_clock(), updated_at=utcnow())
            )
        return result.rowcount == 1

    def run_is_live_elsewhere(self, run_id: str, *, stale_after: float = 15.0) -> bool:
        run = self.get_run(run_id)
        return run.owner not in (None, self.owner) and _owner_alive(run.owner, run.heartbeat_at, stale_after)

    def heartbeat(self) -> None:
        """Mark every run this process owns as alive (one indexed statement, however many runs)."""
        with self._tx() as conn:
            conn.execute(update(runs).where(runs.c.owner == self.owner).values(heartbeat_at=_clock()))

    def request_cancel(self, run_id: str) -> None:
        self.get_run(run_id)
        with self._tx() as conn:
            conn.execute(update(runs).where(runs.c.id == run_id).values(cancel_requested=1, updated_at=utcnow()))

    def cancel_requested(self) -> set[str]:
        """Runs this process owns that another process asked to stop."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(runs.c.id).where(runs.c.owner == self.owner, runs.c.cancel_requested == 1))
            return {row[0] for row in rows}

    # ---- checkpoints ------------------------------------------------------------------------------------------

    def save_step(
        self,
        run_id: str,
        *,
        checkpoint: tuple[int, int, list[str]] | None,
        tool_calls: list[dict[str, Any]] | tuple[()] = (),
        events: list[EventRow] | tuple[()] = (),
    ) -> None:
        """Write what one step produced in one transaction: its checkpoint, tool call records and events (in order).

        `checkpoint` is (step, first, messages): the run's messages from index `first` on (each as JSON); messages
        before `first` are kept as stored.
        """
        if self._sqlite:
            self._save_step_sqlite(run_id, checkpoint, tool_calls, events)
            return
        # The hot path of every step: prepared text statements, not Core constructs built per call.
        with self._tx() as conn:
            if checkpoint is not None:
                step, first, items = checkpoint
                conn.execute(_DELETE_MESSAGES_FROM, {"run_id": run_id, "first": first})
                if items:
                    conn.execute(_INSERT_MESSAGE, [{"run_id": run_id, "idx": first + i, "data": d} for i, d in enumerate(items)])
                params = {"run_id": run_id, "step": step, "count": first + len(items), "ts": utcnow()}
                if conn.execute(_UPDATE_CHECKPOINT, params).rowcount == 0:
                    conn.execute(_INSERT_CHECKPOINT, params)
            if tool_calls:
                conn.execute(_INSERT_TOOL_CALL, [_tool_call_row(run_id, **c) for c in tool_calls])
            if events:
                conn.execute(_INSERT_EVENT, [{"run_id": run_id, "seq": q, "type": t, "data": _dumps(d), "ts": ts} for q, t, d, ts in events])

    def _save_step_sqlite(
        self,
        run_id: str,
        checkpoint: tuple[int, int, list[str]] | None,
        tool_calls: Any,
        events: Any,
    ) -> None:
        # On SQLite the per-step write goes straight to the driver (a third of the cost through SQLAlchemy), on a
        # connection this thread keeps; SQL and transaction are the same as the portable path above.
        conn = getattr(self._local, "raw", None)
        if conn is None:
            conn = self._local.raw = self.engine.raw_connection()
            self._raw_connections.append(conn)
        try:
            cur = conn.cursor()
            if checkpoint is not None:
                step, first, items = checkpoint
                cur.execute("DELETE FROM messages WHERE run_id = ? AND idx >= ?", (run_id, first))
                cur.executemany("INSERT INTO messages (run_id, idx, data) VALUES (?, ?, ?)", [(run_id, first + i, d) for i, d in enumerate(items)])
                params = (step, first + len(items), utcnow(), run_id)
                cur.execute("UPDATE checkpoints SET step = ?, count = ?, updated_at = ? WHERE run_id = ?", params)
                if cur.rowcount == 0:
                    cur.execute("INSERT INTO checkpoints (step, count, updated_at, run_id) VALUES (?, ?, ?, ?)", params)
            if tool_calls:
                rows = [_tool_call_row(run_id, **c) for c in tool_calls]
                cur.executemany(
                    "INSERT INTO tool_calls (run_id, step, tool_call_id, tool_name, args, result, ok, error_code, started_at, "
                    "duration_ms) VALUES (:run_id, :step, :tool_call_id, :tool_name, :args, :result, :ok, :error_code, "
                    ":started_at, :duration_ms)",
                    rows,
                )
            if events:
                cur.executemany("INSERT INTO events (run_id, seq, type, data, ts) VALUES (?, ?, ?, ?, ?)", [(run_id, q, t, _dumps(d), ts) for q, t, d, ts in events])
            conn.commit()
        except BaseException:
            conn.rollback()
            raise

    def save_checkpoint(self, run_id: str, step: int, messages_json: str) -> None:
        """Replace the run's whole checkpoint with `messages_json` (a JSON array of messages)."""
        items = [json.dumps(m, ensure_ascii=False) for m in json.loads(messages_json)]
        self.save_step(run_id, checkpoint=(step, 0, items))

    def load_checkpoint(self, run_id: str) -> tuple[int, str] | None:
        """(step, the conversation as a JSON array), or None before the run's first checkpoint."""
        with self.engine.connect() as conn:
            head = conn.execute(select(checkpoints.c.step, checkpoints.c.count).where(checkpoints.c.run_id == run_id)).first()
            if head is None:
                return None
            rows = conn.execute(
                select(messages.c.data).where(messages.c.run_id == run_id, messages.c.idx < head.count).order_by(messages.c.idx)
            ).scalars()
            return head.step, "[" + ",".join(rows) + "]"

    # ---- asks -------------------------------------------------------------------------------------------------

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
        ask_id = new_id("ask")
        with self._tx() as conn:
            conn.execute(
                insert(asks).values(
                    id=ask_id,
                    run_id=run_id,
                    kind=kind,
                    tool_call_id=tool_call_id,
                    payload=_dumps(payload),
                    status=AskStatus.pending,
                    timeout_s=timeout_s,
                    trace_id=trace_id,
                    created_at=utcnow(),
                )
            )
        return self.get_ask(ask_id)

    def get_ask(self, ask_id: str) -> AskRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(asks).where(asks.c.id == ask_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"No ask with id {ask_id!r}. List pending asks with `consulta asks`.")
        return _ask_record(row)

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
        with self.engine.connect() as conn:
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
        """Close a pending ask. Raises NotFoundError for an unknown id, ConflictError if it is already closed."""
        with self._tx() as conn:
            seq = _next_counter(conn, "ask_closed_seq")
            result = conn.execute(
                update(asks)
                .where(asks.c.id == ask_id, asks.c.status == expect)
                .values(
                    status=status,
                    answer=_dumps(answer),
                    outcome=_dumps(outcome),
                    answered_by=answered_by,
                    closed_at=utcnow(),
                    closed_seq=seq,
                )
            )
        if result.rowcount == 0:
            existing = self.get_ask(ask_id)  # raises NotFoundError for an unknown id
            raise ConflictError(
                f"Ask {ask_id} is already {existing.status.value} (closed at {existing.closed_at}); it cannot be "
                "answered again. List the pending ones with `consulta asks`."
            )
        return self.get_ask(ask_id)

    def asks_closed_since(self, seq: int) -> tuple[int, list[tuple[str, str]]]:
        """(new high-water mark, [(ask_id, status)]) of asks closed after `seq`: one cheap query for all waiters."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(asks.c.id, asks.c.status, asks.c.closed_seq)
                .where(asks.c.closed_seq > seq)
                .order_by(asks.c.closed_seq)
            ).all()
        high = max((row[2] for row in rows), default=seq)
        return high, [(row[0], row[1]) for row in rows]

    def ask_closed_high_water(self) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(select(func.max(asks.c.closed_seq))).scalar()
        return int(value or 0)

    # ---- plans ------------------------------------------------------------------------------------------------

    def get_or_create_staging_plan(self, *, run_id: str, app: str) -> PlanRecord:
        with self._tx() as conn:
            row = (
                conn.execute(select(plans).where(plans.c.run_id == run_id, plans.c.status == PlanStatus.staging))
                .mappings()
                .first()
            )
            if row is not None:
                return _plan_record(row)
            plan_id = new_id("plan")
            now = utcnow()
            conn.execute(
                insert(plans).values(
                    id=plan_id, run_id=run_id, app=app, status=PlanStatus.staging, items="[]", created_at=now, updated_at=now
                )
            )
        return self.get_plan(plan_id)

    def get_plan(self, plan_id: str) -> PlanRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(plans).where(plans.c.id == plan_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"No plan with id {plan_id!r}.")
        return _plan_record(row)

    def list_plans(self, *, run_id: str) -> list[PlanRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(plans).where(plans.c.run_id == run_id).order_by(plans.c.created_at)).mappings()
            return [_plan_record(row) for row in rows]

    def update_plan(
        self,
        plan_id: str,
        *,
        status: PlanStatus | None = None,
        items: list[dict[str, Any]] | None = None,
        ask_id: str | None = None,
        result: Any = None,
    ) -> PlanRecord:
        values: dict[str, Any] = {"updated_at": utcnow()}
        if status is not None:
            values["status"] = status
        if items is not None:
            values["items"] = _dumps(items)
        if ask_id is not None:
            values["ask_id"] = ask_id
        if result is not None:
            values["result"] = _dumps(result)
        with self._tx() as conn:
            conn.execute(update(plans).where(plans.c.id == plan_id).values(**values))
        return self.get_plan(plan_id)

    # ---- tool calls and events --------------------------------------------------------------------------------

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
            run_id, step=step, tool_call_id=tool_call_id, tool_name=tool_name, args=args, result=result,
            started_at=started_at, duration_ms=duration_ms,
        )
        with self._tx() as conn:
            conn.execute(insert(tool_calls).values(**row))

    def list_tool_calls(self, run_id: str) -> list[ToolCallRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(tool_calls).where(tool_calls.c.run_id == run_id).order_by(tool_calls.c.id))
            return [
                ToolCallRecord(
                    run_id=row.run_id,
                    step=row.step,
                    tool_call_id=row.tool_call_id,
                    tool_name=row.tool_name,
                    args=_loads(row.args),
                    result=_loads(row.result),
                    ok=bool(row.ok),
                    error_code=row.error_code,
                    started_at=row.started_at,
                    duration_ms=row.duration_ms,
                )
                for row in rows
            ]

    # ---- the consultation ledger ------------------------------------------------------------------------------

    def record_consultation(
        self,
        *,
        expert_id: str,
        status: str,
        request: dict[str, Any],
        started_at: str,
        duration_ms: float,
        attempts: int,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        expert_output: dict[str, Any] | None = None,
        binding_rules: list[dict[str, Any]] | None = None,
        instruction_updates: dict[str, Any] | None = None,
        error: str | None = None,
        expert_run_id: str | None = None,
    ) -> ConsultationRecord:
        """Record a finished consultation under the next number (`consult_0001`, …): numbers are given out in the
        same transaction as the row, so concurrent writers never share or reuse one."""
        row = {
            "run_id": run_id,
            "tool_call_id": tool_call_id,
            "expert_id": expert_id,
            "status": status,
            "request": _dumps(request),
            "expert_output": _dumps(expert_output) if expert_output is not None else None,
            "binding_rules": _dumps(binding_rules or []),
            "instruction_updates": _dumps(instruction_updates or {}),
            "attempts": attempts,
            "error": error,
            "expert_run_id": expert_run_id,
            "started_at": started_at,
            "finished_at": utcnow(),
            "duration_ms": duration_ms,
        }
        with self._tx() as conn:
            row["id"] = f"consult_{_next_counter(conn, 'consultation'):04d}"
            conn.execute(insert(consultations).values(**row))
        return _consultation_record(row)

    def get_consultation(self, consultation_id: str) -> ConsultationRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(consultations).where(consultations.c.id == consultation_id)).mappings().first()
        if row is None:
            raise NotFoundError(f"No consultation with id {consultation_id!r}. List them with `consulta consultations`.")
        return _consultation_record(row)

    def list_consultations(self, *, run_id: str | None = None, thread_id: str | None = None, limit: int = 100) -> list[ConsultationRecord]:
        """The newest consultations first (of one run, or of the runs of one thread, if given)."""
        query = select(consultations).order_by(consultations.c.id.desc()).limit(limit)
        if run_id is not None:
            query = query.where(consultations.c.run_id == run_id)
        if thread_id is not None:
            query = query.where(consultations.c.run_id.in_(select(runs.c.id).where(runs.c.thread_id == thread_id)))
        with self.engine.connect() as conn:
            return [_consultation_record(row) for row in conn.execute(query).mappings()]

    def append_event(self, run_id: str, type_: str, data: dict[str, Any], *, seq: int | None = None) -> EventRecord:
        ts = utcnow()
        with self._tx() as conn:
            if seq is None:  # TEMP (runtime helper) until the store helper's version lands
                seq = int(conn.execute(select(func.coalesce(func.max(events.c.seq), 0)).where(events.c.run_id == run_id)).scalar_one()) + 1
            result = conn.execute(insert(events).values(run_id=run_id, seq=seq, type=type_, data=_dumps(data), ts=ts))
            event_id = result.inserted_primary_key[0] if result.inserted_primary_key else 0
        return EventRecord(id=int(event_id), run_id=run_id, type=type_, data=data, ts=ts, seq=seq)

    def last_event_seq(self, run_id: str) -> int:
        """TEMP (runtime helper): the seq of the run's last stored event (0 when none)."""
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.coalesce(func.max(events.c.seq), 0)).where(events.c.run_id == run_id)).scalar_one())

    def list_events(self, run_id: str, *, after_id: int = 0, after_seq: int = 0) -> list[EventRecord]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(events).where(events.c.run_id == run_id, events.c.id > after_id, events.c.seq > after_seq).order_by(events.c.id)
            )
            return [EventRecord(id=r.id, run_id=r.run_id, type=r.type, data=_loads(r.data), ts=r.ts, seq=r.seq) for r in rows]


_UPDATE_CHECKPOINT = text("UPDATE checkpoints SET step = :step, count = :count, updated_at = :ts WHERE run_id = :run_id")
_INSERT_CHECKPOINT = text("INSERT INTO checkpoints (run_id, step, count, updated_at) VALUES (:run_id, :step, :count, :ts)")
_DELETE_MESSAGES_FROM = text("DELETE FROM messages WHERE run_id = :run_id AND idx >= :first")
_INSERT_MESSAGE = text("INSERT INTO messages (run_id, idx, data) VALUES (:run_id, :idx, :data)")
_INSERT_TOOL_CALL = text(
    "INSERT INTO tool_calls (run_id, step, tool_call_id, tool_name, args, result, ok, error_code, started_at, duration_ms) "
    "VALUES (:run_id, :step, :tool_call_id, :tool_name, :args, :result, :ok, :error_code, :started_at, :duration_ms)"
)
_INSERT_EVENT = text("INSERT INTO events (run_id, seq, type, data, ts) VALUES (:run_id, :seq, :type, :data, :ts)")


def _tool_call_row(
    run_id: str, *, step: int, tool_call_id: str, tool_name: str, args: Any, result: Any, started_at: str, duration_ms: float
) -> dict[str, Any]:
    ok = not (isinstance(result, dict) and result.get("ok") is False)
    return {
        "run_id": run_id,
        "step": step,
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        "args": _dumps(args),
        "result": _dumps(result),
        "ok": int(ok),
        "error_code": result.get("error_code") if isinstance(result, dict) else None,
        "started_at": started_at,
        "duration_ms": duration_ms,
    }


def _next_counter(conn: Connection, name: str) -> int:
    result = conn.execute(update(counters).where(counters.c.name == name).values(value=counters.c.value + 1))
    if result.rowcount == 0:
        conn.execute(insert(counters).values(name=name, value=1))
        return 1
    return int(conn.execute(select(counters.c.value).where(counters.c.name == name)).scalar_one())


def _clock() -> float:
    return datetime.now(UTC).timestamp()


def _owner_alive(owner: str, heartbeat_at: float | None, stale_after: float) -> bool:
    host, _, rest = owner.partition(":")
    pid_text = rest.split(":", 1)[0]
    if host == socket.gethostname() and pid_text.isdigit():
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        # A live pid may have been reused; the heartbeat settles it.
    if heartbeat_at is None:
        return False
    return (_clock() - heartbeat_at) < stale_after


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _run_record(row: Mapping[str, Any]) -> RunRecord:
    return RunRecord(
        id=row["id"],
        app=row["app"],
        thread_id=row["thread_id"],
        parent_run_id=row["parent_run_id"],
        status=RunStatus(row["status"]),
        prompt=row["prompt"],
        model=row["model"],
        lang=row["lang"],
        options=_loads(row["options"]) or {},
        trace_id=row["trace_id"],
        output=row["output"],
        error=row["error"],
        owner=row["owner"],
        principal=row["principal"],
        agent=row.get("agent") or "",
        heartbeat_at=row["heartbeat_at"],
        cancel_requested=bool(row["cancel_requested"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _consultation_record(row: Mapping[str, Any]) -> ConsultationRecord:
    return ConsultationRecord(
        id=row["id"],
        run_id=row["run_id"],
        tool_call_id=row["tool_call_id"],
        expert_id=row["expert_id"],
        status=row["status"],
        request=_loads(row["request"]),
        expert_output=_loads(row["expert_output"]),
        binding_rules=_loads(row["binding_rules"]) or [],
        instruction_updates=_loads(row["instruction_updates"]) or {},
        attempts=row["attempts"],
        error=row["error"],
        expert_run_id=row["expert_run_id"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        duration_ms=row["duration_ms"],
    )


def _ask_record(row: RowMapping) -> AskRecord:
    return AskRecord(
        id=row["id"],
        run_id=row["run_id"],
        kind=row["kind"],
        tool_call_id=row["tool_call_id"],
        payload=_loads(row["payload"]),
        status=AskStatus(row["status"]),
        answer=_loads(row["answer"]),
        outcome=_loads(row["outcome"]),
        answered_by=row["answered_by"],
        timeout_s=row["timeout_s"],
        trace_id=row["trace_id"],
        created_at=row["created_at"],
        closed_at=row["closed_at"],
    )


def _plan_record(row: RowMapping) -> PlanRecord:
    return PlanRecord(
        id=row["id"],
        run_id=row["run_id"],
        app=row["app"],
        status=PlanStatus(row["status"]),
        items=_loads(row["items"]) or [],
        ask_id=row["ask_id"],
        result=_loads(row["result"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )

