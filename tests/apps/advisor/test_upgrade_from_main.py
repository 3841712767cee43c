"""A data dir made by main at 0cf5dd2 (advisor's tables made by `create_all`, never migrated) upgrades in place: its
tables come under advisor's migrations and what a person left there reads the same."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlalchemy as sa

from consulta.apps.advisor._app import APP
from consulta.apps.advisor._catalog import page_context_for
from consulta.apps.advisor._sessions import SessionBook
from consulta.runtime import Store

EARLIER = Path(__file__).parents[1] / "earlier_data" / "main-0cf5dd2.sql"


def test_a_data_dir_from_main_upgrades_in_place(tmp_path: Path) -> None:
    path = tmp_path / "consulta.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(EARLIER.read_text(encoding="utf-8"))
    store = Store(f"sqlite:///{path}")
    assert APP.tables is not None
    store.open_app_tables(APP.tables)
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version_advisor")).scalar() == "advisor_0001"
    session = SessionBook(store.engine).load("web:alice")
    assert session.session_id == "sess_main0cf5dd2"
    assert [m.content for m in session.conversation_history][0] == "我想找北京大学计算机的导师"
    context = page_context_for(store.engine, "web:alice")
    assert context is not None and context.current_page == "ranking"
    store.close()


def test_a_new_data_dir_gets_the_tables_the_code_declares(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    assert APP.tables is not None
    store.open_app_tables(APP.tables)
    metadata = APP.tables.metadata
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_name": lambda name, kind, _: kind != "table" or name in metadata.tables}
        )
        assert compare_metadata(context, metadata) == []
    store.close()
