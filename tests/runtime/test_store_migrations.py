"""Opening a store brings its schema up to date: a new store, a store made before migrations, the two hand-written
earlier layouts, and two processes opening one new store at once."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

import consulta.apps
from consulta.runtime import AskStatus, ConfigError, Store
from consulta.runtime._store._migrations import SCRIPTS, _alembic_head, head
from consulta.runtime._store._schema import metadata

from ._processes import READY, run_together

EARLIER = Path(__file__).with_name("earlier_stores")
CONVERSATION = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "取一管K562"}]}]


def schema_drift(store: Store) -> list:
    """What differs between the store's tables and `_schema` (nothing, when the migrations made the schema)."""
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert context.get_current_revision() == head()
        return compare_metadata(context, metadata)


def test_the_newest_revision_read_without_alembic_is_alembics_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    assert head() == ScriptDirectory.from_config(config).get_current_head() is not None
    apps = sorted(Path(consulta.apps.__file__).parent.glob("*/migrations"))
    assert apps  # the apps' own chains (quiz, advisor)
    for folder in apps:
        assert head(folder) == _alembic_head(folder) is not None, folder


@pytest.mark.both_backends
def test_a_new_store_is_made_at_the_newest_revision(store_url):
    store = Store(store_url)
    try:
        assert schema_drift(store) == []
    finally:
        store.close()
    Store(store_url).close()  # opening it again changes nothing


LAYOUTS = {
    "first": ["1-first"],
    "messages split": ["2-messages-split"],
    "before migrations": ["3-before-migrations"],
    "interim": ["3-before-migrations", "4-interim"],
}


def _earlier_store(path: Path, layout: str) -> None:
    """A store as an earlier version left it: two runs with interleaved events, a checkpoint, an ask."""
    with sqlite3.connect(path) as db:
        db.executescript("".join((EARLIER / f"{name}.sql").read_text() for name in ["common", *LAYOUTS[layout]]))
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        for run_id in ("run_a", "run_b"):
            row = {
                "id": run_id,
                "app": "toy",
                "thread_id": run_id,
                "parent_run_id": None,
                "status": "waiting",
                "prompt": "thaw K562",
                "model": "scripted",
                "lang": "zh",
                "options": '{"data": "/x"}',
                "trace_id": "t" * 32,
                "output": None,
                "error": None,
                "owner": None,
                "principal": "local",
                "heartbeat_at": None,
                "cancel_requested": 0,
                "created_at": "2026-01-01T00:00:00+00:00",
                "updated_at": "2026-01-01T00:00:00+00:00",
            }
            row = {k: v for k, v in row.items() if k in columns}
            db.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        interleaved = [
            ("run_a", "run_started"),
            ("run_b", "run_started"),
            ("run_a", "step_started"),
            ("run_a", "ask_opened"),
            ("run_b", "run_ended"),
        ]
        for run_id, type_ in interleaved:
            db.execute("INSERT INTO events (run_id, type, data, ts) VALUES (?, ?, '{}', 't')", (run_id, type_))
        if "messages" in {row[1] for row in db.execute("PRAGMA table_info(checkpoints)")}:
            db.execute(
                "INSERT INTO checkpoints VALUES ('run_a', 3, ?, 't')", (json.dumps(CONVERSATION, ensure_ascii=False),)
            )
        else:
            db.execute(
                "INSERT INTO messages VALUES ('run_a', 0, ?)", (json.dumps(CONVERSATION[0], ensure_ascii=False),)
            )
            db.execute("INSERT INTO checkpoints VALUES ('run_a', 3, 1, 't')")
        db.execute(
            "INSERT INTO asks (id, run_id, kind, payload, status, trace_id, created_at) "
            "VALUES ('ask_a', 'run_a', 'question', '{}', 'pending', 't', 't')"
        )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_store_made_by_an_earlier_version_is_upgraded_on_open(tmp_path, layout):
    """The first layout (checkpoints one JSON array per run, no `principal`), the second (messages a row, still no
    `principal`), the last before migrations, and the interim one (`agent`, and `seq` 0 for the events stored before
    it): each reads back the same, gains what came since, and works."""
    _earlier_store(tmp_path / "old.db", layout)
    store = Store(f"sqlite:///{tmp_path}/old.db")
    try:
        assert schema_drift(store) == []
        run = store.get_run("run_a")
        assert (run.agent, run.lang, run.options, run.status) == ("", "zh", {"data": "/x"}, "waiting")
        step, blob = store.load_checkpoint("run_a")
        assert step == 3 and json.loads(blob) == CONVERSATION
        assert [(e.seq, e.type) for e in store.list_events("run_a")] == [
            (1, "run_started"),
            (2, "step_started"),
            (3, "ask_opened"),
        ]
        assert [(e.seq, e.type) for e in store.list_events("run_b")] == [(1, "run_started"), (2, "run_ended")]
        assert store.get_ask("ask_a").status == AskStatus.pending
        # … and it works as a store now.
        assert store.append_event("run_a", "ask_closed", {}).seq == 4
        store.close_ask("ask_a", AskStatus.answered, answer=["K562"])
        store.save_checkpoint("run_a", 4, json.dumps([*CONVERSATION, *CONVERSATION]))
        assert json.loads(store.load_checkpoint("run_a")[1]) == [*CONVERSATION, *CONVERSATION]
        assert store.create_run(app="toy", prompt="p", model="m", lang="en", agent="assistant").agent == "assistant"
        consultation = store.record_consultation(
            expert_id="e", status="done", request={}, started_at="t", duration_ms=1, attempts=1
        )
        assert consultation.id == "consult_0001"
    finally:
        store.close()
    again = Store(f"sqlite:///{tmp_path}/old.db")
    try:
        assert again.load_checkpoint("run_a")[0] == 4
        assert again.last_event_seq("run_a") == 4
    finally:
        again.close()


_OPEN = f"""
import sys
from consulta.runtime import Store
{READY}
store = Store(sys.argv[1])
store.create_run(app="toy", prompt="p", model="m", lang="en")
store.close()
"""


@pytest.mark.subprocess  # two Python processes on one store
@pytest.mark.both_backends
def test_two_processes_opening_one_new_store_at_once_both_open_it(store_url):
    run_together(_OPEN, store_url)
    store = Store(store_url)
    try:
        assert schema_drift(store) == []
        assert len(store.list_runs()) == 2
    finally:
        store.close()


def test_a_database_other_than_sqlite_or_postgresql_is_refused_clearly():
    with pytest.raises(ConfigError) as info:
        Store("mysql+pymysql://someone:secret@db/consulta")
    assert "SQLite or PostgreSQL" in str(info.value) and "CONSULTA_DATABASE_URL" in str(info.value)
    assert "secret" not in str(info.value)
