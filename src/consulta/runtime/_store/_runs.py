"""Runs: their rows, and the lease by which one process at a time drives a run (owner, heartbeat, remote stop)."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from .._records import RunRecord, RunStatus
from ._database import Database
from ._schema import runs
from ._values import clock, dumps, loads_or, new_id, record_from_row, utcnow

__all__ = ["PROCESS_OWNER", "Runs", "set_status", "status_row"]

PROCESS_OWNER = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
"""This process, as it is written in the `owner` of the runs it holds."""

_ENDED = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)

_INSERT = insert(runs)
# The columns set are the row's (see `status_row`): compiled once per set of columns.
_SET_STATUS = update(runs).where(runs.c.id == bindparam("run_id"))


class Runs:
    """The runs of a store (a part of `Store`)."""

    _db: Database
    owner: str

    def create_run(
        self,
        *,
        app: str,
        prompt: str,
        model: str,
        lang: str,
        agent: str = "",
        thread_id: str | None = None,
        parent_run_id: str | None = None,
        options: dict[str, Any] | None = None,
        principal: str | None = None,
        trace_id: str | None = None,
    ) -> RunRecord:
        """A new running run, held by this process; `agent` is the agent's name within its app ("" for its main
        one); `trace_id` joins an existing trace (a nested run), else a new one starts."""
        run_id = new_id("run")
        now = utcnow()
        row = {
            "id": run_id,
            "app": app,
            "agent": agent,
            "thread_id": thread_id or run_id,
            "parent_run_id": parent_run_id,
            "status": RunStatus.running.value,
            "prompt": prompt,
            "model": model,
            "lang": lang,
            "options": dumps(options or {}),
            "trace_id": trace_id or uuid.uuid4().hex,
            "output": None,
            "error": None,
            "owner": self.owner,
            "principal": principal,
            "heartbeat_at": clock(),
            "cancel_requested": 0,
            "created_at": now,
            "updated_at": now,
        }
        with self._db.begin() as conn:
            self._db.write(conn, _INSERT, [row])
        return run_record(row)

    def get_run(self, run_id: str) -> RunRecord:
        return run_record(
            self._db.one(runs, run_id, missing=f"No run with id {run_id!r}. List runs with `consulta runs`.")
        )

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
        with self._db.read() as conn:
            return [run_record(row) for row in conn.execute(query).mappings()]

    def set_run_status(
        self, run_id: str, status: RunStatus, *, output: str | None = None, error: str | None = None
    ) -> None:
        """Set the run's status (and its output or error); an ended run is released (no owner)."""
        with self._db.begin() as conn:
            set_status(self._db, conn, status_row(run_id, status, output=output, error=error))

    # ---- the lease ----------------------------------------------------------------------------------------------

    def claim_run(self, run_id: str, *, stale_after: float = 15.0) -> bool:
        """Take ownership of a run whose owner is gone (no heartbeat for `stale_after` s, or a dead local pid).
        Of several processes claiming one run at once, exactly one wins: the update is conditional on the owner
        each of them saw."""
        run = self.get_run(run_id)
        if run.owner == self.owner:
            return True
        if run.owner is not None and _owner_alive(run.owner, run.heartbeat_at, stale_after):
            return False
        seen = runs.c.owner.is_(None) if run.owner is None else runs.c.owner == run.owner
        with self._db.begin() as conn:
            result = conn.execute(
                update(runs)
                .where(runs.c.id == run_id, seen)
                .values(owner=self.owner, heartbeat_at=clock(), updated_at=utcnow())
            )
        return result.rowcount == 1

    def run_is_live_elsewhere(self, run_id: str, *, stale_after: float = 15.0) -> bool:
        run = self.get_run(run_id)
        return run.owner not in (None, self.owner) and _owner_alive(run.owner, run.heartbeat_at, stale_after)

    def heartbeat(self) -> None:
        """Mark every run this process owns as alive (one indexed statement, however many runs)."""
        with self._db.begin() as conn:
            conn.execute(update(runs).where(runs.c.owner == self.owner).values(heartbeat_at=clock()))

    def request_cancel(self, run_id: str) -> None:
        """Ask the run's owner (any process) to stop it. Raises NotFoundError for an unknown run."""
        with self._db.begin() as conn:
            result = conn.execute(
                update(runs).where(runs.c.id == run_id).values(cancel_requested=1, updated_at=utcnow())
            )
        if result.rowcount == 0:
            self.get_run(run_id)  # raises NotFoundError

    def cancel_requested(self) -> set[str]:
        """Runs this process owns that another process asked to stop."""
        with self._db.read() as conn:
            rows = conn.execute(select(runs.c.id).where(runs.c.owner == self.owner, runs.c.cancel_requested == 1))
            return {row[0] for row in rows}


def status_row(run_id: str, status: RunStatus, *, output: str | None, error: str | None) -> dict[str, Any]:
    """The parameters of `_SET_STATUS` for a run's new status (and its output or error; an ended run is released)."""
    row: dict[str, Any] = {"run_id": run_id, "status": status.value, "updated_at": utcnow()}
    if output is not None:
        row["output"] = output
    if error is not None:
        row["error"] = error
    if status in _ENDED:
        row["owner"] = None
    return row


def set_status(db: Database, conn: Connection, row: dict[str, Any]) -> None:
    """Set a run's status in `conn`'s transaction, from `status_row`."""
    db.write(conn, _SET_STATUS, [row])


def run_record(row: Mapping[str, Any]) -> RunRecord:
    return record_from_row(RunRecord, row, status=RunStatus, options=loads_or(dict), cancel_requested=bool)


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
    return (clock() - heartbeat_at) < stale_after
