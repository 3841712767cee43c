"""quiz's and advisor's tables on PostgreSQL: created by their Alembic revisions with the store (what the code
declares, nothing more), adopted where an earlier version made them without migrations, and written with the store's
upsert and write transaction (advisor's sessions through its `StateBook`). SQLite's side: each app's
test_upgrade_from_main.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import MetaData

from consulta.apps.advisor._catalog import ADVISOR_TABLES
from consulta.apps.advisor._sessions import SessionBook
from consulta.apps.quiz._db import QUIZ_TABLES
from consulta.runtime import AppTables, Store

pytestmark = pytest.mark.postgres

Drift = Callable[[Store, MetaData], list[Any]]
APPS = [pytest.param(QUIZ_TABLES, id="quiz"), pytest.param(ADVISOR_TABLES, id="advisor")]


def _version(store: Store, tables: AppTables) -> str | None:
    with store.engine.connect() as conn:
        return conn.execute(sa.text(f"SELECT version_num FROM alembic_version_{tables.app}")).scalar()


@pytest.mark.parametrize("tables", APPS)
def test_a_new_postgres_store_gets_the_tables_the_code_declares(
    postgres_server: Any, table_drift: Drift, tables: AppTables
) -> None:
    store = Store(postgres_server.new_database())
    try:
        store.open_app_tables(tables)
        store.open_app_tables(tables)  # again: nothing to do
        assert (_version(store, tables) or "").startswith(f"{tables.app}_")  # under the app's own revisions
        assert table_drift(store, tables.metadata) == []
    finally:
        store.close()


@pytest.mark.parametrize("tables", APPS)
def test_tables_made_without_migrations_are_adopted_on_postgres(
    postgres_server: Any, table_drift: Drift, tables: AppTables
) -> None:
    url = postgres_server.new_database()
    engine = sa.create_engine(url)
    tables.metadata.create_all(engine)  # as an earlier version made them (`create_all`, no version table)
    first = sorted(tables.metadata.tables)[0]
    engine.dispose()
    store = Store(url)
    try:
        store.open_app_tables(tables)
        assert _version(store, tables) is not None
        assert table_drift(store, tables.metadata) == []
        with store.engine.connect() as conn:  # adopted, not made again: still there, still empty
            assert conn.execute(sa.text(f"SELECT count(*) FROM {first}")).scalar() == 0
    finally:
        store.close()


def test_advisors_sessions_are_written_with_the_stores_upsert_on_postgres(postgres_server: Any) -> None:
    store = Store(postgres_server.new_database())
    try:
        store.open_app_tables(ADVISOR_TABLES)
        book = SessionBook(store.engine)
        session = book.load("web:alice")
        session.memory.lang = "en"
        book.save("web:alice", session)
        session.memory.lang = "zh-CN"
        book.save("web:alice", session)  # the same row again: updated, not a second row
        assert book.load("web:alice").memory.lang == "zh-CN"
        assert book.load("web:bob").session_id != session.session_id
        with store.engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM advisor_sessions")).scalar() == 1
    finally:
        store.close()
