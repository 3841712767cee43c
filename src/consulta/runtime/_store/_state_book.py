"""A typed per-person state book: one state (a pydantic model) per principal, kept whole in one of an app's tables.

The table is the app's (declared in its `AppTables`, made by `state_table`): the principal, the state as JSON, when it
was written, and any columns of the app's own that `columns(state)` fills (e.g. an id to look a state up by).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError
from sqlalchemy import Column, MetaData, String, Table, Text, delete, select
from sqlalchemy.engine import Engine

from ._app_tables import upsert
from ._values import utcnow

__all__ = ["StateBook", "state_table"]

M = TypeVar("M", bound=BaseModel)


def state_table(name: str, metadata: MetaData, *columns: Column[Any], principal_length: int = 200) -> Table:
    """A state book's table `name` in `metadata`: `principal` (the key), `state` (JSON), `updated_at`, and `columns`."""
    return Table(
        name,
        metadata,
        Column("principal", String(principal_length), primary_key=True),
        *columns,
        Column("state", Text, nullable=False),
        Column("updated_at", String(32), nullable=False),
    )


class StateBook(Generic[M]):
    """Each principal's state of type `model` in `table` (see `state_table`), on `engine` (the store's).

    `load` never fails on what is stored: a principal with no state, or with one this version cannot read, gets a new
    one (`new()`, default `model()`), not yet stored. `save` writes the state whole in one statement (an upsert: two
    first saves racing end as one row), so a reader sees the one before or the one after, never half."""

    def __init__(
        self,
        engine: Engine,
        table: Table,
        model: type[M],
        *,
        new: Callable[[], M] | None = None,
        columns: Callable[[M], Mapping[str, Any]] | None = None,
    ) -> None:
        self.engine = engine
        self.table = table
        self.model = model
        self._new = new or model
        self._columns = columns

    def load(self, principal: str) -> M:
        """The principal's state, or a new one (not yet stored)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(self.table.c.state).where(self.table.c.principal == principal)).first()
        if row is None:
            return self._new()
        try:
            return self.model.model_validate_json(row.state)
        except ValidationError:
            return self._new()

    def save(self, principal: str, state: M) -> None:
        """Store the principal's state whole, in one statement."""
        values = {
            **(self._columns(state) if self._columns is not None else {}),
            "state": state.model_dump_json(),
            "updated_at": utcnow(),
        }
        with self.engine.begin() as conn:
            conn.execute(
                upsert(conn, self.table, key=["principal"], set_=list(values)).values(principal=principal, **values)
            )

    def clear(self, principal: str) -> M:
        """Forget the principal's state; the new one is returned (not yet stored)."""
        with self.engine.begin() as conn:
            conn.execute(delete(self.table).where(self.table.c.principal == principal))
        return self._new()
