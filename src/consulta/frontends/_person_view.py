"""What a person reads of a conversation: their own message, then the reply of the agent that speaks to them.

A turn may pass through several agents (the app's hand-over, done by the host). The runs in between are one agent's
work for the next: a run started by a hand-over does not show its prompt as the person's (it is the previous agent's
note), and a run that handed its turn over shows no reply (its work shows as its tool calls and cards). The desktop
and the terminal read the host's events through `PersonView`; the web page decides the same in static/js/chat.js.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..runtime import Event, ModelText, RunEnded, RunStarted
from ._host import HandedOver, HostEvent

__all__ = ["PersonView"]


class _HandOvers(Protocol):
    def handed_from(self, run_id: str) -> str | None: ...

    def handed_to(self, run_id: str) -> str | None: ...


class PersonView:
    """Passes the host's events on to `show`, in order, leaving out what the person should not read as the
    conversation: the prompt of a run started by a hand-over (its `RunStarted`), the reply of a run that handed over
    (its `ModelText`, held until the run goes on or ends: the host says at the run's end whether it handed over), and
    `HandedOver` itself. `host`: what tells the hand-overs (`AppHost`)."""

    def __init__(self, host: _HandOvers, show: Callable[[Event], None]) -> None:
        self._host = host
        self._show = show
        self._held: dict[str, ModelText] = {}  # run id -> its reply, until the run goes on or ends

    def __call__(self, event: HostEvent) -> None:
        if isinstance(event, HandedOver):
            return
        if isinstance(event, RunStarted) and not event.resumed and self._host.handed_from(event.run_id) is not None:
            return
        held = self._held.pop(event.run_id, None)
        if held is not None and not (isinstance(event, RunEnded) and self._host.handed_to(event.run_id) is not None):
            self._show(held)
        if isinstance(event, ModelText):
            self._held[event.run_id] = event
            return
        self._show(event)
