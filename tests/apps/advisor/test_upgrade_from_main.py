"""A data dir made by main at 0cf5dd2 (advisor's tables made by `create_all`, never migrated) upgrades in place: its
tables come under advisor's migrations and what a person left there reads the same."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import MetaData

from consulta.apps.advisor._app import APP
from consulta.apps.advisor._catalog import ADVISOR_TABLES, page_context_for
from consulta.apps.advisor._sessions import SessionBook
from consulta.runtime import Store

Drift = Callable[[Store, MetaData], list[Any]]


def test_a_data_dir_from_main_upgrades_in_place(store_from_main: Store, table_drift: Drift) -> None:
    store = store_from_main
    assert APP.tables is ADVISOR_TABLES
    store.open_app_tables(ADVISOR_TABLES)
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version_advisor")).scalar() == "advisor_0001"
    assert table_drift(store, ADVISOR_TABLES.metadata) == []
    session = SessionBook(store.engine).load("web:alice")
    assert session.session_id == "sess_main0cf5dd2"
    assert [m.content for m in session.conversation_history][0] == "我想找北京大学计算机的导师"
    context = page_context_for(store.engine, "web:alice")
    assert context is not None and context.current_page == "ranking"


def test_a_new_data_dir_gets_the_tables_the_code_declares(tmp_path: Path, table_drift: Drift) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    store.open_app_tables(ADVISOR_TABLES)
    assert table_drift(store, ADVISOR_TABLES.metadata) == []
    store.close()
