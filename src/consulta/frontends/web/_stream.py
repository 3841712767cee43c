"""Runs' events as server-sent events: live as they happen, replayed exactly once after a late connect or reconnect.

Every event of a run has its number in the run, 1, 2, 3 … (`Event.seq`, given once by the runtime's run log and kept
by the store as `EventRecord.seq`) — the SSE `id`. The runtime tells its listeners each event at once but may record
the events of a step in progress only with the step's checkpoint, so neither source alone will do: the broker hears
every event of every run in this process and keeps the run's recent events in memory; the store holds the rest. A
client that sends `Last-Event-ID: n` gets the events after n from the store and the memory, then live ones — nothing
missed, nothing twice (an event heard with a number already given out is one the store showed already, and is
dropped). Snapshot and registration happen in one go on the event loop, where events are heard, so no event falls
between. (An event without a number, from a stand-in, is numbered after the last one.) Drafts of a reply
(`TextDelta`) go to the live clients only, without an `id`: they are neither kept nor replayed.

A run another process carries (several servers on one store) is heard here only in part (an answer given here), so
the rest comes from the store: while clients watch such runs, one task reads every `poll_s` the last numbers of all
of them in one query, then the new events of those that have some; nothing is read while nobody watches one. (The
carrying process records a step's events with its checkpoint, so a step in progress shows there a little later.)
An event heard with a number past the next one means another process recorded the ones between: they are read from
the store first.

Each client has a bounded queue; one that falls behind is dropped (its stream ends; EventSource reconnects with
its Last-Event-ID). A comment line every `heartbeat_s` keeps proxies from closing an idle stream. A client costs a
queue and one small task that notices when it goes away: a thousand of them are cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ...runtime import Event, EventRecord, RunRecord, RunStarted, RunStatus, TextDelta
from .._host import AppHost

__all__ = ["EventBroker", "EventStream"]

_log = logging.getLogger("consulta.web")
_TERMINAL = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)
_Item = tuple[int, str, bytes]  # (sequence number, event type, the SSE frame)


def _frame(seq: int, data: dict[str, Any]) -> bytes:
    body = json.dumps({**data, "seq": seq}, ensure_ascii=False, separators=(",", ":"))
    return f"id: {seq}\ndata: {body}\n\n".encode()


def _recorded_frame(record: EventRecord) -> bytes:
    return _frame(record.seq, {"run_id": record.run_id, "type": record.type, **record.data})


@dataclass(eq=False)
class _Client:
    limit: int
    pending: deque[_Item] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    dropped: bool = False  # fell `limit` events behind
    gone: bool = False  # disconnected, or the server is shutting down

    def offer(self, item: _Item) -> bool:
        if len(self.pending) >= self.limit:
            self.dropped = True
        else:
            self.pending.append(item)
        self.wake.set()
        return not self.dropped


@dataclass(eq=False)
class _RunLog:
    seq: int  # the last sequence number given out
    recent: deque[_Item]
    clients: set[_Client] = field(default_factory=set)
    ended: bool = False

    def give(self, item: _Item) -> None:
        """Keep the event and pass it to every client (dropping those too far behind)."""
        self.seq = item[0]
        self.recent.append(item)
        self.ended = self.ended or item[1] == "run_ended"
        for client in list(self.clients):
            if not client.offer(item):
                self.clients.discard(client)


@dataclass(frozen=True)
class Subscription:
    run_id: str
    replay: list[bytes]
    last_seq: int
    reset: bool
    """The client claimed events this server never gave (it restarted and lost a step in progress): start over."""
    client: _Client | None
    """None when nothing more will come here (the run has ended, the replay was all that was asked for, or the
    server is closing)."""
    final: bool
    """Nothing more will come at all (the run has ended, or only the replay was asked for): say `event: end`."""


class EventBroker:
    """Numbers, keeps and fans out the events of runs. Open it on the event loop that runs the agents."""

    def __init__(
        self, *, history: int = 256, idle_runs: int = 256, client_queue: int = 256, poll_s: float = 0.5
    ) -> None:
        self.history = history  # events of a run kept in memory (more than a step's, so the unrecorded tail is here)
        self.idle_runs = idle_runs  # runs kept in memory while no client watches them and nothing runs them here
        self.client_queue = client_queue
        self.poll_s = poll_s  # how often the store is read for watched runs another process carries
        self._poller: asyncio.Task[None] | None = None
        self._logs: OrderedDict[str, _RunLog] = OrderedDict()
        self._host: AppHost | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._unsubscribe: Any = None
        self.closing = False

    @property
    def host(self) -> AppHost:
        if self._host is None:
            raise RuntimeError("The event broker is not open (it opens in the app's lifespan).")
        return self._host

    def open(self, host: AppHost) -> None:
        self._host = host
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.closing = False
        self._unsubscribe = host.subscribe(self._hear)

    def close(self) -> None:
        """End every stream (the server is shutting down); idempotent."""
        self.closing = True
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for log in self._logs.values():
            for client in log.clients:
                client.gone = True
                client.wake.set()
            log.clients.clear()

    @property
    def clients(self) -> int:
        return sum(len(log.clients) for log in self._logs.values())

    # ---- hearing events ---------------------------------------------------------------------------------------

    def _hear(self, event: Event) -> None:
        if threading.get_ident() == self._thread:
            self._record(event)
        elif self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._record, event)  # an answer given on another thread

    def _record(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._draft(event)
            return
        log = self._logs.get(event.run_id)
        if log is None:
            # A new run has no events yet; any other run heard for the first time has all its earlier events in the
            # store (nothing runs it here, so nothing of it waits for a checkpoint): numbering continues from there.
            fresh = isinstance(event, RunStarted) and not event.resumed
            log = self._new_log(event.run_id, [] if fresh else None)
        else:
            self._logs.move_to_end(event.run_id)
        given = getattr(event, "seq", 0)
        if given > log.seq + 1:
            self._catch_up(event.run_id, log)  # what others recorded before it (this process did not carry the run)
        seq = given or log.seq + 1
        if seq <= log.seq:
            return  # read from the store already (recorded before it was told): given out once
        log.give((seq, event.type, _frame(seq, event.model_dump(mode="json"))))

    def _draft(self, event: TextDelta) -> None:
        """Words of a reply being written: to the run's live clients only, without a number (a reconnecting client
        gets the reply itself, not its drafts)."""
        log = self._logs.get(event.run_id)
        if log is None or not log.clients:
            return
        frame = f"data: {json.dumps(event.model_dump(mode='json'), ensure_ascii=False, separators=(',', ':'))}\n\n"
        item = (log.seq, event.type, frame.encode())
        for client in list(log.clients):
            if not client.offer(item):
                log.clients.discard(client)

    def _new_log(self, run_id: str, records: list[EventRecord] | None) -> _RunLog:
        if records is None:
            records = self.host.store.list_events(run_id)
        recent: deque[_Item] = deque(maxlen=self.history)
        for record in records[-self.history :]:
            recent.append((record.seq, record.type, _recorded_frame(record)))
        last = records[-1].seq if records else 0
        log = self._logs[run_id] = _RunLog(seq=last, recent=recent, ended=any(r.type == "run_ended" for r in records))
        self._evict(keep=run_id)
        return log

    def _catch_up(self, run_id: str, log: _RunLog) -> None:
        """Take in what other processes recorded since the last event given out, and pass it on."""
        for record in self.host.store.list_events(run_id, after_seq=log.seq):
            log.give((record.seq, record.type, _recorded_frame(record)))

    async def _poll_store(self) -> None:
        """While clients watch runs this process does not carry, read what the processes carrying them record: one
        query for the last numbers of all of them, then the new events of those that have some."""
        while not self.closing:
            await asyncio.sleep(self.poll_s)
            elsewhere = {
                run_id: log
                for run_id, log in self._logs.items()
                if log.clients and not log.ended and not self.host.runtime.is_running_here(run_id)
            }
            if not elsewhere:
                break
            try:
                latest = self.host.store.last_event_seqs(elsewhere)
                for run_id, seq in latest.items():
                    log = elsewhere[run_id]
                    if seq > log.seq:
                        self._catch_up(run_id, log)
            except Exception:  # a busy or broken store: say so and read again at the next poll
                _log.exception("Reading the events of runs other processes carry failed")
        self._poller = None

    def _follow_store(self) -> None:
        if self._poller is None and not self.closing:
            self._poller = asyncio.get_running_loop().create_task(self._poll_store())

    def _evict(self, *, keep: str) -> None:
        """Forget the least recently used runs nobody watches and nothing runs here (the store has all of theirs)."""
        excess = len(self._logs) - self.idle_runs
        if excess <= 0:
            return
        for run_id, log in list(self._logs.items()):
            if excess <= 0:
                break
            if run_id != keep and not log.clients and not self.host.runtime.is_running_here(run_id):
                del self._logs[run_id]
                excess -= 1

    # ---- clients ----------------------------------------------------------------------------------------------

    def subscribe(self, run: RunRecord, *, after: int, follow: bool = True) -> Subscription:
        """The events after `after` to send now, and (when `follow` and more may come) a client for the live ones.
        Call on the event loop, with a run the caller may see."""
        here = self.host.runtime.is_running_here(run.id)
        log = self._logs.get(run.id)
        if log is None:
            log = self._new_log(run.id, None)
        else:
            self._logs.move_to_end(run.id)
            if not log.ended and not here:
                self._catch_up(run.id, log)  # another process carries it: what it recorded since
        if not log.ended and run.status in _TERMINAL and not here:
            log.ended = True  # ended without a recorded run_ended (its process died at the end): nothing more comes
        reset = after > log.seq
        if reset:
            after = 0
        replay = self._replay(run.id, log, after)
        client = None
        if follow and not log.ended and not self.closing:
            client = _Client(limit=self.client_queue)
            log.clients.add(client)
            if not here:
                self._follow_store()
        final = log.ended or not follow
        return Subscription(run_id=run.id, replay=replay, last_seq=log.seq, reset=reset, client=client, final=final)

    def _replay(self, run_id: str, log: _RunLog, after: int) -> list[bytes]:
        first_kept = log.recent[0][0] if log.recent else log.seq + 1
        frames: list[bytes] = []
        if after + 1 < first_kept:  # older than memory: the store has them
            for record in self.host.store.list_events(run_id, after_seq=after):
                if record.seq < first_kept:
                    frames.append(_recorded_frame(record))
        frames.extend(frame for seq, _, frame in log.recent if seq > after)
        return frames

    def leave(self, run_id: str, client: _Client) -> None:
        log = self._logs.get(run_id)
        if log is not None:
            log.clients.discard(client)


class EventStream(Response):
    """The `text/event-stream` response of one subscription: the replay, `event: live`, then live events and
    heartbeats, then `event: end` once the run has ended (so EventSource clients close rather than reconnect)."""

    media_type = "text/event-stream"

    def __init__(
        self, broker: EventBroker, subscription: Subscription, *, heartbeat_s: float, send_timeout_s: float = 30.0
    ) -> None:
        # No body and so no Content-Length (as Starlette's StreamingResponse): the stream is as long as it lasts.
        self.status_code = 200
        self.background = None
        self.media_type = "text/event-stream; charset=utf-8"
        self.init_headers({"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"})
        self.broker = broker
        self.subscription = subscription
        self.heartbeat_s = heartbeat_s
        self.send_timeout_s = send_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sub = self.subscription
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        head = b"retry: 2000\n\n" + (b"event: reset\ndata: {}\n\n" if sub.reset else b"") + b"".join(sub.replay)
        client = sub.client
        if client is not None:
            head += b"event: live\ndata: {}\n\n"  # the replay is over: what follows happens now
        if client is None:  # (closing: no `end`, so the client reconnects to the next server)
            tail = _end(sub.last_seq) if sub.final else b""
            await send({"type": "http.response.body", "body": head + tail, "more_body": False})
            return
        watcher = asyncio.get_running_loop().create_task(_watch_disconnect(receive, client))
        try:
            await self._send(send, head)
            await self._pump(send, client, sub.last_seq)
        except TimeoutError:
            pass  # the client stopped reading: give up on it (the connection is closed)
        finally:
            watcher.cancel()
            self.broker.leave(sub.run_id, client)

    async def _pump(self, send: Send, client: _Client, last_seq: int) -> None:
        while True:
            if client.pending:
                items = list(client.pending)
                client.pending.clear()
                last_seq = items[-1][0]
                chunk = b"".join(frame for _, _, frame in items)
                if any(kind == "run_ended" for _, kind, _ in items):
                    await self._send(send, chunk + _end(last_seq), more=False)
                    return
                await self._send(send, chunk)
                continue
            if client.gone:
                if not self.broker.closing:
                    return  # disconnected: nobody to tell
                await self._send(send, b"", more=False)
                return
            if client.dropped:
                await self._send(send, b"", more=False)  # too slow: end; it reconnects with its Last-Event-ID
                return
            client.wake.clear()
            try:
                async with asyncio.timeout(self.heartbeat_s):
                    await client.wake.wait()
            except TimeoutError:
                await self._send(send, b": ping\n\n")

    async def _send(self, send: Send, body: bytes, *, more: bool = True) -> None:
        async with asyncio.timeout(self.send_timeout_s):
            await send({"type": "http.response.body", "body": body, "more_body": more})


def _end(seq: int) -> bytes:
    return f"event: end\ndata: {json.dumps({'seq': seq})}\n\n".encode()


async def _watch_disconnect(receive: Receive, client: _Client) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        while (await receive())["type"] != "http.disconnect":
            pass
        client.gone = True
        client.wake.set()
