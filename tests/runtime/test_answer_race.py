"""Two processes answering the same asks at the same moment: for every ask exactly one wins, the other is told
it is closed (ConflictError), and the ask keeps the winner's answer."""

from __future__ import annotations

import pytest

from consulta.runtime import AskStatus, RunStatus, Store

from ._processes import READY, run_together

ASKS = 20

# After the go, both processes close ask i at the same instant: the same wall-clock tick (the next half second,
# then 50 ms apart), so every ask is contended, not only the first.
_ANSWER = f"""
import math, sys, time
from consulta.runtime import AskStatus, ConflictError, Store
store = Store(sys.argv[1])
ids = sys.argv[2:]
{READY}
start = math.ceil(time.time() * 2) / 2 + 0.5
for i, ask_id in enumerate(ids):
    time.sleep(max(0.0, start + i * 0.05 - time.time()))
    try:
        store.close_ask(ask_id, AskStatus.answered, answer=[store.owner], outcome={{"by": store.owner}}, answered_by=store.owner)
        print(ask_id, "won", store.owner)
    except ConflictError:
        print(ask_id, "lost", store.owner)
store.close()
"""


@pytest.mark.subprocess  # two Python processes on one store
def test_two_processes_answering_the_same_asks_at_once_never_both_win(store_url: str) -> None:
    store = Store(store_url)
    try:
        run = store.create_run(app="toy", prompt="thaw K562", model="m", lang="en")
        asks = [store.create_ask(run_id=run.id, kind="question", payload={}) for _ in range(ASKS)]
        store.set_run_status(run.id, RunStatus.waiting)
        outputs = run_together(_ANSWER, store_url, *(a.id for a in asks), n=2)
        results = [line.split() for out in outputs for line in out.splitlines()]
        assert len(results) == 2 * ASKS
        for ask in asks:
            mine = [(verdict, owner) for ask_id, verdict, owner in results if ask_id == ask.id]
            winners = [owner for verdict, owner in mine if verdict == "won"]
            assert len(mine) == 2 and len(winners) == 1, mine
            closed = store.get_ask(ask.id)
            assert (closed.status, closed.answered_by, closed.answer) == (AskStatus.answered, winners[0], [winners[0]])
    finally:
        store.close()
