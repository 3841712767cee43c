"""The evaluations' web front end (`--via web`): a real `python -m consulta serve APP` on a free loopback port, with
the case's own `CONSULTA_HOME`, driven through the page's JSON API as the page drives it: a session minted
(`POST /api/sessions`), a run started (`POST /api/runs`, follow-ups with `continue_from`), its events read from
`GET /api/runs/{id}/events` (SSE) until the run ends, hands over (then the next run is followed) or waits on an ask
(the question the person sees: the `--ask-policy defer` equivalent stops there).

What the page renders as the assistant's words (`model_text`: chat.js draws its `text` as the reply bubble; an ask's
questions as the question card) is checked with the runtime's own detector of words meant for the model
(`consulta.runtime.model_words`), against the facts the stream carries: the tools called and the codes, hints and
next steps they returned, the reasons the reply checks gave the model. (The agent's instructions are not in the
stream: words of them said back are not found here.)

Only `requests` and the standard library: the server is started and stopped here (bounded waits, killed on exit)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from consulta.runtime import ToolOutcome, TurnFacts, model_words

ROOT = Path(__file__).resolve().parent.parent
_UP_TIMEOUT_S = 120.0
"""How long the server may take to answer (Python's start-up, the app's, the model's load)."""
_STOP_TIMEOUT_S = 15.0


def _pythonpath() -> str:
    """This checkout's source first: the server runs the code the evaluation sits next to."""
    return os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Turn:
    """One turn as the page saw it: its runs (a hand-over's next run included), their events, and how it stopped."""

    runs: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    waiting: bool = False
    """It stopped at an open ask (a question or a plan waiting on the person)."""
    status: str | None = None
    """The last run's end status (None while it waits, or when the stream was cut)."""
    failed: str | None = None
    ended_at: list[float] = field(default_factory=list)
    """When each of its runs' `run_ended` came (time.perf_counter)."""


class WebServer:
    """`python -m consulta serve APP --port P` under `home`, its output in `home/server.log`; a context manager."""

    def __init__(self, app: str, *, home: Path, env: dict[str, str], args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = home / "server.log"
        self.http = requests.Session()
        self.token: str | None = None
        argv = [sys.executable, "-m", "consulta", "serve", app, "--port", str(self.port), *args]
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                argv,
                env={**os.environ, **env, "CONSULTA_HOME": str(home), "PYTHONPATH": _pythonpath()},
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=home,
                start_new_session=True,  # its own process group: stopped with everything it started
            )

    def __enter__(self) -> WebServer:
        try:
            self._wait_up()
            self.token = self.post("/api/sessions").json()["token"]
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _wait_up(self) -> None:
        deadline = time.monotonic() + _UP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}): {self._log_tail()}")
            try:
                if self.http.get(f"{self.base}/api/app", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within {_UP_TIMEOUT_S:.0f} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:])
        except OSError:
            return ""

    def close(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGINT)
                self.process.wait(timeout=_STOP_TIMEOUT_S)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=_STOP_TIMEOUT_S)

    # ---- the API ------------------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        response = self.http.post(f"{self.base}{path}", headers=self._headers(), timeout=30, **kwargs)
        if response.status_code >= 400:
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:300]}")
        return response

    def upload(self, name: str, content: str | bytes) -> dict[str, Any]:
        """One file into this session's uploads (the tutor's `POST /api/tutor/uploads`)."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        result: dict[str, Any] = self.post("/api/tutor/uploads", files={"file": (name, data)}).json()
        return result

    def turn(self, prompt: str, *, lang: str, continue_from: str | None = None, timeout: float) -> Turn:
        """Start a run and follow it (and any run it hands over to) until it ends or waits on an ask."""
        turn = Turn()
        deadline = time.monotonic() + timeout
        body: dict[str, Any] = {"prompt": prompt, "lang": lang}
        if continue_from is not None:
            body["continue_from"] = continue_from
        run_id: str | None = self.post("/api/runs", json=body).json()["id"]
        while run_id is not None:
            turn.runs.append(run_id)
            next_run: str | None = None
            try:
                for event in self._events(run_id, deadline):
                    turn.events.append(event)
                    if event["type"] == "ask_opened":
                        turn.waiting = True
                        return turn
                    if event["type"] == "run_ended":
                        turn.ended_at.append(time.perf_counter())
                        turn.status = event.get("status")
                        if event.get("status") == "failed":
                            turn.failed = str(event.get("error"))[:200]
                    elif event["type"] == "handed_over":
                        next_run = event.get("next_run_id")
            except (requests.RequestException, TimeoutError) as error:
                turn.failed = f"{type(error).__name__}: {error}"
                self._stop(run_id)
                return turn
            run_id = next_run
        return turn

    def _stop(self, run_id: str) -> None:
        try:
            self.http.post(f"{self.base}/api/runs/{run_id}/stop", headers=self._headers(), timeout=10)
        except requests.RequestException:
            pass

    def _events(self, run_id: str, deadline: float) -> Iterator[dict[str, Any]]:
        """The run's events from its SSE stream, until `event: end`; TimeoutError past the deadline (checked at
        each line: the stream's pings come every few seconds)."""
        url = f"{self.base}/api/runs/{run_id}/events"
        with self.http.get(url, headers=self._headers(), stream=True, timeout=(5, 60)) as response:
            response.raise_for_status()
            name, data = "message", []
            for raw in response.iter_lines(decode_unicode=True):
                if time.monotonic() > deadline:
                    raise TimeoutError("the turn's time ran out")
                line = raw if isinstance(raw, str) else raw.decode("utf-8")
                if not line:  # a frame ends
                    if name == "end":
                        return
                    if name == "message" and data:
                        yield json.loads("\n".join(data))
                    name, data = "message", []
                elif line.startswith(":"):
                    continue
                elif line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))


# ---- what the person reads ------------------------------------------------------------------------------------------


def shown_words(events: list[dict[str, Any]]) -> list[str]:
    """What the page shows as the assistant's words: each `model_text` (the reply bubble) and each question of an
    opened question ask (the question card)."""
    shown: list[str] = []
    for event in events:
        if event["type"] == "model_text" and event.get("text"):
            shown.append(str(event["text"]))
        elif event["type"] == "ask_opened" and event.get("kind") == "question":
            for q in (event.get("payload") or {}).get("questions") or []:
                if isinstance(q, dict) and q.get("question"):
                    shown.append(str(q["question"]))
    return shown


def _facts(events: list[dict[str, Any]], *, prompt: str, lang: str) -> TurnFacts:
    """The turn's facts as far as its event stream carries them, for `model_words`."""
    calls: list[ToolOutcome] = []
    meant: list[str] = []
    for event in events:
        if event["type"] == "tool_returned":
            result = event.get("result") if isinstance(event.get("result"), dict) else {}
            hint = " ".join(str(result[k]) for k in ("_hint", "next_step") if result.get(k)) or None
            calls.append(
                ToolOutcome(
                    name=str(event.get("tool_name")),
                    kind="other",
                    ok=bool(event.get("ok")) and result.get("ok") is not False,
                    error_code=result.get("error_code"),
                    message=result.get("message"),
                    hint=hint,
                )
            )
            if hint:
                meant.append(hint)
        elif event["type"] == "reply_checked" and event.get("reason"):
            meant.append(str(event["reason"]))
    names = tuple(sorted({str(e.get("tool_name")) for e in events if e["type"] == "tool_called"}))
    return TurnFacts(lang=lang, prompt=prompt, calls=tuple(calls), model_meant=tuple(meant), tool_names=names)


def model_words_shown(events: list[dict[str, Any]], *, prompt: str, lang: str) -> list[str]:
    """The words meant for the model the page showed the person in this turn: one entry per shown text that holds
    any (the runtime's `model_words` on it)."""
    facts = _facts(events, prompt=prompt, lang=lang)
    return [found for text in shown_words(events) if (found := model_words(text, facts)) is not None]
