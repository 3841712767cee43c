"""A run's events over SSE: numbered 1, 2, … per run; replayed after Last-Event-ID exactly once; live as they happen
on a real server; heartbeats; clients that leave are forgotten; shutdown ends open streams."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient

from consulta.frontends.web import create_app

from .conftest import AMBIGUOUS, new_session, pending_ask, run_status, running_server, settings_for, wait_for


@dataclass
class Frame:
    id: int | None = None
    event: str = "message"
    data: str = ""
    comments: list[str] = field(default_factory=list)

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.data)


def frames(lines: Iterator[str]) -> Iterator[Frame]:
    """SSE frames from a stream of lines (comment-only frames included, so heartbeats can be seen)."""
    frame = Frame()
    for line in lines:
        if line == "":
            if frame.data or frame.comments or frame.event != "message":
                yield frame
            frame = Frame()
        elif line.startswith(":"):
            frame.comments.append(line[1:].strip())
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "id":
                frame.id = int(value)
            elif name == "event":
                frame.event = value
            elif name == "data":
                frame.data = value


def replay(client: Any, run_id: str, headers: dict[str, str], **params: Any) -> list[Frame]:
    response = client.get(f"/api/runs/{run_id}/events", params={"follow": "false", **params}, headers=headers)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    return list(frames(iter(response.text.splitlines())))


def _finished_run(client: TestClient, headers: dict[str, str]) -> str:
    run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()
    question = pending_ask(client, headers, kind="question")
    client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=headers)
    plan = pending_ask(client, headers, kind="plan")
    client.post(f"/api/asks/{plan['id']}/answer", json={"decision": "approve"}, headers=headers)
    run_status(client, headers, run["id"], "finished")
    return run["id"]


# ---- replay (TestClient) ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finished:
    client: TestClient
    headers: dict[str, str]
    run_id: str


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Finished]:
    """One finished run (a question answered, a plan approved) that the replay tests only read: a run costs seconds."""
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path_factory.mktemp("replay")))) as client:
        headers = new_session(client)
        yield Finished(client, headers, _finished_run(client, headers))


def test_replay_numbers_every_event_and_ends(finished: Finished) -> None:
    client, alice, run_id = finished.client, finished.headers, finished.run_id
    everything = replay(client, run_id, alice)
    events = [f for f in everything if f.event == "message"]
    assert [f.id for f in events] == list(range(1, len(events) + 1))
    assert [f.json["seq"] for f in events] == [f.id for f in events]
    assert all(f.json["run_id"] == run_id for f in events)
    types = [f.json["type"] for f in events]
    assert types[0] == "run_started" and types[-1] == "run_ended"
    for expected in (
        "step_started",
        "tool_called",
        "tool_returned",
        "ask_opened",
        "ask_closed",
        "model_text",
        "plan_staged",
        "plan_decided",
    ):
        assert expected in types
    assert everything[-1].event == "end" and everything[-1].json == {"seq": len(events)}
    # the events are the runtime's, in its order (and so the store's)
    stored = client.app.state.host.store.list_events(run_id)
    assert types == [e.type for e in stored]

    # a finished run's stream ends even when following
    assert [f.id for f in replay(client, run_id, alice, follow="true") if f.event == "message"] == [
        f.id for f in events
    ]


def test_replay_after_a_sequence_number_gives_the_rest_exactly_once(finished: Finished) -> None:
    client, alice, run_id = finished.client, finished.headers, finished.run_id
    full = [f.data for f in replay(client, run_id, alice) if f.event == "message"]
    for after in (0, 1, 7, len(full) - 1, len(full)):
        rest = [f.data for f in replay(client, run_id, alice, after=after) if f.event == "message"]
        assert rest == full[after:]
    # EventSource's Last-Event-ID wins over the URL's `after`
    by_header = replay(client, run_id, {**alice, "Last-Event-ID": "10"}, after=3)
    assert [f.id for f in by_header if f.event == "message"] == list(range(11, len(full) + 1))


def test_a_sequence_number_the_server_never_gave_resets_the_client(finished: Finished) -> None:
    client, alice, run_id = finished.client, finished.headers, finished.run_id
    got = replay(client, run_id, {**alice, "Last-Event-ID": "999"})
    assert got[0].event == "reset"
    assert [f.id for f in got if f.event == "message"][0] == 1


def test_bad_stream_requests(client: TestClient, alice: dict[str, str]) -> None:
    run_id = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()["id"]
    for params, headers in (({"after": -1}, {}), ({"after": "x"}, {}), ({}, {"Last-Event-ID": "abc"})):
        response = client.get(
            f"/api/runs/{run_id}/events", params={"follow": "false", **params}, headers={**alice, **headers}
        )
        assert response.status_code == 422 and response.json()["error_code"] == "invalid_request"


# ---- live (a real server) ----------------------------------------------------------------------------------------


def _read_until(stream: Iterator[Frame], stop: Any) -> list[Frame]:
    """Frames up to the first that `stop` accepts. `stream` stays open (closing the generator would close the
    connection)."""
    got: list[Frame] = []
    for frame in stream:
        got.append(frame)
        if stop(frame):
            break
    return got


def _events(got: list[Frame]) -> list[Frame]:
    """The run's recorded events (numbered); drafts of a reply (`text_delta`, live only) have no id."""
    assert all(f.json["type"] == "text_delta" for f in got if f.event == "message" and f.id is None)
    return [f for f in got if f.event == "message" and f.id is not None]


def _drafts(got: list[Frame]) -> list[Frame]:
    return [f for f in got if f.event == "message" and f.id is None]


def test_live_events_and_reconnects_miss_nothing_and_repeat_nothing(tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path))
    with running_server(app) as base, httpx2.Client(base_url=base, timeout=20) as http:
        headers = {"Authorization": f"Bearer {http.post('/api/sessions').json()['token']}"}
        run_id = http.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()["id"]
        seen: list[Frame] = []

        def asked(kind: str) -> Any:
            return lambda f: f.event == "message" and f.json["type"] == "ask_opened" and f.json["kind"] == kind

        # 1. live from (nearly) the start, until the question; then the client goes away
        with http.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
            assert response.status_code == 200
            got = _read_until(frames(response.iter_lines()), asked("question"))
        assert any(f.event == "live" for f in got)
        seen += _events(got)
        ask_id = seen[-1].json["ask_id"]
        assert (
            http.post(f"/api/asks/{ask_id}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=headers).status_code
            == 200
        )

        # 2. it reconnects as EventSource does, with the last id it saw, and follows until the plan is staged
        with http.stream(
            "GET", f"/api/runs/{run_id}/events", headers={**headers, "Last-Event-ID": str(seen[-1].id)}
        ) as response:
            staging = _read_until(frames(response.iter_lines()), asked("plan"))
            seen += _events(staging)
        plan_ask = seen[-1].json["ask_id"]

        # 3. a second client watches live while the plan is approved; both follow to the end
        with http.stream(
            "GET", f"/api/runs/{run_id}/events", headers={**headers, "Last-Event-ID": str(seen[-1].id)}
        ) as response:
            lines = response.iter_lines()
            first = next(frames(lines))
            assert first.event == "live"  # nothing missed so far
            assert (
                http.post(f"/api/asks/{plan_ask}/answer", json={"decision": "approve"}, headers=headers).status_code
                == 200
            )
            rest = list(frames(lines))  # the server ends the stream after run_ended
        assert rest[-1].event == "end"
        # The staged reply streamed before it came whole (drafts, live only: never replayed).
        drafts = _drafts(got + staging + rest)
        assert drafts and all(f.json["run_id"] == run_id for f in drafts)
        seen += _events(rest)

        ids = [f.id for f in seen]
        assert ids == list(range(1, len(ids) + 1))  # no gap, no duplicate
        assert seen[-1].json["type"] == "run_ended" and seen[-1].json["status"] == "finished"
        full = http.get(f"/api/runs/{run_id}/events", params={"follow": "false"}, headers=headers)
        assert [f.data for f in _events(list(frames(iter(full.text.splitlines()))))] == [f.data for f in seen]


def test_idle_streams_get_heartbeats_and_a_client_that_leaves_is_forgotten(tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path), heartbeat_s=0.2)
    with running_server(app) as base, httpx2.Client(base_url=base, timeout=20) as http:
        headers = {"Authorization": f"Bearer {http.post('/api/sessions').json()['token']}"}
        run_id = http.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()["id"]
        wait_for(lambda: http.get("/api/asks", headers=headers).json(), what="the question")
        broker = app.state.broker
        with http.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
            stream = frames(response.iter_lines())
            got = _read_until(stream, lambda f: "ping" in f.comments)
            assert any(f.event == "live" for f in got)
            assert broker.clients == 1
            assert "ping" in next(stream).comments  # and again, while nothing happens
        wait_for(lambda: broker.clients == 0, what="the broker to forget the client")


def test_shutdown_ends_open_streams(tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path))
    ended = threading.Event()
    with httpx2.Client(timeout=30) as http:
        with running_server(app, graceful_s=60) as base:
            headers = {"Authorization": f"Bearer {http.post(base + '/api/sessions').json()['token']}"}
            run_id = http.post(base + "/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()["id"]
            wait_for(lambda: http.get(base + "/api/asks", headers=headers).json(), what="the question")

            def watch() -> None:
                with http.stream("GET", f"{base}/api/runs/{run_id}/events", headers=headers) as response:
                    for _ in response.iter_lines():
                        pass
                ended.set()

            threading.Thread(target=watch, daemon=True).start()
            wait_for(lambda: app.state.broker.clients == 1, what="the stream to open")
        # Leaving `running_server` stopped the server: it waits 15 s at most for that, and would have waited out the
        # 60 s grace period had the open stream held the connection. The stream ended cleanly, not cut off.
        assert ended.wait(timeout=5)
