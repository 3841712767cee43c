"""Two `consulta serve ln2` processes on one PostgreSQL store serve one app: a run started on A is watched and
answered on B; A is killed while the run waits on its plan, and the run continues on B — the thaw applied once,
audited once, and B's event stream whole (every number once, in order, none missing).

Killed A is either reaped at once (B sees its process is gone: a server on the same machine) or left a zombie, so
that B cannot tell from the process: once A's lease is stale, B adopts the run (as with a server on another machine)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sqlalchemy
import yaml

from frontends.web.conftest import AMBIGUOUS, wait_for  # tests/ is on the path: its folders are packages

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

CHOSEN = "K562-dTAG-BRD4"  # the script thaws record 9, position 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Server:
    """`consulta serve ln2` in a subprocess on a free port, its output in a log file."""

    def __init__(self, name: str, env: dict[str, str], logs: Path) -> None:
        self.name = name
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = logs / f"server-{name}.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "consulta", "serve", "ln2", "--port", str(self.port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.http = httpx2.Client(base_url=self.base, timeout=10)

    def wait_up(self, *, timeout: float = 90) -> None:
        def up() -> bool:
            try:
                return self.http.get("/api/app").status_code == 200
            except httpx2.TransportError:
                assert self.process.poll() is None, f"server {self.name} exited:\n{self.log.read_text()}"
                return False

        wait_for(up, timeout=timeout, what=f"server {self.name} to answer")

    def kill(self, *, reap: bool) -> None:
        """SIGKILL: nothing of it runs on, nothing is flushed or released. Unreaped, its pid still answers (a zombie)
        until `close`, so only its lease's heartbeat tells others it is gone."""
        self.process.send_signal(signal.SIGKILL)
        if reap:
            self.process.wait(timeout=10)

        def gone() -> bool:
            try:
                self.http.get("/api/app", timeout=1)
            except httpx2.TransportError:
                return True
            return False

        wait_for(gone, timeout=10, what=f"server {self.name} to stop answering")

    def close(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class _Watcher:
    """Reads a run's event stream on one server in a thread: the events (`id`/`data` frames) and whether `end` came."""

    def __init__(self, server: _Server, run_id: str, headers: dict[str, str]) -> None:
        self.events: list[dict[str, Any]] = []
        self.ended = False
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        url = f"{server.base}/api/runs/{run_id}/events"
        self._thread = threading.Thread(target=self._read, args=(url, headers), daemon=True)
        self._thread.start()

    def _read(self, url: str, headers: dict[str, str]) -> None:
        try:
            # read timeout: longer than the stream's heartbeat (15 s), so only a dead stream times out
            with httpx2.stream("GET", url, headers=headers, timeout=httpx2.Timeout(10, read=40)) as response:
                assert response.status_code == 200
                kind = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        kind = line.removeprefix("event: ")
                    elif line.startswith("data: ") and kind is None:
                        with self._lock:
                            self.events.append(json.loads(line.removeprefix("data: ")))
                    elif line == "":
                        if kind == "end":
                            self.ended = True
                            return
                        kind = None
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error

    def seen(self, predicate: Callable[[dict[str, Any]], bool]) -> bool:
        with self._lock:
            return any(predicate(event) for event in self.events)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the event stream did not end"


@dataclass
class _Two:
    a: _Server
    b: _Server
    home: Path
    database_url: str

    def owner(self, run_id: str) -> str | None:
        """Who holds the run's lease, as the store says."""
        engine = sqlalchemy.create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                return conn.execute(
                    sqlalchemy.text("SELECT owner FROM runs WHERE id = :id"), {"id": run_id}
                ).scalar_one()
        finally:
            engine.dispose()


@pytest.fixture
def two_servers(postgres_server: Any, tmp_path: Path) -> Iterator[_Two]:
    home = tmp_path / "home"
    home.mkdir()
    database_url = postgres_server.new_database()
    with resources.as_file(
        resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
    ) as script:
        env = {
            **os.environ,
            "CONSULTA_HOME": str(home),
            "CONSULTA_DATABASE_URL": database_url,
            "CONSULTA_MODEL": f"scripted:{script}",
            "CONSULTA_LANG": "en",
            "PYTHONUNBUFFERED": "1",
        }
        servers: list[_Server] = []
        try:
            servers = [
                _Server("A", env, tmp_path),
                _Server("B", env, tmp_path),
            ]  # started together: one store, one home
            for server in servers:
                server.wait_up()
            yield _Two(servers[0], servers[1], home, database_url)
        finally:
            for server in servers:
                server.close()


@pytest.mark.parametrize("reap", [True, False], ids=["holder-reaped", "holder-unreachable"])
def test_a_run_started_on_one_server_is_watched_answered_and_finished_on_the_other(
    two_servers: _Two, reap: bool
) -> None:
    a, b, home = two_servers.a, two_servers.b, two_servers.home
    token = a.http.post("/api/sessions").json()["token"]
    headers = {"Authorization": f"Bearer {token}"}
    assert b.http.get("/api/runs", headers=headers).status_code == 200  # a session minted on A holds on B

    run = a.http.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()
    assert b.http.get(f"/api/runs/{run['id']}", headers=headers).json()["id"] == run["id"]

    def pending(kind: str) -> dict[str, Any] | None:
        asks = b.http.get("/api/asks", headers=headers, params={"run_id": run["id"]}).json()
        return next((ask for ask in asks if ask["kind"] == kind), None)

    watcher = _Watcher(b, run["id"], headers)
    question = wait_for(lambda: pending("question"), timeout=30, what="the question, on B")
    wait_for(
        lambda: watcher.seen(lambda e: e["type"] == "ask_opened" and e["ask_id"] == question["id"]),
        timeout=15,
        what="B's stream to show the question",
    )

    answered = b.http.post(f"/api/asks/{question['id']}/answer", json={"answers": [CHOSEN]}, headers=headers)
    assert answered.status_code == 200, answered.text

    plan = wait_for(lambda: pending("plan"), timeout=30, what="the plan (A continues the run after B's answer)")
    wait_for(
        lambda: watcher.seen(lambda e: e["type"] == "ask_opened" and e["ask_id"] == plan["id"]),
        timeout=15,
        what="B's stream to show A's later events",
    )

    assert f":{a.process.pid}:" in (two_servers.owner(run["id"]) or "")  # A carried the run on after B's answer
    a.kill(reap=reap)  # the run's holder dies while its plan waits
    approved = b.http.post(f"/api/asks/{plan['id']}/answer", json={"decision": "approve"}, headers=headers)
    assert approved.status_code == 200, approved.text

    finished = wait_for(
        lambda: (
            (r := b.http.get(f"/api/runs/{run['id']}", headers=headers).json())["status"]
            in ("finished", "failed", "cancelled")
            and r
        ),
        timeout=45,
        what="the run to end on B (A's lease goes stale in 15 s; B looks every 5 s)",
    )
    assert finished["status"] == "finished", finished
    watcher.join(timeout=30)
    assert watcher.error is None, watcher.error
    assert watcher.ended

    # The thaw is applied once and audited once.
    inventory = home / "apps" / "ln2" / "inventory.yaml"
    record = next(r for r in yaml.safe_load(inventory.read_text())["inventory"] if r["id"] == 9)
    assert record["positions"] == [2, 3]
    assert [event["positions"] for event in record["thaw_events"]] == [[4], [1]]
    audit = [
        json.loads(line)
        for line in (inventory.parent / "inventory.yaml.audit.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert [(entry["run_id"], entry["op"]) for entry in audit] == [(run["id"], "record_thaw")], audit

    # B's stream: every event once, in order, none missing; the run resumed on B and ended there.
    seqs = [event["seq"] for event in watcher.events]
    assert seqs == list(range(1, len(seqs) + 1)), seqs
    types = [event["type"] for event in watcher.events]
    assert types[0] == "run_started" and types[-1] == "run_ended"
    assert types.count("ask_opened") == 2 and types.count("ask_closed") == 2
    assert types.count("plan_staged") == 1 and types.count("plan_decided") == 1
    assert [e.get("resumed") for e in watcher.events if e["type"] == "run_started"] == [False, True]
    assert watcher.events[-1]["status"] == "finished"
    recorded = b.http.get(f"/api/runs/{run['id']}/events", headers=headers, params={"follow": False})
    assert [line for line in recorded.text.splitlines() if line.startswith("id: ")] == [f"id: {seq}" for seq in seqs]
