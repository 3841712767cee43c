"""This process's side of sharing runs with other processes on one store.

One loop per process, running while it holds runs or waits on asks:
- it heartbeats the runs this process holds (other processes leave a run with a fresh heartbeat alone, and take
  one over whose owner is gone);
- it honours a stop requested elsewhere (`consulta stop` in another terminal) for a run held here;
- it notices asks closed by other processes that runs here wait on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection

from ._store import Store

__all__ = ["Leases"]

logger = logging.getLogger(__name__)


class Leases:
    """Hold runs for this process (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        *,
        poll_interval: float,
        heartbeat_interval: float,
        waiting: Callable[[], Collection[str]],
        on_closed_elsewhere: Callable[[str], None],
    ) -> None:
        self.store = store
        self.poll_interval = poll_interval
        self.heartbeat_interval = heartbeat_interval
        self._waiting = waiting
        self._on_closed_elsewhere = on_closed_elsewhere
        self._held: dict[str, Callable[[], None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed_seq = 0

    def attach(self) -> None:
        """A new event loop: the loop task starts again on it, from the asks closed so far."""
        self._task = None
        self._closed_seq = self.store.ask_closed_high_water()

    def hold(self, run_id: str, *, on_stop: Callable[[], None]) -> None:
        """Keep the run alive on record while this process carries it; `on_stop` when a stop is requested elsewhere."""
        self._held[run_id] = on_stop
        self.ensure()

    def release(self, run_id: str) -> None:
        self._held.pop(run_id, None)

    def ensure(self) -> None:
        """Start the loop if it is not running (call on the event loop)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        since_heartbeat = 0.0
        while self._held or self._waiting():
            await asyncio.sleep(self.poll_interval)
            try:
                self._poll()
                since_heartbeat += self.poll_interval
                if since_heartbeat >= self.heartbeat_interval:
                    since_heartbeat = 0.0
                    self.store.heartbeat()
            except Exception:  # a busy or broken store: say so and try again at the next poll
                logger.exception("Watching this process's runs on the store failed")

    def _poll(self) -> None:
        waiting = self._waiting()
        if waiting:
            self._closed_seq, closed = self.store.asks_closed_since(self._closed_seq)
            for ask_id, _status in closed:
                if ask_id in waiting:
                    self._on_closed_elsewhere(ask_id)
        if self._held:
            for run_id in self.store.cancel_requested() & set(self._held):
                on_stop = self._held.pop(run_id)
                on_stop()
