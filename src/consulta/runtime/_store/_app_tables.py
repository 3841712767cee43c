"""An app's own tables in the store's database: declared once (`AppTables`, on the app's `AppDef`), created and
migrated by Alembic like the store's own, written with the store's upsert and write transaction.

Each app has its own chain of revisions (its `migrations` folder) and its own version table
(`alembic_version_<app>`), so an app's schema moves on without touching the store's or another app's. The first
revision of a chain creates the tables, and adopts those an earlier version made without migrations (they are left
as they are). One process at a time migrates (the store's migration lock); the others find the tables up to date.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, Table
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.sql.dml import Insert

from ._database import insert_for, locked_transaction, migration_lock
from ._migrations import current_revision, head, run_upgrade

__all__ = ["AppTables", "migrate_app_tables", "upsert", "writing"]


@dataclass(frozen=True, kw_only=True, eq=False)
class AppTables:
    """The tables app `app` keeps in the store's database. `metadata` holds them as the code uses them (their names
    start with the app's, e.g. `advisor_sessions`); `migrations` is the folder of the app's Alembic revisions, whose
    first creates them where missing."""

    app: str
    metadata: MetaData
    migrations: Path

    @property
    def version_table(self) -> str:
        """Where the store records the app's revision."""
        return f"alembic_version_{self.app}"


_migrated: weakref.WeakKeyDictionary[Engine, set[str]] = weakref.WeakKeyDictionary()


def migrate_app_tables(engine: Engine, tables: AppTables) -> None:
    """Bring `tables` up to their newest revision in `engine`'s database (checked once per engine and process; one
    cheap query when they are there)."""
    done = _migrated.setdefault(engine, set())
    if tables.app in done:
        return
    newest = head(tables.migrations)
    with engine.connect() as conn:
        current = current_revision(conn, version_table=tables.version_table)
    if current != newest:
        with migration_lock(engine) as conn:
            run_upgrade(
                conn, metadata=tables.metadata, migrations=tables.migrations, version_table=tables.version_table
            )
    done.add(tables.app)


def upsert(conn: Connection, table: Table, *, key: Sequence[str], set_: Sequence[str] | Mapping[str, Any]) -> Insert:
    """The store's INSERT … ON CONFLICT (key) DO UPDATE SET … for `conn`'s database (SQLite or PostgreSQL): the new
    row, or the existing one updated. `set_` names the columns that take the inserted row's values, or maps columns
    to expressions."""
    return insert_for(conn.dialect.name, table, key=key, set_=set_)


def writing(engine: Engine) -> AbstractContextManager[Connection]:
    """One transaction holding the write lock from its start (SQLite: BEGIN IMMEDIATE), so that what it reads is what
    it writes over (on PostgreSQL, lock the rows read with FOR UPDATE). Committed at the end, rolled back on error."""
    return locked_transaction(engine)
