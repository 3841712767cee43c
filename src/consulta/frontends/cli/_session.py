"""A terminal session on `AppHost`, like every front end's: events printed as they happen, asks answered at the
prompt (or left for `consulta answer`), Ctrl-C stopping the run gracefully, and the app's hand-over followed."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from ...i18n import t
from ...runtime import AskOpened, AskRecord, ConflictError, InvalidAnswerError, RunRecord, RunStatus
from .._host import AppHost, HostEvent
from .._person_view import PersonView
from ._base import Abandoned, Stdin, console, in_daemon_thread, interactive
from ._render import EventPrinter, prompt_for_ask

__all__ = ["TerminalSession"]


class TerminalSession:
    """The terminal's hold on a host: prints the host's events and queues the asks someone here should answer."""

    def __init__(self, host: AppHost, *, principal: str | None, stdin: Stdin | None = None) -> None:
        """`principal`: whose runs these are (the terminal acts for the run's own principal; None on runs recorded
        before principals were)."""
        self.host = host
        self.principal = principal
        self.lang = host.env.lang
        self.stdin = stdin or Stdin()
        self.asks: asyncio.Queue[AskRecord] = asyncio.Queue()
        self._show = PersonView(
            host, EventPrinter(console, self.lang, app=host.app.name, reply=host.app.terminal.reply)
        )
        self._unsubscribe = host.subscribe(self._hear)

    @property
    def answers_here(self) -> bool:
        return self.host.runtime.ask_policy == "wait" and interactive()

    def _hear(self, event: HostEvent) -> None:
        self._show(event)  # the next agent's run, after a hand-over, starts like any run: its events follow
        if isinstance(event, AskOpened):
            if self.answers_here:
                self.asks.put_nowait(self.host.store.get_ask(event.ask_id))
            else:  # answered from elsewhere: `consulta answer`, another front end
                key = "cli.chat.waiting" if self.host.runtime.ask_policy == "wait" else "cli.chat.deferred"
                console.print(t(key, self.lang, ask_id=event.ask_id), style="yellow", markup=False)

    def close(self) -> None:
        self._unsubscribe()

    # ---- one turn ---------------------------------------------------------------------------------------------

    async def turn(self, run: RunRecord) -> RunRecord:
        """Drive `run` until it settles, then each run it is handed over to; the first run's end."""
        result = await self.drive(run.id)
        follow = await self.host.handed_over(run.id) if result.status == RunStatus.finished else None
        while follow is not None:  # another agent of the app speaks next (the app's hand-over)
            handed = await self.drive(follow.id)
            follow = await self.host.handed_over(follow.id) if handed.status == RunStatus.finished else None
        return result

    async def drive(self, run_id: str) -> RunRecord:
        """Answer the run's asks at the terminal until it settles; Ctrl-C stops it gracefully."""
        loop = asyncio.get_running_loop()
        stop_requested = asyncio.Event()
        if interactive():
            loop.add_signal_handler(signal.SIGINT, stop_requested.set)
        try:
            while True:
                settled = asyncio.ensure_future(self.host.settled(run_id, principal=self.principal))
                next_ask = asyncio.ensure_future(self.asks.get())
                stop = asyncio.ensure_future(stop_requested.wait())
                done, _ = await asyncio.wait({settled, next_ask, stop}, return_when=asyncio.FIRST_COMPLETED)
                for task in (settled, next_ask):
                    if task not in done:
                        task.cancel()
                if next_ask in done and stop not in done:
                    answering = asyncio.ensure_future(self._answer_here(next_ask.result()))
                    done, _ = await asyncio.wait({answering, stop}, return_when=asyncio.FIRST_COMPLETED)
                    if answering not in done:
                        self.stdin.abandon()
                        answering.cancel()
                if stop in done:
                    console.print()
                    console.print(t("cli.chat.stopping", self.lang), style="yellow")
                    run = await self.host.stop(run_id, principal=self.principal)
                    console.print(t("cli.chat.stopped", self.lang, run_id=run_id), style="yellow")
                    return run
                stop.cancel()
                if settled in done:
                    return settled.result()
        finally:
            if interactive():
                loop.remove_signal_handler(signal.SIGINT)

    async def _answer_here(self, ask: AskRecord) -> None:
        while True:
            try:
                answer: Any = await in_daemon_thread(prompt_for_ask, ask, console, self.lang, self.stdin.read)
            except EOFError:
                answer = None
            except Abandoned:
                return
            try:
                if answer is None:
                    await self.host.cancel(ask.id, principal=self.principal)
                    console.print(t("cli.question.cancelled", self.lang), style="yellow")
                else:
                    await self.host.answer(ask.id, answer, principal=self.principal)
                return
            except InvalidAnswerError as error:
                console.print(
                    t("cli.question.invalid", self.lang, error=error.localized(self.lang)), style="red", markup=False
                )
            except ConflictError:
                closed = self.host.ask(ask.id, principal=self.principal)
                console.print(t("cli.question.closed", self.lang, status=closed.status.value), style="yellow")
                return
