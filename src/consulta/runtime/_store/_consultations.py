"""The consultation ledger (seed 000): one row per consultation of an expert, numbered consult_0001, 0002, …"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select

from .._records import ConsultationRecord
from ._counters import next_number
from ._database import Database
from ._schema import consultations, runs
from ._values import dumps, loads, loads_or, record_from_row, utcnow

__all__ = ["Consultations"]


class Consultations:
    """The consultation ledger of a store (a part of `Store`)."""

    _db: Database

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
            "request": dumps(request),
            "expert_output": dumps(expert_output) if expert_output is not None else None,
            "binding_rules": dumps(binding_rules or []),
            "instruction_updates": dumps(instruction_updates or {}),
            "attempts": attempts,
            "error": error,
            "expert_run_id": expert_run_id,
            "started_at": started_at,
            "finished_at": utcnow(),
            "duration_ms": duration_ms,
        }
        with self._db.begin() as conn:
            row["id"] = f"consult_{next_number(self._db, conn, 'consultation'):04d}"
            conn.execute(insert(consultations).values(**row))
        return _consultation_record(row)

    def get_consultation(self, consultation_id: str) -> ConsultationRecord:
        missing = f"No consultation with id {consultation_id!r}. List them with `consulta consultations`."
        return _consultation_record(self._db.one(consultations, consultation_id, missing=missing))

    def list_consultations(
        self, *, run_id: str | None = None, thread_id: str | None = None, limit: int = 100
    ) -> list[ConsultationRecord]:
        """The newest consultations first (of one run, or of the runs of one thread, if given)."""
        query = select(consultations).order_by(consultations.c.id.desc()).limit(limit)
        if run_id is not None:
            query = query.where(consultations.c.run_id == run_id)
        if thread_id is not None:
            query = query.where(consultations.c.run_id.in_(select(runs.c.id).where(runs.c.thread_id == thread_id)))
        with self._db.read() as conn:
            return [_consultation_record(row) for row in conn.execute(query).mappings()]


def _consultation_record(row: Mapping[str, Any]) -> ConsultationRecord:
    return record_from_row(
        ConsultationRecord,
        row,
        request=loads,
        expert_output=loads,
        binding_rules=loads_or(list),
        instruction_updates=loads_or(dict),
    )
