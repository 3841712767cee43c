"""The event broker's numbering, replay and fan-out, against a stand-in host whose store holds what the runtime has
recorded so far (the events of a step in progress are heard before they are recorded), numbered as the runtime and
the store number them."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from consulta.frontends.web._stream import EventBroker
from consulta.runtime import Event, EventRecord, ModelText, RunEnded, RunRecord, RunStarted, RunStatus, StepStarted


@dataclass
class _Store:
    recorded: dict[str, list[EventRecord]] = field(default_factory=dict)
    reads: int = 0

    def record(self, event: Event) -> None:
        """Store the event under its number (the run's next one when it has none, as `Store.append_event`)."""
        rows = self.recorded.setdefault(event.run_id, [])
        seq = event.seq or self.last_seq(event.run_id) + 1
        data = event.model_dump(mode="json", exclude={"run_id", "type", "seq"})
        rows.append(EventRecord(id=len(rows) + 1, run_id=event.run_id, seq=seq, type=event.type, data=data, ts="t"))

    def last_seq(self, run_id: str) -> int:
        return max((row.seq for row in self.recorded.get(run_id, [])), default=0)

    def last_event_seqs(self, run_ids: list[str]) -> dict[str, int]:
        self.reads += 1
        return {run_id: self.last_seq(run_id) for run_id in run_ids if run_id in self.recorded}

    def list_events(self, run_id: str, *, after_seq: int = 0) -> list[EventRecord]:
        self.reads += 1
        return sorted((row for row in self.recorded.get(run_id, []) if row.seq > after_seq), key=lambda row: row.seq)


@dataclass
class _Runtime:
    here: set[str] = field(default_factory=set)

    def is_running_here(self, run_id: str) -> bool:
        return run_id in self.here


@dataclass
class _Host:
    store: _Store = field(default_factory=_Store)
    runtime: _Runtime = field(default_factory=_Runtime)
    listeners: list[Callable[[Event], None]] = field(default_factory=list)
    told: dict[str, int] = field(default_factory=dict)  # the last number this process gave each run's events

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def emit(self, event: Event, *, record: bool = True) -> None:
        """As the runtime does: number the event (after the last one told or stored), tell the listeners, then
        record it (or leave it for the step's checkpoint)."""
        if not event.seq:
            event.seq = max(self.told.get(event.run_id, 0), self.store.last_seq(event.run_id)) + 1
        self.told[event.run_id] = event.seq
        for listener in self.listeners:
            listener(event)
        if record:
            self.store.record(event)


def _run(run_id: str, status: RunStatus = RunStatus.running) -> RunRecord:
    return RunRecord(
        id=run_id,
        app="ln2",
        thread_id=run_id,
        parent_run_id=None,
        status=status,
        prompt="p",
        model="m",
        lang="en",
        options={},
        trace_id="t",
        output=None,
        error=None,
        owner=None,
        principal="web:x",
        heartbeat_at=None,
        cancel_requested=False,
        created_at="c",
        updated_at="u",
    )


def _seqs(frames: list[bytes]) -> list[int]:
    return [json.loads(f.decode().split("data: ", 1)[1])["seq"] for f in frames]


def _types(frames: list[bytes]) -> list[str]:
    return [json.loads(f.decode().split("data: ", 1)[1])["type"] for f in frames]


def _with_broker(test: Callable[[EventBroker, _Host], Any], **options: Any) -> None:
    async def main() -> None:
        host = _Host()
        broker = EventBroker(**options)
        broker.open(host)  # type: ignore[arg-type]
        test(broker, host)
        broker.close()

    asyncio.run(main())


def _started_run(host: _Host, run_id: str = "run_a", *, steps: int = 2, unrecorded: int = 0) -> None:
    """RunStarted and `steps` StepStarted events, the last `unrecorded` of them not yet checkpointed."""
    host.runtime.here.add(run_id)
    host.emit(RunStarted(run_id=run_id, app="ln2", prompt="p"))
    for step in range(1, steps + 1):
        host.emit(StepStarted(run_id=run_id, step=step), record=step <= steps - unrecorded)


def test_events_are_numbered_per_run_from_one_without_reading_the_store_for_a_new_run() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host, "run_a")
        _started_run(host, "run_b", steps=1)
        assert host.store.reads == 0
        sub_a = broker.subscribe(_run("run_a"), after=0)
        sub_b = broker.subscribe(_run("run_b"), after=0)
        assert _seqs(sub_a.replay) == [1, 2, 3] and _seqs(sub_b.replay) == [1, 2]
        assert not sub_a.reset and sub_a.last_seq == 3

    _with_broker(check)


def test_a_late_client_gets_the_unrecorded_step_events_from_memory_exactly_once_then_live_ones() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host, steps=4, unrecorded=2)  # events 4 and 5 are not in the store yet
        assert len(host.store.recorded["run_a"]) == 3
        sub = broker.subscribe(_run("run_a"), after=2)
        assert _seqs(sub.replay) == [3, 4, 5]
        host.emit(ModelText(run_id="run_a", text="hi"), record=False)
        assert sub.client is not None
        assert [seq for seq, _, _ in sub.client.pending] == [6]
        assert _seqs(broker.subscribe(_run("run_a"), after=6).replay) == []

    _with_broker(check)


def test_replay_older_than_memory_comes_from_the_store_without_gaps_or_duplicates() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host, steps=6, unrecorded=2)  # 7 events heard, 5 recorded; memory keeps the last 3
        sub = broker.subscribe(_run("run_a"), after=1)
        assert _seqs(sub.replay) == [2, 3, 4, 5, 6, 7]
        assert _types(sub.replay)[0] == "step_started"

    _with_broker(check, history=3)


def test_a_run_first_heard_midway_continues_the_stores_numbering() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        for event in (RunStarted(run_id="run_old", app="ln2", prompt="p"), StepStarted(run_id="run_old", step=1)):
            host.store.record(event)  # recorded by a process that is gone
        host.runtime.here.add("run_old")
        host.emit(RunStarted(run_id="run_old", app="ln2", prompt=None, resumed=True))
        host.emit(StepStarted(run_id="run_old", step=2), record=False)
        assert _seqs(broker.subscribe(_run("run_old"), after=0).replay) == [1, 2, 3, 4]

    _with_broker(check)


def test_a_client_ahead_of_the_server_is_told_to_reset_and_gets_everything() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host)
        sub = broker.subscribe(_run("run_a"), after=40)  # e.g. the server restarted and lost a step in progress
        assert sub.reset and _seqs(sub.replay) == [1, 2, 3]

    _with_broker(check)


def test_an_ended_run_has_no_live_client_and_a_slow_client_is_dropped() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host)
        slow = broker.subscribe(_run("run_a"), after=0).client
        fast = broker.subscribe(_run("run_a"), after=0).client
        assert slow is not None and fast is not None and broker.clients == 2
        host.emit(StepStarted(run_id="run_a", step=3))
        fast.pending.clear()
        host.emit(StepStarted(run_id="run_a", step=4))
        host.emit(StepStarted(run_id="run_a", step=5))  # the third event `slow` has not taken
        assert slow.dropped and not fast.dropped and broker.clients == 1
        host.emit(RunEnded(run_id="run_a", status="finished"))
        host.runtime.here.discard("run_a")
        after_end = broker.subscribe(_run("run_a", RunStatus.finished), after=0)
        assert after_end.client is None and after_end.final and _seqs(after_end.replay) == [1, 2, 3, 4, 5, 6, 7]
        assert broker.subscribe(_run("run_a", RunStatus.finished), after=0, follow=False).client is None

    _with_broker(check, client_queue=2)


def test_while_closing_a_running_run_gets_its_replay_without_an_end() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        _started_run(host)
        assert broker.subscribe(_run("run_a"), after=0, follow=False).final  # only the replay was asked for
        watching = broker.subscribe(_run("run_a"), after=0).client
        broker.close()
        assert watching is not None and watching.gone and watching.wake.is_set()
        late = broker.subscribe(_run("run_a"), after=0)
        assert late.client is None and not late.final and _seqs(late.replay) == [1, 2, 3]

    _with_broker(check)


def test_a_finished_run_without_a_recorded_end_does_not_keep_a_client_waiting() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        host.store.record(RunStarted(run_id="run_x", app="ln2", prompt="p"))  # its process died at the end
        assert broker.subscribe(_run("run_x", RunStatus.finished), after=0).client is None
        assert broker.subscribe(_run("run_y", RunStatus.waiting), after=0).client is not None

    _with_broker(check)


def test_idle_runs_are_forgotten_and_read_back_from_the_store() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        for name in ("run_1", "run_2", "run_3"):
            _started_run(host, name)
            host.runtime.here.discard(name)  # ended here: the store has all of it
        _started_run(host, "run_live")  # still running here: never forgotten
        watched = broker.subscribe(_run("run_3"), after=0).client
        assert watched is not None
        _started_run(host, "run_new")
        kept = set(broker._logs)
        assert {"run_live", "run_3", "run_new"} <= kept and len(kept) == 3
        reads = host.store.reads
        assert _seqs(broker.subscribe(_run("run_1"), after=1).replay) == [2, 3]
        assert host.store.reads == reads + 1

    _with_broker(check, idle_runs=3)


def test_a_run_read_from_the_store_takes_in_what_another_process_added() -> None:
    def check(broker: EventBroker, host: _Host) -> None:
        host.store.record(RunStarted(run_id="run_o", app="ln2", prompt="p"))
        first = broker.subscribe(_run("run_o", RunStatus.waiting), after=0)  # read from the store, not heard here
        assert _seqs(first.replay) == [1] and first.client is not None
        host.store.record(StepStarted(run_id="run_o", step=1))  # another process (e.g. `consulta answer`) records
        assert _seqs(broker.subscribe(_run("run_o", RunStatus.waiting), after=0).replay) == [1, 2]
        assert [seq for seq, _, _ in first.client.pending] == [2]  # the first client is told too
        host.store.record(StepStarted(run_id="run_o", step=2))
        host.runtime.here.add("run_o")  # then this process resumes it
        host.emit(RunStarted(run_id="run_o", app="ln2", prompt=None, resumed=True), record=False)
        assert [seq for seq, _, _ in first.client.pending] == [2, 3, 4]
        assert _types(broker.subscribe(_run("run_o"), after=2).replay) == ["step_started", "run_started"]

    _with_broker(check)


def test_an_event_heard_on_another_thread_is_numbered_on_the_loop() -> None:
    async def main() -> None:
        host = _Host()
        broker = EventBroker()
        broker.open(host)  # type: ignore[arg-type]
        _started_run(host)
        thread = threading.Thread(target=host.emit, args=(ModelText(run_id="run_a", text="from a thread"),))
        thread.start()
        thread.join()
        await asyncio.sleep(0)  # the loop takes it up
        await asyncio.sleep(0)
        assert _types(broker.subscribe(_run("run_a"), after=3).replay) == ["model_text"]
        broker.close()

    asyncio.run(main())


def test_the_runtimes_numbers_are_kept_and_an_event_the_store_showed_first_is_given_out_once() -> None:
    """Events carry their number from the runtime (`Event.seq`, the store's): the broker keeps it. A resumed run's
    RunStarted, recorded before it was told, is in the store when the broker first reads the run: not sent twice."""

    def check(broker: EventBroker, host: _Host) -> None:
        rows = host.store.recorded.setdefault("run_r", [])
        for seq, event in enumerate(
            [RunStarted(run_id="run_r", app="ln2", prompt="p"), StepStarted(run_id="run_r", step=1)], start=1
        ):
            rows.append(EventRecord(id=seq, run_id="run_r", type=event.type, data={}, ts="t", seq=seq))
        resumed = RunStarted(run_id="run_r", app="ln2", prompt=None, resumed=True, seq=3)
        rows.append(EventRecord(id=3, run_id="run_r", type=resumed.type, data={"resumed": True}, ts="t", seq=3))
        host.runtime.here.add("run_r")
        host.emit(resumed, record=False)  # heard after the store has it
        sub = broker.subscribe(_run("run_r"), after=0)
        assert _seqs(sub.replay) == [1, 2, 3] and _types(sub.replay)[-1] == "run_started"
        host.emit(StepStarted(run_id="run_r", step=2, seq=4), record=False)
        assert sub.client is not None and [seq for seq, _, _ in sub.client.pending] == [4]
        assert _seqs(broker.subscribe(_run("run_r"), after=3).replay) == [4]

    _with_broker(check)


def test_a_watched_run_another_process_carries_is_read_from_the_store_until_it_ends_then_polling_stops() -> None:
    async def main() -> None:
        host = _Host()
        broker = EventBroker(poll_s=0.01)
        broker.open(host)  # type: ignore[arg-type]
        host.store.record(RunStarted(run_id="run_o", app="ln2", prompt="p"))  # another server runs it
        sub = broker.subscribe(_run("run_o"), after=0)
        assert sub.client is not None and broker._poller is not None
        host.store.record(StepStarted(run_id="run_o", step=1))  # recorded there, never heard here
        host.store.record(RunEnded(run_id="run_o", status="finished"))
        await asyncio.wait_for(_until(lambda: len(sub.client.pending) == 2), timeout=5)
        assert [kind for _, kind, _ in sub.client.pending] == ["step_started", "run_ended"]
        await asyncio.wait_for(_until(lambda: broker._poller is None), timeout=5)  # nothing left to watch elsewhere
        reads = host.store.reads
        await asyncio.sleep(0.05)
        assert host.store.reads == reads
        broker.close()

    asyncio.run(main())


def test_a_run_carried_here_is_not_polled_and_an_event_past_the_next_number_brings_the_ones_between() -> None:
    async def main() -> None:
        host = _Host()
        broker = EventBroker(poll_s=0.01)
        broker.open(host)  # type: ignore[arg-type]
        _started_run(host, steps=1)
        sub = broker.subscribe(_run("run_a"), after=0)
        assert sub.client is not None and broker._poller is None  # this process tells every event of it
        host.store.record(StepStarted(run_id="run_a", step=2))  # number 3, written by another process
        host.emit(StepStarted(run_id="run_a", step=3, seq=4), record=False)
        assert [seq for seq, _, _ in sub.client.pending] == [3, 4]
        broker.close()

    asyncio.run(main())


async def _until(check: Callable[[], bool]) -> None:
    while not check():
        await asyncio.sleep(0.005)
