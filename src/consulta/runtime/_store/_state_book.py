"""A typed per-person state book: one state (a pydantic model) per principal, kept whole in one of an app's tables.

The table is the app's (declared in its `AppTables`, made by `state_table`): the principal, the state as JSON, when it
was written, and any columns of the app's own that `columns(state)` fills (e.g. an id to look a state up by). The
principal is whatever names the person to the app: the run's principal (advisor), or an id of the app's (quiz's
profile id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError
from sqlalchemy import Column, MetaData, String, Table, Text, delete, select
from sqlalchemy.engine import Connection, Engine

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

    def load(self, principal: str, *, conn: Connection | None = None) -> M:
        """The principal's state, or a new one (not yet stored)."""
        found = self.find(principal, conn=conn)
        return self._new() if found is None else found

    def find(self, principal: str, *, conn: Connection | None = None, for_update: bool = False) -> M | None:
        """The principal's stored state; None when there is none, or none this version can read. Within `conn` (a
        transaction of the caller's, e.g. the store's `writing`), `for_update` locks the row on PostgreSQL until it
        ends, so that a `save` in it writes over what was read."""
        query = select(self.table.c.state).where(self.table.c.principal == principal)
        with self._connection(conn, write=False) as c:
            row = c.execute(query.with_for_update() if for_update else query).first()
        if row is None:
            return None
        try:
            return self.model.model_validate_json(row.state)
        except ValidationError:
            return None

    def save(self, principal: str, state: M, *, conn: Connection | None = None) -> None:
        """Store the principal's state whole, in one statement (within `conn`'s transaction when given: it stands or
        falls with the caller's other writes)."""
        values = {
            **(self._columns(state) if self._columns is not None else {}),
            "state": state.model_dump_json(),
            "updated_at": utcnow(),
        }
        with self._connection(conn, write=True) as c:
            c.execute(upsert(c, self.table, key=["principal"], set_=list(values)).values(principal=principal, **values))

    @contextmanager
    def _connection(self, conn: Connection | None, *, write: bool) -> Iterator[Connection]:
        """`conn` as it is, or one of the book's own (a transaction committed at the end when it writes)."""
        if conn is not None:
            yield conn
            return
        with self.engine.begin() if write else self.engine.connect() as own:
            yield own

    def clear(self, principal: str) -> M:
        """Forget the principal's state; the new one is returned (not yet stored)."""
        with self.engine.begin() as conn:
            conn.execute(delete(self.table).where(self.table.c.principal == principal))
        return self._new()
