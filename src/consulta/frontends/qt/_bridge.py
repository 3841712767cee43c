"""The bridge between the Qt GUI thread and the runtime: one asyncio event loop on one background thread owns an
`AppHost`; the GUI submits work to it and hears back through Qt signals, queued to the GUI thread.

Nothing here waits on a person: a pending question is a row in the store (and a timer in the loop), not a parked
thread. The GUI never blocks on the loop either: `call` returns at once and its result arrives as a signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from ...apps import AppDef, AppOptions
from ...config import Settings
from ...i18n import normalize_lang
from ...runtime import ConsultaError, Event, RunStarted
from .._host import LOCAL_PRINCIPAL, AppHost

__all__ = ["BridgeState", "HostBridge"]

STOP_TIMEOUT_S = 10.0
"""How long stopping one run may take on shutdown (a tool or model call in flight finishes first)."""

Work = Callable[[AppHost], Any]
"""What the GUI asks of the host: a function of the host returning a value or an awaitable (run on the loop)."""


class BridgeState(Enum):
    new = "new"
    starting = "starting"
    ready = "ready"
    failed = "failed"
    stopping = "stopping"
    stopped = "stopped"


@dataclass(frozen=True, eq=False)
class _Reply:
    """A finished call, carried to the GUI thread: its callbacks and its outcome (a value or an exception)."""

    on_done: Callable[[Any], None] | None
    on_error: Callable[[BaseException], None] | None
    value: Any = None
    error: BaseException | None = None


class HostBridge(QObject):
    """Owns the event loop thread and the `AppHost` on it, for one desktop window (principal `LOCAL_PRINCIPAL`).

    Signals (all delivered on the GUI thread):
    - `event_received(Event)`: every runtime event of this process, in order.
    - `ready()`: the host is up; `call` may be used.
    - `failed(str)`: the host could not be created (bad settings, unreadable data); the loop is gone.
    - `stopped()`: after `shutdown`, runs stopped, host closed, loop and its thread ended.
    """

    event_received = Signal(object)
    ready = Signal()
    failed = Signal(str)
    stopped = Signal()
    _replied = Signal(object)
    _opened = Signal(object)
    _thread_ended = Signal()

    def __init__(
        self,
        *,
        app: str | AppDef,
        settings: Settings,
        options: Mapping[str, Any] | AppOptions | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.app = app
        self.settings = settings
        self.options = options
        self.principal = LOCAL_PRINCIPAL
        self.state = BridgeState.new
        self.host: AppHost | None = None
        """Created on the loop thread; touch it only from work passed to `call`."""
        self.data_path: Path | None = None
        """The app's data (a file or folder, as the app declares), known once `ready`."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runs: set[str] = set()  # runs this process started or resumed (loop thread only)
        self._ended = False
        # Explicitly queued: the emitting thread is the loop's, the slots run on the GUI thread.
        self._replied.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._opened.connect(self._on_opened, Qt.ConnectionType.QueuedConnection)
        self._thread_ended.connect(self._joined, Qt.ConnectionType.QueuedConnection)

    # ---- lifetime -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop thread and create the host on it; `ready` or `failed` follows."""
        if self.state is not BridgeState.new:
            return
        self.state = BridgeState.starting
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._thread_main, name="consulta-qt-loop", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._open(), self._loop)

    def shutdown(self) -> None:
        """Stop gracefully: stop this window's runs (their pending asks close as cancelled), close the host, end the
        loop and its thread; `stopped` follows. Returns at once; calling it again does nothing."""
        if self.state in (BridgeState.stopping, BridgeState.stopped):
            return
        previous, self.state = self.state, BridgeState.stopping
        if self._loop is None or self._ended:
            # Never from inside the caller (e.g. a closeEvent that would then close again): on the next turn.
            QTimer.singleShot(0, self._stopped_now)
        elif previous is not BridgeState.failed:  # a failed host's loop is ending already: `_joined` follows
            closing = self._close()
            try:
                asyncio.run_coroutine_threadsafe(closing, self._loop)
            except RuntimeError:  # the loop closed meanwhile (the host failed to open): `_joined` follows
                closing.close()

    def abandon(self) -> None:
        """Give up waiting for `shutdown` (a call that will not end): the loop thread, a daemon, ends with the process."""
        self.state = BridgeState.stopped

    @property
    def thread_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- work -----------------------------------------------------------------------------------------------

    def call(
        self,
        work: Work,
        *,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> bool:
        """Run `work(host)` on the loop; `on_done(value)` or `on_error(exception)` is called later on the GUI thread.

        Returns False (and calls nothing) when the host is not ready — starting, failed or shutting down."""
        if self.state is not BridgeState.ready or self._loop is None:
            return False
        future = asyncio.run_coroutine_threadsafe(self._run(work), self._loop)
        future.add_done_callback(lambda f: self._post(self._replied, _reply(f, on_done, on_error)))
        return True

    # ---- on the loop thread ---------------------------------------------------------------------------------

    def _thread_main(self) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())  # threads of asyncio.to_thread end here
        finally:
            loop.close()
            self._post(self._thread_ended)

    def _post(self, signal: Any, *args: Any) -> None:
        """Emit from the loop thread; once the window (and this bridge with it) is destroyed, nobody is told."""
        with contextlib.suppress(RuntimeError):
            signal.emit(*args)

    async def _open(self) -> None:
        try:
            self.host = AppHost(app=self.app, settings=self.settings, options=self.options, ask_policy="wait")
        except Exception as error:  # noqa: BLE001 - reported to the window, which shows it
            self._stop_loop()
            self._post(self._opened, (error, None))
            return
        self.host.subscribe(self._on_event)
        self._post(self._opened, (None, self.host.data_path))

    def _on_event(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._runs.add(event.run_id)
        self._post(self.event_received, event)

    async def _run(self, work: Work) -> Any:
        assert self.host is not None
        result = work(self.host)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _close(self) -> None:
        host = self.host
        try:
            if host is not None:
                for run_id in sorted(self._runs):
                    if host.runtime.is_running_here(run_id):
                        # A run that cannot stop in time is left at its last checkpoint (consistent by design).
                        with contextlib.suppress(Exception):
                            await asyncio.wait_for(host.stop(run_id, principal=self.principal), STOP_TIMEOUT_S)
                await host.aclose()
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        loop.call_soon(loop.stop)

    # ---- on the GUI thread ----------------------------------------------------------------------------------

    @Slot(object)
    def _deliver(self, reply: _Reply) -> None:
        if reply.error is not None:
            if reply.on_error is not None:
                reply.on_error(reply.error)
        elif reply.on_done is not None:
            reply.on_done(reply.value)

    @Slot()
    def _stopped_now(self) -> None:
        self.state = BridgeState.stopped
        self.stopped.emit()

    @Slot(object)
    def _on_opened(self, opened: tuple[BaseException | None, Path | None]) -> None:
        error, self.data_path = opened
        if self.state is not BridgeState.starting:  # shut down meanwhile: `_close` takes care of the host
            return
        if error is None:
            self.state = BridgeState.ready
            self.ready.emit()
        else:
            self.state = BridgeState.failed
            words = (
                error.localized(normalize_lang(self.settings.lang)) if isinstance(error, ConsultaError) else str(error)
            )
            self.failed.emit(words or type(error).__name__)

    @Slot()
    def _joined(self) -> None:
        self._ended = True
        if self._thread is not None:
            self._thread.join(timeout=5.0)  # it emitted this signal as its very last act: the join returns at once
        if self.state is BridgeState.stopping:
            self._stopped_now()


def _reply(
    future: Any, on_done: Callable[[Any], None] | None, on_error: Callable[[BaseException], None] | None
) -> _Reply:
    if future.cancelled():
        return _Reply(on_done, on_error, error=asyncio.CancelledError())
    error = future.exception()
    return (
        _Reply(on_done, on_error, error=error)
        if error is not None
        else _Reply(on_done, on_error, value=future.result())
    )
