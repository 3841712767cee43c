"""Shared set-up of the web tests: settings on a temp home with the scripted model, a TestClient with the app's
lifespan, sessions, bounded waits, and a real uvicorn server on a free port (in a thread) for streams and browsers."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from consulta.config import Settings
from consulta.frontends.web import WebServer, create_app

SCRIPTS = resources.files("consulta.apps.ln2").joinpath("data", "scripts")
AMBIGUOUS = "帮我取一管K562"
T = TypeVar("T")


def settings_for(home: Path, script: Path | None = None, *, lang: str = "en") -> Settings:
    if script is None:
        with resources.as_file(SCRIPTS.joinpath("ambiguous_thaw.yaml")) as path:
            script = Path(path)
    return Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang=lang)


def inventory_path(home: Path) -> Path:
    return home / "apps" / "ln2" / "inventory.yaml"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wait_for(check: Callable[[], T | None], *, timeout: float = 10.0, what: str = "the condition") -> T:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def new_session(client: Any) -> dict[str, str]:
    response = client.post("/api/sessions")
    assert response.status_code == 201
    return {"Authorization": f"Bearer {response.json()['token']}"}


def pending_ask(client: Any, headers: dict[str, str], *, kind: str, run_id: str | None = None) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        params = {"run_id": run_id} if run_id else {}
        asks = client.get("/api/asks", headers=headers, params=params).json()
        return next((a for a in asks if a["kind"] == kind), None)

    return wait_for(find, what=f"a pending {kind}")


def rollback(client: Any, headers: dict[str, str], audit_id: str, *, decision: str = "approve") -> dict[str, Any]:
    """Roll back as a person does: stage it (202, nothing written), then decide its plan's ask; returns the staged
    proposal once its run has ended."""
    staged = client.post(f"/api/ln2/audit/{audit_id}/rollback", headers=headers)
    assert staged.status_code == 202, staged.text
    proposal = staged.json()
    answered = client.post(f"/api/asks/{proposal['ask_id']}/answer", json={"decision": decision}, headers=headers)
    assert answered.status_code == 200, answered.text
    run_status(client, headers, proposal["run_id"], "finished")
    return proposal


def run_status(client: Any, headers: dict[str, str], run_id: str, *statuses: str) -> dict[str, Any]:
    return wait_for(
        lambda: (r := client.get(f"/api/runs/{run_id}", headers=headers).json())["status"] in statuses and r,
        what=f"run {run_id} to be {' or '.join(statuses)}",
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(app="ln2", settings=settings_for(home))) as test_client:
        yield test_client


@pytest.fixture
def alice(client: TestClient) -> dict[str, str]:
    return new_session(client)


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def running_server(app: FastAPI, *, graceful_s: float = 2) -> Iterator[str]:
    """Serve `app` with uvicorn on a free port in a thread; yield its base URL; stop it (within 15 s) afterwards."""
    sock = free_socket()
    server = WebServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=graceful_s))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, timeout=20, what="the server to start")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"
