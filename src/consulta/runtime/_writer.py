"""A write-behind queue for step checkpoints: one thread per runtime, so a step does not wait for its commit.

Order is kept (one thread, FIFO), and every point where another process may act on the store — an ask opening, a
run ending — drains the queue first, so what another process sees is never older than what it acts on. A crash can
lose at most the last steps' checkpoints; the run then resumes from the one before and redoes them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["WriteBehind"]


class WriteBehind:
    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._pending = 0
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def submit(self, write: Callable[[], None]) -> None:
        with self._done:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="consulta-store-writer", daemon=True)
                self._thread.start()
        self._queue.put(write)

    def drain(self) -> None:
        """Wait until every submitted write is done; re-raise the first write that failed."""
        with self._done:
            while self._pending:
                self._done.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while True:
            write = self._queue.get()
            try:
                write()
            except BaseException as error:  # noqa: BLE001 - reported by the next drain()
                self._error = self._error or error
            finally:
                with self._done:
                    self._pending -= 1
                    self._done.notify_all()
