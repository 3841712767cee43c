"""`openai:NAME` against a real OpenAI-compatible server: llama.cpp's own (the `server` extra) serving the embedded
GGUF, started by `python -m consulta.models.openai_server` in its default chat format (`_openai_server_format`). One
ln2 look-up and one tutor turn through the CLI: each is a conversation with tool calls and their results, which the
server takes once the backend sends tool-call turns with empty text (`_tool_choice_fallback`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from consulta.config import Settings
from consulta.models._gguf import ensure_default_gguf

# a turn on 2 busy cores can take minutes (the tutor's ran 189 s to past 600 s): a long pass, outside the README's
# test command, which must stay within 15 min; `scripts/test --thorough` runs it
pytestmark = [pytest.mark.model, pytest.mark.subprocess, pytest.mark.backend_long, pytest.mark.timeout(900)]
pytest.importorskip("starlette_context", reason="llama.cpp's server needs the `server` extra")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    gguf = ensure_default_gguf(Settings.from_env().models_dir)
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [sys.executable, "-m", "consulta.models.openai_server", "--model", str(gguf)]
    command += ["--n_ctx", "8192", "--host", "127.0.0.1"]
    with log.open("wb") as out:
        server = subprocess.Popen([*command, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                pytest.fail(f"the server exited ({server.returncode}): {log.read_text(errors='replace')[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the server did not answer within 180 s")
                time.sleep(1)
        yield url
    finally:
        server.terminate()  # uvicorn waits for a request still running: killed after 30 s
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def _chat(base_url: str, home: Path, app: str, prompt: str) -> subprocess.CompletedProcess[str]:
    # llama-cpp-python's chatml-function-calling streams no tool calls: whole responses
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "not-needed", "CONSULTA_HOME": str(home)}
    env["OPENAI_STREAM"] = "0"
    command = [sys.executable, "-m", "consulta", "chat", app, "--model", "openai:embedded", "-p", prompt]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize(
    ("app", "prompt"),
    [
        # (both were marked xfail until stop 43: the ln2 turn's exit was a context window outgrown (stop 42), the
        # tutor's endless turn this server's empty replies under tool_choice "auto"; both passed in 74.6 s in all)
        ("ln2", "Do we have any HeLa cells left?"),
        ("tutor", "What is a derivative?"),
    ],
)
def test_a_turn_through_llama_cpps_server(base_url: str, tmp_path: Path, app: str, prompt: str) -> None:
    done = _chat(base_url, tmp_path, app, prompt)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    if app == "ln2":  # the reply is about what the look-up returned (the sample holds HeLa tubes)
        assert "hela" in done.stdout.lower(), done.stdout
