"""Durable steps on the store: done once, recorded, replayed on resume (not done again)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from consulta.runtime import Store


def _run_id(store: Store) -> str:
    return store.create_run(app="t", prompt="p", model="test", lang="en", options={}).id


def test_a_step_is_done_once_and_replayed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/consulta.db"
    store = Store(url)
    run_id = _run_id(store)
    calls: list[int] = []

    async def work() -> dict[str, object]:
        calls.append(1)
        return {"path": "paper.pdf", "pages": 3}

    assert asyncio.run(store.durable_step(run_id, "compile", work)) == {"path": "paper.pdf", "pages": 3}
    store.close()
    resumed = Store(url)  # another process resuming the run
    assert asyncio.run(resumed.durable_step(run_id, "compile", work)) == {"path": "paper.pdf", "pages": 3}
    assert calls == [1]
    assert resumed.step_result(run_id, "other") is Store.NOT_DONE
    resumed.close()


def test_a_failed_step_records_nothing_and_the_first_record_stands(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    run_id = _run_id(store)

    def fails() -> int:
        raise RuntimeError("the model did not answer")

    with pytest.raises(RuntimeError):
        asyncio.run(store.durable_step(run_id, "ask", fails))
    assert store.step_result(run_id, "ask") is Store.NOT_DONE
    assert store.record_step(run_id, "ask", 1) == 1
    assert store.record_step(run_id, "ask", 2) == 1  # a second writer finds the first
    assert asyncio.run(store.durable_step(run_id, "ask", lambda: 3)) == 1
    store.close()


def test_a_runs_steps_by_one_handle_and_listed_by_prefix(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    steps = store.run_steps(_run_id(store))
    other = store.run_steps(_run_id(store))
    assert steps.result("answer:a") is steps.NOT_DONE
    assert steps.record("answer:b", {"n": 1}) == {"n": 1} and steps.record("answer:b", {"n": 2}) == {"n": 1}
    steps.record("answer:a", 2)
    steps.record("decision:x", "stop")
    other.record("answer:z", 0)  # another run's steps are its own
    assert asyncio.run(steps.step("answer:c_%", lambda: 3)) == 3
    assert sorted(steps.recorded("answer:")) == ["answer:a", "answer:b", "answer:c_%"]
    assert steps.recorded("answer:c_") == {"answer:c_%": 3}  # a prefix is matched as written (no wildcards)
    assert steps.recorded() == {**steps.recorded("answer:"), "decision:x": "stop"}
    store.close()
