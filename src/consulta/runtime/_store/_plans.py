"""Plans: the write calls a run staged, waiting for approval, then applied or not."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select, update

from .._errors import NotFoundError
from .._records import PlanRecord, PlanStatus
from ._database import Database
from ._schema import plans
from ._values import dumps, loads, loads_or, new_id, record_from_row, utcnow

__all__ = ["Plans"]


class Plans:
    """The plans of a store's runs (a part of `Store`)."""

    _db: Database

    def get_or_create_staging_plan(self, *, run_id: str, app: str) -> PlanRecord:
        """The run's plan in staging, or a new empty one."""
        with self._db.begin() as conn:
            row = (
                conn.execute(select(plans).where(plans.c.run_id == run_id, plans.c.status == PlanStatus.staging))
                .mappings()
                .first()
            )
            if row is not None:
                return _plan_record(row)
            now = utcnow()
            row = {
                "id": new_id("plan"),
                "run_id": run_id,
                "app": app,
                "status": PlanStatus.staging,
                "items": "[]",
                "ask_id": None,
                "result": None,
                "created_at": now,
                "updated_at": now,
            }
            conn.execute(insert(plans).values(**row))
        return _plan_record(row)

    def get_plan(self, plan_id: str) -> PlanRecord:
        return _plan_record(self._db.one(plans, plan_id, missing=f"No plan with id {plan_id!r}."))

    def list_plans(self, *, run_id: str) -> list[PlanRecord]:
        with self._db.read() as conn:
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
        """Change what is given; returns the plan as it is now. Raises NotFoundError for an unknown id."""
        values: dict[str, Any] = {"updated_at": utcnow()}
        if status is not None:
            values["status"] = status
        if items is not None:
            values["items"] = dumps(items)
        if ask_id is not None:
            values["ask_id"] = ask_id
        if result is not None:
            values["result"] = dumps(result)
        with self._db.begin() as conn:
            row = (
                conn.execute(update(plans).where(plans.c.id == plan_id).values(**values).returning(*plans.c))
                .mappings()
                .first()
            )
        if row is None:
            raise NotFoundError(f"No plan with id {plan_id!r}.")
        return _plan_record(row)


def _plan_record(row: Mapping[str, Any]) -> PlanRecord:
    return record_from_row(PlanRecord, row, status=PlanStatus, items=loads_or(list), result=loads)
