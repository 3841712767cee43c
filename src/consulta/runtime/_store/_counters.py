"""Store-wide numbers (consultation numbers, the ask-closed mark), given out in the writer's transaction."""

from __future__ import annotations

from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert

from ._database import Database
from ._schema import counters

__all__ = ["next_number"]


def next_number(db: Database, conn: Connection, name: str) -> int:
    """The counter's next value (1 the first time), in `conn`'s transaction: concurrent writers never share one."""
    return int(conn.execute(db.prepared("next number", _bump), {"name": name, "value": 1}).scalar_one())


def _bump(db: Database) -> Insert:
    return db.upsert(counters, key=["name"], set_={"value": counters.c.value + 1}).returning(counters.c.value)
