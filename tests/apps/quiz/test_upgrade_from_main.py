"""A data dir made by main at 0cf5dd2 (quiz's tables made by `create_all`, never migrated) upgrades in place: its
tables come under quiz's migrations and are used as before; the profiles it kept move to the profile book
(`quiz_people`, quiz_0002) whole, as does a data dir at quiz_0001 (the main that first migrated quiz's tables)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import MetaData

from consulta.apps.quiz._db import QUIZ_TABLES
from consulta.apps.quiz._profiles import Profile, load_profile, save_profile
from consulta.runtime import AppTables, Store, migrate_app_tables

Drift = Callable[[Store, MetaData], list[Any]]


ALICE = "3F2B9C1E-8A4D-4E6F-9B7A-1C2D3E4F5A6B".lower()
BOB = "0b8f3a6e-5c1d-4f2a-9e7b-6d5c4b3a2f10"
PROFILE_ROWS = f"""
INSERT INTO quiz_profiles VALUES ('{ALICE}', 'advanced', 7, 'DBA', '备份与恢复', '["SQL", "备份"]', 82.5, 'zh-CN', 't1');
INSERT INTO quiz_profiles VALUES ('{BOB}', 'beginner', 0, 'intern', 'reports', 'not json', 0, 'en', 't2');
"""


def _profiles_moved(store: Store) -> None:
    """The two profiles PROFILE_ROWS kept read back whole from the book; `quiz_profiles` is gone."""
    alice, bob = load_profile(store.engine, ALICE.upper()), load_profile(store.engine, BOB)
    assert alice == Profile(
        user_id=ALICE,
        self_level="advanced",
        years_experience=7,
        job_role="DBA",
        duty="备份与恢复",
        interests=["SQL", "备份"],
        previous_score=82.5,
        lang="zh-CN",
    )
    assert bob is not None and (bob.job_role, bob.interests) == ("intern", [])  # damaged interests: none
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version_quiz")).scalar() == "quiz_0002"
        assert "quiz_profiles" not in sa.inspect(conn).get_table_names()


def test_a_data_dir_from_main_upgrades_in_place(store_from_main: Store, table_drift: Drift) -> None:
    store = store_from_main
    with store.engine.begin() as conn:
        for statement in PROFILE_ROWS.strip().splitlines():
            conn.execute(sa.text(statement))
    store.open_app_tables(QUIZ_TABLES)
    _profiles_moved(store)
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


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_data_dir_at_quiz_0001_moves_its_profiles_to_the_book(
    tmp_path: Path, table_drift: Drift, backend: str, request: pytest.FixtureRequest
) -> None:
    first = tmp_path / "migrations"
    first.mkdir()
    shutil.copy(Path(QUIZ_TABLES.migrations) / "quiz_0001_baseline.py", first)
    if backend == "postgres":
        url = request.getfixturevalue("postgres_server").new_database()
    else:
        url = f"sqlite:///{tmp_path}/consulta.db"
    earlier = sa.create_engine(url)  # an engine of its own: quiz's tables are migrated once per engine
    migrate_app_tables(earlier, AppTables(app="quiz", metadata=MetaData(), migrations=first))
    with earlier.begin() as conn:
        for statement in PROFILE_ROWS.strip().splitlines():
            conn.execute(sa.text(statement))
    earlier.dispose()
    store = Store(url)
    store.open_app_tables(QUIZ_TABLES)
    _profiles_moved(store)
    assert table_drift(store, QUIZ_TABLES.metadata) == []
    store.close()
