"""The event bus of one process: every event a run emits here reaches every listener, in order."""

from __future__ import annotations

from collections.abc import Callable

from ._errors import ListenerError
from ._events import Event

__all__ = ["EventBus", "Listener"]

Listener = Callable[[Event], None]


class EventBus:
    """Listeners of this process's events (front ends, traces). A listener must not block: it runs on the emitter's
    thread, between the runtime's own steps. A listener that raises does not keep the event from the others; the
    emitter gets a ListenerError once all have heard it."""

    def __init__(self) -> None:
        self._listeners: tuple[Listener, ...] = ()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event; returns an unsubscribe function."""
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            kept = list(self._listeners)
            kept.remove(listener)
            self._listeners = tuple(kept)

        return unsubscribe

    def publish(self, event: Event) -> None:
        failure: ListenerError | None = None
        for listener in self._listeners:  # a tuple, replaced (not changed) by (un)subscribing: no copy per event
            try:
                listener(event)
            except Exception as error:
                if failure is None:
                    failure = ListenerError(
                        f"A listener of the runtime's events ({getattr(listener, '__qualname__', listener)!r}) raised on "
                        f"{event.type} of run {event.run_id}: {type(error).__name__}: {error}. A listener must not raise: "
                        "fix it, or catch its errors."
                    )
                    failure.__cause__ = error
        if failure is not None:
            raise failure
