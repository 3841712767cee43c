"""`consulta serve ln2` as a user runs it: a subprocess on a free port, the scripted model, one log line per
request and never a token in the log; Ctrl-C stops it even with an event stream open."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path

import httpx2
import pytest

from .conftest import AMBIGUOUS, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_consulta_serve_logs_each_request_without_secrets_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with resources.as_file(
        resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
    ) as script:
        env = {**os.environ, "CONSULTA_HOME": str(tmp_path), "CONSULTA_LANG": "zh-CN", "PYTHONUNBUFFERED": "1"}
        env.pop("CONSULTA_DATABASE_URL", None)
        server = subprocess.Popen(
            # the request log is opt-in (--access-log); what it logs must never carry a secret
            [
                *(sys.executable, "-m", "consulta", "serve", "ln2", "--port", str(port)),
                *("--model", f"scripted:{script}", "--access-log"),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    log: list[str] = []
    reader = threading.Thread(target=lambda: log.extend(server.stdout or []), daemon=True)
    reader.start()
    try:
        with httpx2.Client(base_url=base, timeout=10) as http:

            def up() -> bool:
                try:
                    return http.get("/api/app").status_code == 200
                except httpx2.TransportError:
                    assert server.poll() is None, "the server exited"
                    return False

            wait_for(up, timeout=90, what="the server to answer")
            assert http.get("/api/app").json() == {
                "app": "ln2",
                "main_agent": "assistant",
                "default_lang": "zh-CN",
                "languages": ["en", "zh-CN"],
                "question_timeout_s": 300.0,
            }
            page = http.get("/")
            cookie = page.cookies["consulta_session"]
            token = http.post("/api/sessions").json()["token"]
            headers = {"Authorization": f"Bearer {token}"}
            run = http.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers).json()
            wait_for(lambda: http.get("/api/asks", headers=headers).json(), what="the question")
            assert http.get("/api/runs", headers={"Cookie": f"consulta_session={cookie}"}).json() == []

            opened = threading.Event()

            def follow() -> None:
                with httpx2.stream(
                    "GET", f"{base}/api/runs/{run['id']}/events", headers=headers, timeout=30
                ) as response:
                    opened.set()
                    for _ in response.iter_lines():
                        pass

            threading.Thread(target=follow, daemon=True).start()
            assert opened.wait(timeout=10)
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) in (0, 130, -signal.SIGINT)  # uvicorn re-raises Ctrl-C once it has shut down
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
        reader.join(timeout=10)

    text = "".join(log)
    assert token not in text and cookie not in text and "Bearer" not in text
    requests = [line for line in log if " /api/" in line or "GET / " in line]
    assert any("GET /api/app 200" in line for line in requests)
    assert any("POST /api/runs 201" in line for line in requests)
    assert any(f"GET /api/runs/{run['id']}/events 200" in line for line in requests)  # logged when the stream ended
    assert sum("POST /api/sessions 201" in line for line in requests) == 1
    assert not any("?" in line for line in requests)  # no query strings
