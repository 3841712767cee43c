"""Several Consulta processes on one store (SQLite file, or PostgreSQL: the way to outgrow one machine)."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from consulta.runtime import AskStatus, RunStatus, Store
from consulta.runtime._store import runs

from ._processes import READY, run_together

# three Python processes: seconds each
pytestmark = [pytest.mark.both_backends, pytest.mark.slow, pytest.mark.subprocess]

_CLAIM = f"""
import sys
from consulta.runtime import AskStatus, Store
store = Store(sys.argv[1])
run = store.get_run(sys.argv[2])  # made by another process
ask = store.get_ask(sys.argv[3])
{READY}
won = store.claim_run(run.id, stale_after=5)
if won:
    store.close_ask(ask.id, AskStatus.answered, answer=["K562"], answered_by=store.owner)
print(won, store.owner, run.prompt, ask.status.value)
store.close()
"""


def test_processes_see_each_others_runs_and_asks_and_one_takes_over_an_abandoned_run(store_url):
    store = Store(store_url)
    try:
        run = store.create_run(app="toy", prompt="thaw K562", model="m", lang="en")
        ask = store.create_ask(run_id=run.id, kind="question", payload={})
        store.set_run_status(run.id, RunStatus.waiting)
        with store.engine.begin() as conn:  # its process is gone: another host's, silent for long
            conn.execute(update(runs).where(runs.c.id == run.id).values(owner="elsewhere:1:x", heartbeat_at=0))
        lines = [out.split() for out in run_together(_CLAIM, store_url, run.id, ask.id, n=3)]
        assert all(line[2:] == ["thaw", "K562", "pending"] for line in lines)
        winners = [line[1] for line in lines if line[0] == "True"]
        assert len(winners) == 1 and sum(line[0] == "False" for line in lines) == 2
        assert store.get_run(run.id).owner == winners[0]
        closed = store.get_ask(ask.id)
        assert (closed.status, closed.answered_by) == (AskStatus.answered, winners[0])
    finally:
        store.close()
