"""The store's database connection, and the few statements whose spelling differs between SQLite and PostgreSQL.

Every query is SQLAlchemy Core written once against `_schema`; what the two databases spell differently (an upsert,
the lock that lets one process at a time migrate, SQLite's connection settings) is here, each behind one function.
"""

from __future__ import annotations

import importlib
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, TypeVar

from sqlalchemy import Table, create_engine, event, func, select
from sqlalchemy.engine import Connection, Engine, RowMapping, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.dml import Insert

from .._errors import ConfigError, NotFoundError

__all__ = ["Database", "insert_for", "locked_transaction", "migration_lock"]

T = TypeVar("T")

# The dialects whose INSERT … ON CONFLICT the store uses; each is imported by the store that uses it (PostgreSQL's
# costs a SQLite store's `consulta asks` a twentieth of a second).
_INSERTS = ("sqlite", "postgresql")

# Any fixed number: the PostgreSQL advisory lock every Consulta process takes to migrate a store.
_KEPT = 3  # threads that keep a connection for the per-step write (the pool holds 5, and 10 more when busy)

_MIGRATION_LOCK = zlib.crc32(b"consulta store migration")


class Database:
    """An engine on a SQLite or PostgreSQL URL. Thread-safe (SQLAlchemy pools connections)."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.dialect = make_url(url).get_backend_name()
        if self.dialect not in _INSERTS:
            raise ConfigError(
                f"The store runs on SQLite or PostgreSQL, and {make_url(url).render_as_string(hide_password=True)!r} is "
                f"{self.dialect}. Set CONSULTA_DATABASE_URL to a sqlite:/// or postgresql+psycopg:// URL."
            )
        self.engine: Engine = create_engine(url, echo=echo)
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._prepared: dict[str, Any] = {}
        self._kept: dict[int, Connection] = {}  # thread id -> the connection it keeps (see `begin_kept`)
        self._kept_lock = threading.Lock()
        self._compiled: dict[tuple[int, tuple[str, ...]], _Compiled] = {}
        self._dbapi_error: type[Exception] = self.engine.dialect.loaded_dbapi.Error

    def begin(self) -> AbstractContextManager[Connection]:
        """One transaction: committed at the end of the block, rolled back if it raises."""
        return self.engine.begin()

    @contextmanager
    def begin_kept(self) -> Iterator[Connection]:
        """Like `begin`, on a connection this thread keeps open: for the per-step write, which runs on every step
        of every run and would otherwise check a connection out of the pool and back each time. A few threads keep
        one (those of finished threads are closed); others get a pooled one."""
        conn = self._kept.get(threading.get_ident())
        if conn is None:
            conn = self._keep()
        if conn is None:
            with self.engine.begin() as pooled:
                yield pooled
            return
        with conn.begin():
            yield conn

    def _keep(self) -> Connection | None:
        with self._kept_lock:
            if len(self._kept) >= _KEPT:
                alive = {thread.ident for thread in threading.enumerate()}
                for ident in [i for i in self._kept if i not in alive]:
                    self._kept.pop(ident).close()
            if len(self._kept) >= _KEPT:
                return None
            conn = self._kept[threading.get_ident()] = self.engine.connect()
            return conn

    def read(self) -> AbstractContextManager[Connection]:
        """A connection for reading (its implicit transaction is rolled back at the end)."""
        return self.engine.connect()

    def one(self, table: Table, key: Any, *, missing: str) -> RowMapping:
        """The row of `table` whose primary key is `key`; NotFoundError(`missing`) if there is none."""
        with self.read() as conn:
            row = conn.execute(select(table).where(table.primary_key.columns[0] == key)).mappings().first()
        if row is None:
            raise NotFoundError(missing)
        return row

    def upsert(self, table: Table, *, key: Sequence[str], set_: Sequence[str] | Mapping[str, Any]) -> Insert:
        """INSERT … ON CONFLICT (key) DO UPDATE SET …: the new row, or the existing one updated. `set_` names the
        columns that take the inserted row's values, or maps columns to expressions."""
        return insert_for(self.dialect, table, key=key, set_=set_)

    def prepared(self, name: str, build: Callable[[Database], T]) -> T:
        """The statement `build` makes for this database, built once (the hot paths execute it again and again,
        and SQLAlchemy compiles a statement it has seen once)."""
        statement = self._prepared.get(name)
        if statement is None:
            statement = self._prepared[name] = build(self)
        return statement

    def write(self, conn: Connection, statement: Executable, rows: Sequence[Mapping[str, Any]]) -> None:
        """Execute a write statement once per row, in `conn`'s transaction, on the driver's cursor.

        The per-step write of every run goes this way (`write`, `scalar`): the statements are SQLAlchemy's, compiled
        once for this database, and only SQLAlchemy's per-call work is skipped (most of a step's store time).
        """
        if rows:
            self._on_cursor(conn, statement, rows, lambda cursor, sql, params: cursor.executemany(sql, params))

    def scalar(self, conn: Connection, statement: Executable, params: Mapping[str, Any]) -> Any:
        """The first column of the first row `statement` selects (see `write`)."""

        def fetch(cursor: Any, sql: str, rows: list[Any]) -> Any:
            cursor.execute(sql, rows[0])
            return cursor.fetchone()[0]

        return self._on_cursor(conn, statement, [params], fetch)

    def _on_cursor(
        self, conn: Connection, statement: Executable, rows: Sequence[Mapping[str, Any]], run: Callable[..., T]
    ) -> T:
        keys = tuple(rows[0])
        compiled = self._compiled.get((id(statement), keys))
        if compiled is None:
            compiled = self._compiled[(id(statement), keys)] = _Compiled.of(statement, keys, self.engine.dialect)
        params = compiled.params(rows)
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            return run(cursor, compiled.sql, params)
        except self._dbapi_error as error:  # as SQLAlchemy raises it (IntegrityError, OperationalError, …)
            raise DBAPIError.instance(compiled.sql, params, error, self._dbapi_error) from error
        finally:
            cursor.close()

    def migrating(self) -> AbstractContextManager[Connection]:
        """A transaction that only one process at a time holds, for bringing the schema up to date."""
        return migration_lock(self.engine)

    def dispose(self) -> None:
        with self._kept_lock:
            for conn in self._kept.values():
                conn.close()
            self._kept.clear()
        self.engine.dispose()


@dataclass(frozen=True)
class _Compiled:
    """A statement compiled for one database and one set of parameter names: its SQL, and how a row's values
    become the driver's parameters (all the per-call work left)."""

    statement: Executable
    """Kept with its compiled form, so that its id (the cache key) is never reused for another."""
    sql: str
    fixed: dict[str, Any]
    """Values written in the statement that the rows do not give (e.g. the 0 in coalesce(…, 0))."""
    order: Callable[[Mapping[str, Any]], tuple[Any, ...]] | None
    """A row's values in the order of the SQL's positional parameters (None: the driver takes named ones)."""

    @classmethod
    def of(cls, statement: Executable, keys: tuple[str, ...], dialect: Any) -> _Compiled:
        done = statement.compile(dialect=dialect, column_keys=list(keys))
        fixed = {name: value for name, value in done.params.items() if name not in keys}
        order = done.positiontup
        getter = None
        if order is not None:
            pick = itemgetter(*order) if order else (lambda row: ())
            getter = pick if len(order) != 1 else (lambda row: (pick(row),))
        return cls(statement, done.string, fixed, getter)

    def params(self, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
        if self.fixed:
            rows = [{**self.fixed, **row} for row in rows]
        return [self.order(row) for row in rows] if self.order is not None else list(rows)


def insert_for(dialect: str, table: Table, *, key: Sequence[str], set_: Sequence[str] | Mapping[str, Any]) -> Insert:
    """INSERT … ON CONFLICT (key) DO UPDATE SET … as `dialect` (sqlite, postgresql) spells it (see `Database.upsert`)."""
    statement = importlib.import_module(f"sqlalchemy.dialects.{dialect}").insert(table)
    values = {name: statement.excluded[name] for name in set_} if not isinstance(set_, Mapping) else set_
    return statement.on_conflict_do_update(index_elements=list(key), set_=values)


def migration_lock(engine: Engine) -> AbstractContextManager[Connection]:
    """A transaction that only one process at a time holds on `engine`'s database, for bringing a schema up to date
    (the store's and the apps' alike)."""
    return locked_transaction(engine, advisory_lock=_MIGRATION_LOCK)


@contextmanager
def locked_transaction(engine: Engine, *, advisory_lock: int | None = None) -> Iterator[Connection]:
    """One transaction holding the write lock from its start (SQLite: BEGIN IMMEDIATE), so that what it reads is what
    it writes over; on PostgreSQL, also the advisory lock `advisory_lock` if given (lock rows read with FOR UPDATE).
    Committed at the end of the block, rolled back if it raises."""
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock now, not at the first write
        else:
            conn.begin()
            if advisory_lock is not None:
                conn.execute(select(func.pg_advisory_xact_lock(advisory_lock)))
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA busy_timeout=10000")  # first: another process may hold the lock while this one opens
    for attempt in range(50):  # switching a new file to WAL can find it locked by another process doing the same
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError:
            if attempt == 49:
                raise
            time.sleep(0.02)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
