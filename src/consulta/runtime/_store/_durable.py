"""Durable steps: a piece of a run's work done once, its result recorded, and replayed (not done again) when the run
is resumed — e.g. a file written, a model asked, a member of a team run — keyed by the run and a name the caller
gives each step."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import select

from ._database import Database
from ._schema import durable_steps
from ._values import dumps, loads, utcnow

__all__ = ["DurableSteps", "RunSteps"]

_NOT_DONE = object()


class DurableSteps:
    """The durable steps of a store's runs (a part of `Store`)."""

    _db: Database

    def step_result(self, run_id: str, key: str) -> Any:
        """The recorded result of step `key` of run `run_id`, or `DurableSteps.NOT_DONE`."""
        with self._db.read() as conn:
            row = conn.execute(
                select(durable_steps.c.result).where(durable_steps.c.run_id == run_id, durable_steps.c.key == key)
            ).first()
        return _NOT_DONE if row is None else loads(row.result)

    NOT_DONE = _NOT_DONE
    """What `step_result` returns for a step not done yet."""

    def record_step(self, run_id: str, key: str, result: Any) -> Any:
        """Record `result` (JSON-able) as step `key` of run `run_id`, unless it is recorded already: the recorded one
        is returned (of two writers, the first stands)."""
        row = {"run_id": run_id, "key": key, "result": dumps(result), "created_at": utcnow()}
        with self._db.begin() as conn:
            statement = self._db.upsert(durable_steps, key=["run_id", "key"], set_={"key": durable_steps.c.key})
            conn.execute(statement.values(**row))  # a no-op update where the step is recorded: the first stands
            stored = conn.execute(
                select(durable_steps.c.result).where(durable_steps.c.run_id == run_id, durable_steps.c.key == key)
            ).scalar_one()
        return loads(stored)

    def recorded_steps(self, run_id: str, prefix: str = "") -> dict[str, Any]:
        """The recorded steps of run `run_id` whose keys begin with `prefix`: key → result, in the order recorded (to
        the millisecond; steps of the same millisecond by key)."""
        query = select(durable_steps.c.key, durable_steps.c.result).where(durable_steps.c.run_id == run_id)
        if prefix:
            query = query.where(durable_steps.c.key.startswith(prefix, autoescape=True))
        with self._db.read() as conn:
            rows = conn.execute(query.order_by(durable_steps.c.created_at, durable_steps.c.key)).all()
        return {row.key: loads(row.result) for row in rows}

    def run_steps(self, run_id: str) -> RunSteps:
        """The durable steps of run `run_id`, as one handle (what a piece of work that resumes is given)."""
        return RunSteps(self, run_id)

    async def durable_step(self, run_id: str, key: str, work: Callable[[], Awaitable[Any] | Any]) -> Any:
        """Step `key` of run `run_id`: `work()`'s result (JSON-able; awaited if it is a coroutine), recorded; on a
        resumed run the recorded result, `work` not called again. What is returned is the result as recorded (its
        JSON form), the same the first time as on a replay. A `work` that raises records nothing."""
        done = self.step_result(run_id, key)
        if done is not _NOT_DONE:
            return done
        result = work()
        if inspect.isawaitable(result):
            result = await result
        return self.record_step(run_id, key, result)


class RunSteps:
    """The durable steps of one run (`Store.run_steps`): `result`, `record`, `recorded` and `step` as on the store,
    with the run given once. A piece of work that spans several runs (the messages of one conversation) keys its steps
    on one of them, e.g. the thread's first run (`RunRecord.thread_id`)."""

    NOT_DONE = _NOT_DONE

    def __init__(self, store: DurableSteps, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def result(self, key: str) -> Any:
        """The recorded result of step `key`, or `NOT_DONE`."""
        return self.store.step_result(self.run_id, key)

    def record(self, key: str, result: Any) -> Any:
        """Record `result` as step `key` unless it is recorded already; the recorded one is returned."""
        return self.store.record_step(self.run_id, key, result)

    def recorded(self, prefix: str = "") -> dict[str, Any]:
        """The recorded steps whose keys begin with `prefix`, in the order recorded (see `Store.recorded_steps`)."""
        return self.store.recorded_steps(self.run_id, prefix)

    async def step(self, key: str, work: Callable[[], Awaitable[Any] | Any]) -> Any:
        """Step `key`: done once and recorded, replayed on resume (see `Store.durable_step`)."""
        return await self.store.durable_step(self.run_id, key, work)
