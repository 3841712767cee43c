"""Tool 5's retry queue is durable: with the database taken away (read-only, renamed, locked by another connection)
saves answer `success=False, queued_for_retry=True` and are kept in the journal; once the database is back, a restart
drains the journal (or the background drainer does, with backoff), and every question is in the bank exactly once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import Engine

from consulta.apps.quiz import QuizTools, RetryQueue, ensure_bank
from consulta.apps.quiz._db import questions

ROUND = "quiz_session_7_3_2025-11-06T10:30:00Z"


def item(n: int) -> dict[str, Any]:
    return {
        "item_type": "multiple_choice",
        "stem": f"Which port does service {n} listen on?",
        "choices": [f"{n}0", f"{n}1", f"{n}2", f"{n}3"],
        "correct_key": f"{n}1",
        "difficulty": 4,
        "categories": ["technical"],
        "round_id": ROUND,
        "validation_score": 0.9,
    }


def engine_for(db: Path, **connect: Any) -> Engine:
    return create_engine(f"sqlite:///{db}", connect_args=connect)


def generated(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        return sorted(conn.execute(select(questions.c.stem).where(questions.c.source == "generated")).scalars())


def saves(tools: QuizTools, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    async def all_of() -> list[dict[str, Any]]:
        results = [await tools.save_generated_question(**i) for i in items]
        await tools.queue.stop()  # this test restarts by hand; no drainer outlives its loop
        return results

    return asyncio.run(all_of())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "quiz.db"
    engine = engine_for(path)
    ensure_bank(engine)
    engine.dispose()
    return path


def restart_and_drain(db: Path, journal: Path) -> tuple[QuizTools, int]:
    """A new process's tools over the database that is back: the journal is drained at start-up."""
    tools = QuizTools(engine_for(db), queue=RetryQueue(journal))
    left = asyncio.run(tools.drain_retry_queue())
    return tools, left


def read_only(db: Path) -> Engine:
    """The database as a read-only mount gives it (SQLite's `mode=ro`: chmod does not stop root, who runs CI here)."""
    return create_engine(f"sqlite:///file:{db}?mode=ro&uri=true")


def test_a_read_only_database_queues_saves_and_a_restart_saves_each_once(db: Path, tmp_path: Path) -> None:
    journal = tmp_path / "data" / "save_retry_queue.jsonl"
    away = QuizTools(read_only(db), queue=RetryQueue(journal))
    results = saves(away, [item(1), item(2), item(1)])  # the same question twice while away
    away.engine.dispose()
    assert [r["success"] for r in results] == [False, False, False]
    assert all(
        r["queued_for_retry"] is True and r["question_id"] is None and "readonly" in r["error"].lower() for r in results
    )
    assert len(RetryQueue(journal)) == 2
    assert generated(engine_for(db)) == []

    tools, left = restart_and_drain(db, journal)
    assert left == 0 and len(tools.queue) == 0
    assert generated(tools.engine) == [item(1)["stem"], item(2)["stem"]]
    assert journal.read_bytes() == b""  # compacted once nothing is pending
    _, left = restart_and_drain(db, journal)  # a second restart has nothing to do and adds nothing
    assert left == 0 and generated(tools.engine) == [item(1)["stem"], item(2)["stem"]]


def test_a_renamed_database_file_queues_saves_until_it_is_back(db: Path, tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    tools = QuizTools(engine_for(db), queue=RetryQueue(journal))
    tools.engine.dispose()
    moved = db.with_name("quiz.db.moved")
    db.rename(moved)
    try:
        results = saves(tools, [item(3), item(4)])  # a fresh connection opens an empty file without quiz's tables
        tools.engine.dispose()
    finally:
        db.unlink(missing_ok=True)
        moved.rename(db)
    assert [r["queued_for_retry"] for r in results] == [True, True]
    tools, left = restart_and_drain(db, journal)
    assert left == 0 and generated(tools.engine) == [item(3)["stem"], item(4)["stem"]]


def test_a_database_locked_by_another_connection_queues_the_save_within_the_time_bound(
    db: Path, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        tools = QuizTools(
            engine_for(db, timeout=0.3),
            queue=RetryQueue(journal),
            timeouts={"save_generated_question": 2.0, **_others()},
        )
        started = time.monotonic()
        (result,) = saves(tools, [item(5)])
        assert time.monotonic() - started < 2.5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result["success"] is False and result["queued_for_retry"] is True
    tools, left = restart_and_drain(db, journal)
    assert left == 0 and generated(tools.engine) == [item(5)["stem"]]


def _others() -> dict[str, float]:
    from consulta.apps.quiz import TIMEOUTS

    return {k: v for k, v in TIMEOUTS.items() if k != "save_generated_question"}


def test_the_background_drainer_saves_with_backoff_once_the_database_is_back(db: Path, tmp_path: Path) -> None:
    queue = RetryQueue(tmp_path / "journal.jsonl", initial_backoff=0.05, max_backoff=0.2)
    moved = db.with_name("quiz.db.moved")

    async def scenario() -> list[str]:
        tools = QuizTools(engine_for(db), queue=queue)
        tools.engine.dispose()
        db.rename(moved)
        result = await tools.save_generated_question(**item(6))
        assert result["queued_for_retry"] is True
        await asyncio.sleep(0.3)  # the drainer keeps failing meanwhile, backing off
        assert len(queue) == 1
        moved.rename(db)  # back (replacing the empty file a failed connection left at its place)
        tools.engine.dispose()  # connections to that empty file are let go; the next one reaches the database
        for _ in range(100):  # bounded: 5 s
            if len(queue) == 0:
                break
            await asyncio.sleep(0.05)
        await queue.stop()
        return generated(tools.engine)

    assert asyncio.run(scenario()) == [item(6)["stem"]]
    assert len(queue) == 0


def test_a_torn_last_line_is_skipped_and_a_saved_mark_closes_an_item(tmp_path: Path) -> None:
    queue = RetryQueue(tmp_path / "j.jsonl")
    queue.put("k1", {"stem": "one"})
    queue.put("k2", {"stem": "two"})
    queue.mark_saved("k1", "q1")
    with open(queue.path, "ab") as handle:
        handle.write(b'{"op": "queued", "key": "k3", "item": {"st')  # a crash mid-write
    assert list(queue.pending()) == ["k2"]
    assert RetryQueue(tmp_path / "missing.jsonl").pending() == {}
    queue.put("k4", {"stem": "four"})  # after the crash: a line of its own, not glued onto the torn one
    assert list(queue.pending()) == ["k2", "k4"]


def test_the_journal_lines_are_sorted_json_one_per_event(tmp_path: Path) -> None:
    queue = RetryQueue(tmp_path / "q" / "j.jsonl")
    queue.put("k1", {"stem": "一", "a": 1})
    at = json.loads(queue.path.read_bytes())["at"]
    assert queue.path.read_bytes() == (
        '{"at": "' + at + '", "item": {"a": 1, "stem": "一"}, "key": "k1", "op": "queued"}\n'
    ).encode("utf-8")
    assert queue.path.stat().st_mode & 0o777 == 0o600


def test_drain_until_empty_backs_off_exponentially(tmp_path: Path) -> None:
    queue = RetryQueue(tmp_path / "j.jsonl", initial_backoff=1.0, max_backoff=4.0)
    queue.put("k", {"stem": "x"})
    slept: list[float] = []
    tries = iter([None, None, None, None, "q"])

    async def save(_: dict[str, Any]) -> str | None:
        return next(tries)

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    asyncio.run(queue.drain_until_empty(save, sleep=sleep))
    assert slept == [1.0, 2.0, 4.0, 4.0] and len(queue) == 0


def test_count_of_rows_is_unchanged_by_draining_an_item_saved_meanwhile(db: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    tools = QuizTools(engine_for(db), queue=RetryQueue(journal))
    saved = asyncio.run(tools.save_generated_question(**item(8)))
    row = {
        **{k: v for k, v in item(8).items()},
        "topic": "",
        "lang": "en",
        "id": "00000000-0000-4000-8000-000000000000",
    }
    from consulta.apps.quiz._tools import _check_save  # the row a queued save keeps

    checked = _check_save(
        row["item_type"], row["stem"], row["choices"], row["correct_key"], None, 4, ["technical"], ROUND, 0.9, None
    )
    tools.queue.put(
        saved["question_id"],
        {
            **checked,
            "topic": "",
            "lang": "en",
            "id": row["id"],
            "content_hash": _hash(tools, saved),
            "created_at": "now",
        },
    )
    assert asyncio.run(tools.drain_retry_queue()) == 0
    with tools.engine.connect() as conn:
        assert (
            conn.execute(
                select(func.count()).select_from(questions).where(questions.c.source == "generated")
            ).scalar_one()
            == 1
        )


def _hash(tools: QuizTools, saved: dict[str, Any]) -> str:
    with tools.engine.connect() as conn:
        return conn.execute(select(questions.c.content_hash).where(questions.c.id == saved["question_id"])).scalar_one()


def test_a_process_starting_outside_an_event_loop_drains_the_journal_in_the_background(
    db: Path, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    away = QuizTools(read_only(db), queue=RetryQueue(journal))
    saves(away, [item(9)])
    away.engine.dispose()
    tools = QuizTools(engine_for(db), queue=RetryQueue(journal))
    tools.start_retry_drainer()  # as the app does when it builds its tools at start-up
    for _ in range(100):  # bounded: 5 s
        if not len(tools.queue):
            break
        time.sleep(0.05)
    assert len(tools.queue) == 0 and generated(tools.engine) == [item(9)["stem"]]
