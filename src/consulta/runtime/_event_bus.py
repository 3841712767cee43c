"""The event bus of one process: every event a run emits here reaches every listener, in order."""

from __future__ import annotations

from collections.abc import Callable

from ._events import Event

__all__ = ["EventBus", "Listener"]

Listener = Callable[[Event], None]


class EventBus:
    """Listeners of this process's events (front ends, traces). A listener must not block: it runs on the emitter's
    thread, between the runtime's own steps."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)
