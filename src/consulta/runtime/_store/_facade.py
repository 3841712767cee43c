"""`Store`: the single source of truth for runs, checkpoints, asks, plans, tool calls, events, consultations and
issued sessions."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from ._app_tables import AppTables, migrate_app_tables
from ._asks import Asks
from ._consultations import Consultations
from ._database import Database
from ._durable import DurableSteps
from ._events import Events
from ._migrations import upgrade
from ._plans import Plans
from ._runs import PROCESS_OWNER, Runs
from ._sessions import Sessions
from ._steps import Steps

__all__ = ["Store"]


class Store(Runs, Steps, Events, Asks, Plans, Consultations, Sessions, DurableSteps):
    """All persistence of the runtime, on SQLite (one file, zero set-up; the default) or PostgreSQL
    (`CONSULTA_DATABASE_URL=postgresql+psycopg://…`, for several processes on several machines).

    Opening a store brings its schema up to date (migrations, see `_migrations`). Thread-safe; every method is one
    short transaction. Each table group is a part (`Runs`, `Steps`, `Events`, `Asks`, `Plans`, `Consultations`,
    `Sessions`, `DurableSteps`); the store is all of them on one database, with the apps' own tables
    (`open_app_tables`).
    """

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        self.owner = PROCESS_OWNER
        self._db = Database(url, echo=echo)
        try:
            upgrade(self._db)
        except BaseException:
            self._db.dispose()
            raise

    def open_app_tables(self, tables: AppTables) -> None:
        """Create or migrate an app's own tables in this store's database (`AppTables`; once per process)."""
        migrate_app_tables(self.engine, tables)

    @property
    def engine(self) -> Engine:
        return self._db.engine

    def close(self) -> None:
        self._db.dispose()
