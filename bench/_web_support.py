"""What the two web benchmarks share: a throwaway Consulta home with a minimal scripted flow, the real web server in
its own process, a small HTTP/1.1 client over asyncio streams, and the answer → first-event timing.

* The flow (scripted model, the LLM's test double): the run asks one `question` with options at once; after the
  answer the model replies with a short text and the run ends (no tools, no plan).
* The server is `python -m consulta serve ln2` — the command people run — on a free port, with `CONSULTA_HOME` set
  to a temporary directory (its store, and a copy of ln2's sample inventory made on first use).
* The client speaks HTTP/1.1 directly over `asyncio` streams: keep-alive JSON requests and `text/event-stream`
  responses (chunked). No HTTP library: a thousand idle streams then cost the client one socket and one small
  buffer each, and a timestamp is taken the moment the bytes are read, with nothing of a library's in between.
"""

from __future__ import annotations

import asyncio
import json
import os
import pstats
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

__all__ = [
    "ANSWER",
    "MB",
    "QUESTION_TIMEOUT_S",
    "RESUMED",
    "BenchHome",
    "Connection",
    "ConnectionPool",
    "EventStream",
    "PendingRun",
    "Server",
    "SseEvent",
    "Timing",
    "new_sessions",
    "open_live",
    "print_profile",
    "print_table",
    "profile_summary",
    "raise_open_files_limit",
    "start_pending_runs",
    "time_answer",
    "wait_for_calm",
]

QUESTION = {
    "header": "Cell Line",
    "question": "Which K562?",
    "options": ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"],
}
ANSWER = ["K562-dTAG-BRD4"]
SCRIPT = [{"tool_calls": [{"name": "question", "args": {"questions": [QUESTION]}}]}, {"text": "Noted: K562-dTAG-BRD4."}]
QUESTION_TIMEOUT_S = 86_400.0  # no question may time out while a benchmark holds it pending
RESUMED = "step_started"  # the first event that shows the run is going on: its next model step has started
MB = 1024 * 1024


def wait_for_calm(limit_s: float, *, below: float = 0.7) -> tuple[float, float]:
    """Wait up to `limit_s` for the 1-minute load average to drop below `below` (2 shared cores: any other busy
    process slows both sides); returns (load when called, load when done)."""
    first = os.getloadavg()[0]
    deadline = time.monotonic() + limit_s
    while os.getloadavg()[0] >= below and time.monotonic() < deadline:
        time.sleep(5)
    now = os.getloadavg()[0]
    if now >= below:
        print(
            f"note: 1-minute load average {now:.2f} (other work on the machine); the figures carry it", file=sys.stderr
        )
    return first, now


def print_table(headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(x).ljust(w) for x, w in zip(row, widths)))
    print()


def raise_open_files_limit() -> dict[str, int]:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (children inherit it): {soft_before, soft, hard}."""
    before, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return {"soft_before": before, "soft": soft, "hard": hard}


# ---- a throwaway home -------------------------------------------------------------------------------------------


class BenchHome:
    """A temporary directory with the model script; `home(name)` makes a fresh CONSULTA_HOME inside it."""

    def __init__(self, prefix: str) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.root = Path(self._tmp.name)
        self.script = self.root / "question_then_reply.json"  # JSON is YAML: the scripted model reads either
        self.script.write_text(json.dumps({"steps": SCRIPT}))

    @property
    def model(self) -> str:
        return f"scripted:{self.script}"

    def home(self, name: str) -> Path:
        path = self.root / name
        path.mkdir()
        return path

    def cleanup(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> BenchHome:
        return self

    def __exit__(self, *_: object) -> None:
        self.cleanup()


# ---- the server -------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`python -m consulta serve ln2` in its own process on a free port.

    With `profile`, the same command runs through this module's `__main__`, which adds two signal handlers to the
    server's main thread (its event loop): SIGUSR1 starts cProfile, SIGUSR2 stops it and writes `profile`. So a
    profile covers only the window the benchmark chooses (`profile_window`), not start-up or set-up."""

    def __init__(self, *, home: Path, model: str, profile: Path | None = None) -> None:
        self.home = home
        self.port = _free_port()
        self.log_path = home / "server.log"
        self.profile = profile
        entry = [str(Path(__file__).resolve()), "--profile-to", str(profile)] if profile else ["-m", "consulta"]
        self.command = [
            sys.executable,
            *entry,
            "serve",
            "ln2",
            "--port",
            str(self.port),
            "--model",
            model,
            "--timeout",
            str(QUESTION_TIMEOUT_S),
        ]
        env = {**os.environ, "CONSULTA_HOME": str(home), "CONSULTA_LANG": "en"}
        env.pop("CONSULTA_DATABASE_URL", None)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(self.command, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.proc.pid)

    async def ready(self, timeout: float = 60.0) -> None:
        """Wait until the server answers GET /api/app."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                conn = await Connection.open(self.port)
                try:
                    status, _ = await conn.request("GET", "/api/app")
                finally:
                    conn.close()
                if status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start within {timeout} s:\n{self.log_tail()}")
            await asyncio.sleep(0.2)

    def rss_mb(self) -> float:
        return self.ps.memory_info().rss / MB

    async def settled_rss_mb(self, *, seconds: float = 2.0, samples: int = 5) -> float:
        """The server's RSS after it has been left alone for `seconds` (the smallest of a few samples)."""
        await asyncio.sleep(seconds)
        values = []
        for _ in range(samples):
            values.append(self.rss_mb())
            await asyncio.sleep(0.1)
        return min(values)

    def open_files_limit(self) -> tuple[int, int]:
        return tuple(self.ps.rlimit(psutil.RLIMIT_NOFILE))  # type: ignore[return-value]

    def stats(self) -> dict[str, Any]:
        """RSS, threads, open file descriptors and CPU seconds of the server process, now."""
        cpu = self.ps.cpu_times()
        return {
            "rss_mb": self.rss_mb(),
            "threads": self.ps.num_threads(),
            "fds": self.ps.num_fds(),
            "cpu_s": cpu.user + cpu.system,
        }

    def log_tail(self, lines: int = 30) -> str:
        if not self._log.closed:
            self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def profile_start(self) -> None:
        if self.profile is None:
            raise RuntimeError("this server was not started with a profile path")
        self.profile.unlink(missing_ok=True)
        self.proc.send_signal(signal.SIGUSR1)

    def profile_stop(self, timeout: float = 30.0) -> Path:
        """Stop profiling; returns the profile file once the server has written it."""
        assert self.profile is not None
        self.proc.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + timeout
        while not self.profile.exists() or not self.profile.stat().st_size:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server wrote no profile within {timeout} s")
            time.sleep(0.1)
        time.sleep(0.2)  # let the write finish
        return self.profile

    def stop(self, timeout: float = 30.0) -> int:
        """SIGINT (uvicorn's graceful shutdown; cProfile writes its file), then SIGKILL after `timeout`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()
        return self.proc.returncode


# ---- a small HTTP/1.1 client ------------------------------------------------------------------------------------


def _request_bytes(
    method: str, path: str, *, token: str | None, body: Any = None, accept: str = "application/json"
) -> bytes:
    payload = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Accept: {accept}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if body is not None or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ", 2)[1])
    headers = {}
    for line in head[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def _read_chunk(reader: asyncio.StreamReader) -> bytes:
    """One chunk of a chunked body (b"" for the last one)."""
    size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
    data = await reader.readexactly(size + 2)
    return data[:-2]


class Connection:
    """One keep-alive connection for JSON requests, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.last_used = time.monotonic()

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def reopen_if_closed(self) -> None:
        """Reconnect if the server has closed, or may be about to close, this connection: uvicorn closes a keep-alive
        connection idle for 5 s, and a request written at that moment would be lost."""
        if self.reader.at_eof() or self.writer.is_closing() or time.monotonic() - self.last_used > 3.0:
            self.writer.close()
            fresh = await Connection.open(self.writer.get_extra_info("peername")[1])
            self.reader, self.writer = fresh.reader, fresh.writer

    def send(self, method: str, path: str, *, token: str | None = None, body: Any = None) -> None:
        """Write the request (the socket takes it at once; read the response with `response()`)."""
        self.writer.write(_request_bytes(method, path, token=token, body=body))

    async def response(self) -> tuple[int, Any]:
        status, headers = await _read_head(self.reader)
        self.last_used = time.monotonic()
        if "content-length" in headers:
            raw = await self.reader.readexactly(int(headers["content-length"]))
        else:  # chunked
            parts = []
            while chunk := await _read_chunk(self.reader):
                parts.append(chunk)
            raw = b"".join(parts)
        return status, json.loads(raw) if raw else None

    async def request(self, method: str, path: str, *, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        self.send(method, path, token=token, body=body)
        return await self.response()

    def close(self) -> None:
        self.writer.close()


class ConnectionPool:
    """A few keep-alive connections, for setting things up with some concurrency."""

    def __init__(self, conns: list[Connection]) -> None:
        self._free: asyncio.Queue[Connection] = asyncio.Queue()
        self.conns = conns
        for conn in conns:
            self._free.put_nowait(conn)

    @classmethod
    async def open(cls, port: int, size: int) -> ConnectionPool:
        return cls([await Connection.open(port) for _ in range(size)])

    async def request(
        self, method: str, path: str, *, token: str | None = None, body: Any = None, expect: int = 200
    ) -> Any:
        conn = await self._free.get()
        try:
            await conn.reopen_if_closed()
            status, data = await asyncio.wait_for(conn.request(method, path, token=token, body=body), 60)
        finally:
            self._free.put_nowait(conn)
        if status != expect:
            raise RuntimeError(f"{method} {path}: HTTP {status} (expected {expect}): {data}")
        return data

    def close(self) -> None:
        for conn in self.conns:
            conn.close()


@dataclass(frozen=True)
class SseEvent:
    name: str  # `message` for a run event, else `live`, `end`, `reset`
    data: dict[str, Any]
    at: float  # time.perf_counter() when its bytes were read

    @property
    def type(self) -> str:
        """The run event's type (`ask_closed`, `step_started`, …) or the control event's name."""
        return self.data.get("type", self.name) if self.name == "message" else self.name


@dataclass(eq=False)
class EventStream:
    """A run's event stream (GET /api/runs/{id}/events), read event by event."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    _buffer: bytes = b""
    _ready: list[SseEvent] = field(default_factory=list)
    pings: int = 0

    @classmethod
    async def open(cls, port: int, run_id: str, *, token: str) -> EventStream:
        """Connect and read the response head; the replay follows as events."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.write(_request_bytes("GET", f"/api/runs/{run_id}/events", token=token, accept="text/event-stream"))
        status, headers = await _read_head(reader)
        if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
            writer.close()
            raise RuntimeError(f"GET /api/runs/{run_id}/events: HTTP {status}")
        return cls(reader, writer)

    async def next(self) -> SseEvent:
        """The next event (comments such as `: ping` are counted, not returned); EOFError when the stream ends."""
        while not self._ready:
            chunk = await _read_chunk(self.reader)
            at = time.perf_counter()
            if not chunk:
                raise EOFError("the event stream ended")
            self._buffer += chunk
            *frames, self._buffer = self._buffer.split(b"\n\n")
            for frame in frames:
                self._parse(frame, at)
        return self._ready.pop(0)

    async def until(self, *types: str) -> list[SseEvent]:
        """Events up to and including the first of one of `types`."""
        seen = []
        while True:
            event = await self.next()
            seen.append(event)
            if event.type in types:
                return seen

    def _parse(self, frame: bytes, at: float) -> None:
        name, data = "message", []
        for line in frame.decode().split("\n"):
            if line.startswith(":"):
                self.pings += 1
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            self._ready.append(SseEvent(name, json.loads("\n".join(data)), at))

    def close(self) -> None:
        self.writer.close()


# ---- the flow: pending runs, and one answer timed ---------------------------------------------------------------


@dataclass(frozen=True)
class PendingRun:
    run_id: str
    ask_id: str
    token: str


async def start_pending_runs(
    pool: ConnectionPool, tokens: Iterable[str], *, batch: int, timeout: float
) -> list[PendingRun]:
    """Start one run per token (a token may repeat), `batch` at a time, and wait until each has its question open."""
    tokens = list(tokens)
    pending: list[PendingRun] = []
    for first in range(0, len(tokens), batch):
        group = tokens[first : first + batch]
        runs = await asyncio.gather(
            *(
                pool.request("POST", "/api/runs", token=tok, body={"prompt": f"bench {first + i}"}, expect=201)
                for i, tok in enumerate(group)
            )
        )
        pending.extend(
            await asyncio.gather(*(_question_of(pool, run["id"], tok, timeout) for run, tok in zip(runs, group)))
        )
    return pending


async def _question_of(pool: ConnectionPool, run_id: str, token: str, timeout: float) -> PendingRun:
    deadline = time.monotonic() + timeout
    while True:
        asks = await pool.request("GET", f"/api/asks?run_id={run_id}", token=token)
        if asks:
            return PendingRun(run_id=run_id, ask_id=asks[0]["id"], token=token)
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} asked nothing within {timeout} s")
        await asyncio.sleep(0.05)


@dataclass(frozen=True)
class Timing:
    """Seconds from just before the answer's POST is written."""

    first: float  # the first event of the run after the answer reached the client
    first_type: str
    resumed: float  # the `step_started` event reached the client: the run is going on
    response: float  # the POST's response was read
    finished: float  # `event: end` (the run ended, the stream closed)


async def time_answer(conn: Connection, stream: EventStream, run: PendingRun, *, timeout: float) -> Timing:
    """Answer `run`'s question over `conn` while `stream` (at `event: live`) is read; wait for the run to end."""
    await conn.reopen_if_closed()
    t0 = time.perf_counter()
    conn.send("POST", f"/api/asks/{run.ask_id}/answer", token=run.token, body={"answers": ANSWER})
    response = asyncio.ensure_future(_stamped(conn.response()))
    resumed = asyncio.ensure_future(stream.until(RESUMED))  # read at once, concurrently with the response
    try:
        async with asyncio.timeout(timeout):
            (status, body), t_response = await response
            if status != 200 or body.get("status") != "answered":
                raise RuntimeError(f"answer to {run.ask_id}: HTTP {status}: {body}")
            events = await resumed
            end = (await stream.until("end"))[-1]
    finally:
        for task in (response, resumed):
            task.cancel()
    return Timing(
        first=events[0].at - t0,
        first_type=events[0].type,
        resumed=events[-1].at - t0,
        response=t_response - t0,
        finished=end.at - t0,
    )


async def _stamped(coro: Any) -> tuple[Any, float]:
    result = await coro
    return result, time.perf_counter()


async def open_live(port: int, run: PendingRun, *, timeout: float) -> EventStream:
    """Open `run`'s event stream and read its replay up to `event: live` (what follows happens now)."""
    stream = await asyncio.wait_for(EventStream.open(port, run.run_id, token=run.token), timeout)
    try:
        replay = await asyncio.wait_for(stream.until("live"), timeout)
    except BaseException:
        stream.close()
        raise
    if not any(e.type == "ask_opened" for e in replay):
        stream.close()
        raise RuntimeError(f"run {run.run_id}: no ask_opened in the replay: {[e.type for e in replay]}")
    return stream


async def new_sessions(pool: ConnectionPool, n: int) -> list[str]:
    """`n` session tokens (POST /api/sessions)."""
    out = await asyncio.gather(*(pool.request("POST", "/api/sessions", expect=201) for _ in range(n)))
    return [o["token"] for o in out]


# ---- profiles ---------------------------------------------------------------------------------------------------


def _package(filename: str, name: str) -> str:
    """Which library a profiled function belongs to: `consulta.runtime`, `starlette`, `h11`, `sqlite3 (C)`, …"""
    if filename.startswith("~") or filename.startswith("<"):
        for lib in ("sqlite3", "socket", "epoll", "json", "pydantic_core"):
            if lib in name:
                return f"{lib} (C)"
        return "other C built-ins"
    parts = Path(filename).parts
    if "consulta" in parts:
        i = len(parts) - 1 - parts[::-1].index("consulta")
        sub = parts[i + 1] if i + 2 < len(parts) else Path(parts[-1]).stem
        return f"consulta.{sub}"
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].removesuffix(".py")
    return "stdlib " + (
        parts[-2] if parts[-2] in ("asyncio", "json", "logging", "sqlite3", "email", "http") else Path(parts[-1]).stem
    )


# Where an answer's server time goes: (label, file name, function name), cumulative time (nested ones overlap).
_STAGES = (
    ("HTTP in: uvicorn/h11 parsing the requests (data_received)", "h11_impl.py", "data_received"),
    ("ASGI app, every request (access log middleware and all inside it)", "_access_log.py", "__call__"),
    ("  FastAPI: dependencies and body validation (solve_dependencies)", "utils.py", "solve_dependencies"),
    ("  FastAPI: response validation and serialisation (serialize_response)", "routing.py", "serialize_response"),
    ("  POST answer route body (answer_ask)", "_api.py", "answer_ask"),
    ("    AppHost.answer", "_host.py", "answer"),
    ("    AppHost.ask (lookup and principal check)", "_host.py", "ask"),
    ("      Runtime.answer (validate, close the ask, emit ask_closed)", "_runtime.py", "answer"),
    ("  GET events route body (run_events: principal check, subscribe, replay)", "_api.py", "run_events"),
    ("  event stream response (EventStream.__call__: replay, live frames, end)", "_stream.py", "__call__"),
    ("HTTP out: uvicorn/h11 writing responses (RequestResponseCycle.send)", "h11_impl.py", "send"),
    ("broker: hearing and fanning out events (EventBroker._record)", "_stream.py", "_record"),
    ("the run's step after the answer (Runtime._continue)", "_runtime.py", "_continue"),
    ("logging (access log lines)", "__init__.py", "info"),
)


def profile_summary(path: Path, *, per_call: int, top: int = 15) -> dict[str, Any]:
    """Where the server's time went, from a cProfile file, in ms per `per_call` (answers profiled): own time by
    library, cumulative time of the stages of an answer, and the top functions."""
    stats = pstats.Stats(str(path))
    by_package: dict[str, float] = {}
    stages = dict.fromkeys((label for label, _, _ in _STAGES), 0.0)
    functions = []
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        package = _package(filename, name)
        by_package[package] = by_package.get(package, 0.0) + tottime
        functions.append((tottime, cumtime, ncalls, f"{package}: {Path(filename).name}:{line}({name})"))
        for label, file, function in _STAGES:
            if name == function and Path(filename).name == file and (file != "__init__.py" or "logging" in filename):
                stages[label] += cumtime
    total = sum(by_package.values())
    scale = 1000 / max(per_call, 1)
    return {
        "profiled_answers": per_call,
        "total_ms_per_answer": total * scale,
        "own_ms_per_answer_by_library": {
            k: round(v * scale, 3) for k, v in sorted(by_package.items(), key=lambda kv: -kv[1])
        },
        "cumulative_ms_per_answer_by_stage": {k: round(v * scale, 3) for k, v in stages.items()},
        "top_own": [
            {
                "function": f,
                "own_ms": round(t * scale, 3),
                "cum_ms": round(c * scale, 3),
                "calls_per_answer": round(n / max(per_call, 1), 1),
            }
            for t, c, n, f in sorted(functions, reverse=True)[:top]
        ],
        "top_cumulative": [
            {"function": f, "cum_ms": round(c * scale, 3), "own_ms": round(t * scale, 3)}
            for t, c, n, f in sorted(functions, key=lambda x: -x[1])[:top]
        ],
    }


def print_profile(profile: dict[str, Any]) -> None:
    print("  own time by library, ms per answer:")
    for name, ms in list(profile["own_ms_per_answer_by_library"].items())[:14]:
        print(f"    {ms:7.3f}  {name}")
    print("  stages (cumulative, nested ones are part of their parent), ms per answer:")
    for label, ms in profile["cumulative_ms_per_answer_by_stage"].items():
        print(f"    {ms:7.3f}  {label}")
    print("  top functions by own time, ms per answer:")
    for f in profile["top_own"][:10]:
        print(f"    {f['own_ms']:7.3f}  (cum {f['cum_ms']:.2f}, {f['calls_per_answer']} calls)  {f['function']}")


def _serve_profiled(argv: list[str]) -> None:
    """`python _web_support.py --profile-to FILE serve …`: the `consulta` command, with the profiling signals."""
    import cProfile

    out = Path(argv[1])
    profiler = cProfile.Profile()

    def start(*_: object) -> None:
        profiler.enable()

    def dump(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(str(out))

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, dump)
    from consulta.frontends.cli import main

    sys.argv = ["consulta", *argv[2:]]
    main()


if __name__ == "__main__":
    _serve_profiled(sys.argv[1:])
