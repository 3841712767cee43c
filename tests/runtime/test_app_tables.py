"""An app's own tables (`AppTables`): created and migrated by Alembic with the store, apart from the store's and
other apps' revisions, and written with the store's upsert and write transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from pydantic import BaseModel

from consulta.runtime import AppTables, StateBook, Store, state_table, upsert, writing

MIGRATIONS = Path(__file__).with_name("app_tables_migrations")

notes_metadata = sa.MetaData()
notes = sa.Table(
    "notes_notes",
    notes_metadata,
    sa.Column("principal", sa.String(40), primary_key=True),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("pinned", sa.Integer(), nullable=False, server_default="0"),
)
NOTES = AppTables(app="notes", metadata=notes_metadata, migrations=MIGRATIONS)


def test_an_apps_tables_are_created_at_their_newest_revision_apart_from_the_stores(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    store.open_app_tables(NOTES)
    store.open_app_tables(NOTES)  # once per process: nothing to do
    with store.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version_notes")).scalar() == "notes_0002"
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() is not None  # the store's
        context = MigrationContext.configure(
            conn, opts={"include_name": lambda name, kind, _: kind != "table" or name in notes_metadata.tables}
        )
        assert compare_metadata(context, notes_metadata) == []  # the revisions made what the code declares
    store.close()


def test_tables_an_earlier_version_made_are_adopted_and_migrated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/consulta.db"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # as an earlier version made them, before migrations
        conn.exec_driver_sql("CREATE TABLE notes_notes (principal VARCHAR(40) PRIMARY KEY, text TEXT NOT NULL)")
        conn.exec_driver_sql("INSERT INTO notes_notes VALUES ('web:alice', 'kept')")
    engine.dispose()
    store = Store(url)
    store.open_app_tables(NOTES)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(notes.c.text, notes.c.pinned)).all() == [("kept", 0)]
    store.close()


def test_upsert_and_the_write_transaction(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    store.open_app_tables(NOTES)
    for text in ("first", "second"):
        with writing(store.engine) as conn:
            conn.execute(upsert(conn, notes, key=["principal"], set_=["text"]).values(principal="p", text=text))
    try:
        with writing(store.engine) as conn:
            conn.execute(sa.update(notes).values(text="lost"))
            raise RuntimeError("a failure mid-transaction")
    except RuntimeError:
        pass
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(notes.c.text)).scalars().all() == ["second"]
    store.close()


class Counter(BaseModel):
    count: int = 0
    label: str = "new"


counters_metadata = sa.MetaData()
counters = state_table("counters_state", counters_metadata, sa.Column("label", sa.String(20), nullable=False))


def test_a_state_book_keeps_each_principals_state_whole(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    counters_metadata.create_all(store.engine)  # a test table; an app's come with its migrations
    book = StateBook(store.engine, counters, Counter, columns=lambda c: {"label": c.label})
    assert book.load("web:alice") == Counter()  # none yet: a new one, not stored
    book.save("web:alice", Counter(count=2, label="two"))
    book.save("web:alice", Counter(count=3, label="three"))  # the second save replaces the first
    book.save("web:bob", Counter(count=1))
    assert book.load("web:alice") == Counter(count=3, label="three")
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(counters.c.label).where(counters.c.principal == "web:alice")).scalar() == "three"
    assert book.clear("web:alice") == Counter()
    assert book.load("web:alice") == Counter() and book.load("web:bob").count == 1
    with store.engine.begin() as conn:  # a state an earlier version wrote that this one cannot read
        conn.execute(sa.update(counters).where(counters.c.principal == "web:bob").values(state='{"count": "many"}'))
    assert book.load("web:bob") == Counter()
    store.close()


def test_a_state_book_finds_what_is_stored_and_writes_within_a_callers_transaction(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    counters_metadata.create_all(store.engine)
    book = StateBook(store.engine, counters, Counter, columns=lambda c: {"label": c.label})
    assert book.find("web:alice") is None  # nothing stored: None, not a new state
    with pytest.raises(RuntimeError), writing(store.engine) as conn:
        book.save("web:alice", Counter(count=1), conn=conn)
        assert book.find("web:alice", conn=conn, for_update=True) == Counter(count=1)  # seen within it
        raise RuntimeError("the caller's other write failed")
    assert book.find("web:alice") is None  # rolled back with the caller's transaction
    with writing(store.engine) as conn:
        book.save("web:alice", Counter(count=2), conn=conn)
    assert book.find("web:alice") == Counter(count=2) == book.load("web:alice")
    with store.engine.begin() as conn:
        conn.execute(sa.update(counters).values(state="{"))
    assert book.find("web:alice") is None and book.load("web:alice") == Counter()
    store.close()
