"""Fixtures of the apps' upgrade-in-place tests: a data dir's database as main at 0cf5dd2 left it, and the drift
between an app's tables and what its code declares."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData

from consulta.runtime import Store

EARLIER = Path(__file__).with_name("earlier_data") / "main-0cf5dd2.sql"


@pytest.fixture
def store_from_main(tmp_path: Path) -> Iterator[Store]:
    """A store opened by this version on the database main at 0cf5dd2 made (`earlier_data/main-0cf5dd2.sql`)."""
    path = tmp_path / "main" / "consulta.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as conn:
        conn.executescript(EARLIER.read_text(encoding="utf-8"))
    store = Store(f"sqlite:///{path}")
    yield store
    store.close()


def _drift(store: Store, metadata: MetaData) -> list[Any]:
    """What differs between `metadata`'s tables in the store and as declared (nothing, once they are migrated)."""
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_name": lambda name, kind, _: kind != "table" or name in metadata.tables}
        )
        return list(compare_metadata(context, metadata))


@pytest.fixture
def table_drift() -> Callable[[Store, MetaData], list[Any]]:
    """`table_drift(store, metadata)`: what differs between an app's tables in the store and as its code declares."""
    return _drift
