"""A data dir made by main at 0cf5dd2 (quiz's tables made by `create_all`, never migrated) upgrades in place: its
tables come under quiz's migrations and are used as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import MetaData

from consulta.apps.quiz._db import QUIZ_TABLES
from consulta.apps.quiz._profiles import Profile, load_profile, save_profile
from consulta.runtime import Store

Drift = Callable[[Store, MetaData], list[Any]]


def test_a_data_dir_from_main_upgrades_in_place(store_from_main: Store, table_drift: Drift) -> None:
    store = store_from_main
    store.open_app_tables(QUIZ_TABLES)
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version_quiz")).scalar() == "quiz_0001"
    assert table_drift(store, QUIZ_TABLES.metadata) == []
    user_id = "3f2b9c1e-8a4d-4e6f-9b7a-1c2d3e4f5a6b"
    profile = Profile(
        user_id=user_id, self_level="beginner", years_experience=1, job_role="analyst", duty="reports", interests=[]
    )
    save_profile(store.engine, profile)
    save_profile(store.engine, profile.model_copy(update={"years_experience": 2}))  # the store's upsert
    stored = load_profile(store.engine, user_id)
    assert stored is not None and stored.years_experience == 2


def test_a_new_data_dir_gets_the_tables_the_code_declares(tmp_path: Path, table_drift: Drift) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    store.open_app_tables(QUIZ_TABLES)
    assert table_drift(store, QUIZ_TABLES.metadata) == []
    store.close()
