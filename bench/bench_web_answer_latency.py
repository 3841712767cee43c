"""Answer → run resumes → first event at the client: the web front end against the Python API in one process.

* **web** — the real server (`python -m consulta serve ln2`, uvicorn) in its own process on a free port; this
  process is the client (raw HTTP/1.1 over asyncio streams, see `_web_support`). For each answer it opens the run's
  event stream (GET /api/runs/{id}/events) and reads the replay up to `event: live`; then, timed: the answer's
  POST /api/asks/{id}/answer is written on a keep-alive connection, and the clock stops when the run's
  `step_started` event arrives on the stream — the run has resumed and its next model step has begun. (The first
  event after an answer is `ask_closed`, sent while the answer is being handled, before the run goes on: it is
  reported too.) The next answer is given only once the run has ended (`event: end`).
* **direct** (baseline) — the same flow through the Python API, in one child process: `AppHost.answer(...)` →
  the same `step_started` event delivered to an `AppHost.subscribe` listener; the next answer once the run settled.

Both sides serve the same app (ln2) with the same scripted model (question with options → after the answer a short
reply; no tools, no plan), a fresh CONSULTA_HOME each with a copy of ln2's sample inventory, `ask_policy` "wait".
Every timed run was started before the timing and is pending; answers go one at a time (latency, not throughput).
After a warm-up on each side, the sides alternate in blocks (`--block`), so a change of load on the shared machine
falls on both.

Target (issue 3): the web path adds ≤ 10 ms at p99 (web p99 − direct p99).

    .venv/bin/python bench/bench_web_answer_latency.py                  # 1,000 answers per side
    .venv/bin/python bench/bench_web_answer_latency.py --answers 100    # quick check (< 1 min)
    .venv/bin/python bench/bench_web_answer_latency.py --profile 200    # then 200 more web answers under cProfile
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from _web_support import (  # noqa: E402
    ANSWER,
    QUESTION_TIMEOUT_S,
    RESUMED,
    BenchHome,
    Connection,
    ConnectionPool,
    Server,
    Timing,
    new_sessions,
    open_live,
    print_profile,
    print_table,
    profile_summary,
    raise_open_files_limit,
    start_pending_runs,
    time_answer,
    wait_for_calm,
)
from bench_pending_questions import latency_summary  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TARGET_ADDED_P99_MS = 10.0
PRINCIPAL = "bench"


# ---- direct side: the Python API, in a child process driven over stdin/stdout --------------------------------


async def direct_side(args: argparse.Namespace) -> None:
    """Start the runs, say `ready`; then for each line `K` on stdin answer the next K runs and print their timings
    (JSON); end at `quit` or when stdin closes (the parent is gone)."""
    from consulta.config import Settings
    from consulta.frontends import AppHost
    from consulta.runtime import AskOpened, RunStatus

    home = Path(args.home)
    settings = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=args.model, lang="en")
    host = AppHost(app="ln2", settings=settings, options={"question_timeout": QUESTION_TIMEOUT_S})
    loop = asyncio.get_running_loop()
    asks: dict[str, str] = {}  # run id -> ask id, in the order the asks opened
    watched: dict[str, Any] = {"run_id": None, "first": None, "resumed": None}

    def hear(event: Any) -> None:
        now = time.perf_counter()
        if isinstance(event, AskOpened):
            asks[event.run_id] = event.ask_id
        elif event.run_id == watched["run_id"]:
            if watched["first"] is None:
                watched["first"] = (now, event.type)
            if event.type == RESUMED and not watched["resumed"].done():
                watched["resumed"].set_result(now)

    host.subscribe(hear)

    async def answer(run_id: str) -> Timing:
        watched.update(run_id=run_id, first=None, resumed=loop.create_future())
        t0 = time.perf_counter()
        await host.answer(asks[run_id], ANSWER, principal=PRINCIPAL)
        t_returned = time.perf_counter()
        async with asyncio.timeout(args.timeout):
            t_resumed = await watched["resumed"]
            run = await host.runtime.settled(run_id)
        t_end = time.perf_counter()
        if run.status != RunStatus.finished:
            raise RuntimeError(f"run {run_id} ended {run.status}: {run.error}")
        first_at, first_type = watched["first"]
        return Timing(
            first=first_at - t0,
            first_type=first_type,
            resumed=t_resumed - t0,
            response=t_returned - t0,
            finished=t_end - t0,
        )

    try:
        for first in range(0, args.runs, args.start_batch):
            for i in range(first, min(first + args.start_batch, args.runs)):
                await host.start(f"bench {i}", principal=PRINCIPAL)
            deadline = loop.time() + args.timeout
            while len(asks) < min(first + args.start_batch, args.runs):
                if loop.time() > deadline:
                    raise RuntimeError(f"only {len(asks)} of the runs asked their question within {args.timeout} s")
                await asyncio.sleep(0.01)
        order = iter(list(asks))
        print("ready", flush=True)
        while (line := (await loop.run_in_executor(None, sys.stdin.readline)).strip()) not in ("", "quit"):
            timings = [await answer(next(order)) for _ in range(int(line))]
            print(json.dumps([dataclasses.asdict(t) for t in timings]), flush=True)
    finally:
        await host.aclose()


class DirectChild:
    """The direct side's process, seen from the parent."""

    def __init__(self, args: argparse.Namespace, home: Path, model: str) -> None:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--_direct",
            "--home",
            str(home),
            "--model",
            model,
            "--runs",
            str(args.answers + args.warmup),
            "--start-batch",
            str(args.start_batch),
            "--timeout",
            str(args.timeout),
        ]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _line(self) -> str:
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError(f"the direct side exited with {self.proc.wait()}")
        return line

    def ready(self) -> None:
        if self._line().strip() != "ready":
            raise RuntimeError("the direct side did not start")

    def answer(self, n: int) -> list[Timing]:
        self.proc.stdin.write(f"{n}\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return [Timing(**t) for t in json.loads(self._line())]

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
                self.proc.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


# ---- the parent: the web client, and the comparison ----------------------------------------------------------


class WebSide:
    def __init__(self, server: Server, conn: Connection, runs: list[Any], timeout: float) -> None:
        self.server, self.conn, self.runs, self.timeout = server, conn, iter(runs), timeout

    async def answer(self, n: int) -> list[Timing]:
        timings = []
        for _ in range(n):
            run = next(self.runs)
            stream = await open_live(self.server.port, run, timeout=self.timeout)
            try:
                timings.append(await time_answer(self.conn, stream, run, timeout=self.timeout))
            finally:
                stream.close()
        return timings


def summary(timings: list[Timing]) -> dict[str, Any]:
    firsts = sorted({t.first_type for t in timings})
    return {
        "answer_to_resumed": latency_summary([t.resumed for t in timings]),
        "answer_to_first_event": latency_summary([t.first for t in timings]),
        "first_event_types": firsts,
        "answer_to_response": latency_summary([t.response for t in timings]),
        "answer_to_run_ended": latency_summary([t.finished for t in timings]),
        "answer_to_resumed_in_order_ms": [round(t.resumed * 1000, 2) for t in timings],
    }


async def parent(args: argparse.Namespace) -> dict[str, Any]:
    source = source_version()
    nofile = raise_open_files_limit()
    load_wait = wait_for_calm(args.wait_calm)
    load_before = os.getloadavg()
    with BenchHome("consulta-bench-web-latency-") as bench:
        server = Server(
            home=bench.home("web"), model=bench.model, profile=bench.root / "server.prof" if args.profile else None
        )
        direct = DirectChild(args, bench.home("direct"), bench.model)
        pool = None
        try:
            await server.ready()
            pool = await ConnectionPool.open(server.port, 4)
            (token,) = await new_sessions(pool, 1)
            t_setup = time.perf_counter()
            runs = await start_pending_runs(
                pool,
                [token] * (args.answers + args.warmup + args.profile),
                batch=args.start_batch,
                timeout=args.timeout,
            )
            setup_s = time.perf_counter() - t_setup
            await asyncio.get_running_loop().run_in_executor(None, direct.ready)
            web = WebSide(server, await Connection.open(server.port), runs, args.timeout)

            await web.answer(args.warmup)
            direct.answer(args.warmup)
            server_before = server.stats()
            web_t: list[Timing] = []
            direct_t: list[Timing] = []
            t_phase = time.perf_counter()
            while len(web_t) < args.answers:
                n = min(args.block, args.answers - len(web_t))
                web_t += await web.answer(n)
                direct_t += direct.answer(n)
                print(f"  {len(web_t)}/{args.answers} answers per side", flush=True)
            phase_s = time.perf_counter() - t_phase
            server_after = server.stats()

            profile = None
            if args.profile:
                server.profile_start()
                profiled = await web.answer(args.profile)
                kept = shutil.copyfile(server.profile_stop(), Path(tempfile.gettempdir()) / "web_answer_latency.prof")
                profile = {
                    **profile_summary(kept, per_call=args.profile),
                    "file": str(kept),
                    "latency_under_profile": summary(profiled)["answer_to_resumed"],
                }
        finally:
            if pool is not None:
                pool.close()
            direct.stop()
            server.stop()
        load_after = os.getloadavg()
        return {
            "benchmark": "web_answer_latency",
            "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "source": source,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "args": {k: v for k, v in vars(args).items() if not k.startswith("_")},
            "load_average": {
                "waited_from": round(load_wait[0], 2),
                "before": [round(x, 2) for x in load_before],
                "after": [round(x, 2) for x in load_after],
            },
            "open_files_limit": {"client": nofile},
            "server": {
                "command": " ".join(server.command[1:]),
                "pending_runs_at_start": len(runs),
                "setup_s": setup_s,
                "before_timing": server_before,
                "after_timing": server_after,
                "cpu_s_per_answer": (server_after["cpu_s"] - server_before["cpu_s"]) / args.answers,
            },
            "timed_phase_s": phase_s,
            "latency_point": f"the run's `{RESUMED}` event: web — its SSE frame read by the client; direct — the "
            "AppHost.subscribe listener called. Clock starts just before the POST is written / AppHost.answer is called.",
            "web": summary(web_t),
            "direct": summary(direct_t),
            "profile": profile,
        }


def report(result: dict[str, Any]) -> None:
    w, d = result["web"], result["direct"]
    added = w["answer_to_resumed"]["p99_ms"] - d["answer_to_resumed"]["p99_ms"]
    result["added_p99_ms"] = added
    result["ratio_p99"] = w["answer_to_resumed"]["p99_ms"] / d["answer_to_resumed"]["p99_ms"]
    result["ratio_p50"] = w["answer_to_resumed"]["p50_ms"] / d["answer_to_resumed"]["p50_ms"]
    result["target_added_p99_ms"] = TARGET_ADDED_P99_MS
    result["verdict"] = "PASS" if added <= TARGET_ADDED_P99_MS else "MISS"

    def row(label: str, key: str, stat: str, *, verdict: bool = False) -> tuple[str, ...]:
        a, b = w[key][stat], d[key][stat]
        target = f"+{TARGET_ADDED_P99_MS:.0f} ms" if verdict else ""
        return (
            label,
            f"{a:.2f}",
            f"{b:.2f}",
            f"{a - b:+.2f}",
            f"{a / b:.2f}x",
            target,
            result["verdict"] if verdict else "",
        )

    print_table(
        ("answer -> …, ms", "web (HTTP + SSE)", "direct (AppHost)", "web - direct", "ratio", "target", "result"),
        [
            row(f"{RESUMED} p50", "answer_to_resumed", "p50_ms"),
            row(f"{RESUMED} p90", "answer_to_resumed", "p90_ms"),
            row(f"{RESUMED} p99", "answer_to_resumed", "p99_ms", verdict=True),
            row(f"{RESUMED} max", "answer_to_resumed", "max_ms"),
            row("first event p50 (ask_closed)", "answer_to_first_event", "p50_ms"),
            row("first event p99 (ask_closed)", "answer_to_first_event", "p99_ms"),
            row("POST response / answer() returned p50", "answer_to_response", "p50_ms"),
            row("POST response / answer() returned p99", "answer_to_response", "p99_ms"),
            row("run ended p50", "answer_to_run_ended", "p50_ms"),
            row("run ended p99", "answer_to_run_ended", "p99_ms"),
        ],
    )
    s = result["server"]
    print(
        f"{result['args']['answers']} answers per side (after {result['args']['warmup']} warm-up), alternating blocks of {result['args']['block']}; "
        f"{s['pending_runs_at_start']} runs pending on the server at the start; first events seen: web {w['first_event_types']}, direct {d['first_event_types']}"
    )
    print(
        f"server: RSS {s['before_timing']['rss_mb']:.0f} -> {s['after_timing']['rss_mb']:.0f} MB, {s['cpu_s_per_answer'] * 1000:.1f} ms CPU per answer "
        f"(the stream's GET, the POST, the run's step); load average {result['load_average']['before'][0]} -> {result['load_average']['after'][0]}; "
        f"{result['machine']['cpus']} cores; source {result['source']}"
    )
    if result["profile"]:
        p = result["profile"]
        print(
            f"\nserver under cProfile, {p['profiled_answers']} answers (event-loop thread; stream GET + POST + run step): "
            f"{p['total_ms_per_answer']:.2f} ms own time per answer; latency under the profiler p50 "
            f"{p['latency_under_profile']['p50_ms']:.2f} / p99 {p['latency_under_profile']['p99_ms']:.2f} ms"
        )
        print_profile(p)
        print(f"  (the profile: {p['file']}; python -m pstats)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=1_000, help="timed answers per side (default 1,000)")
    parser.add_argument("--warmup", type=int, default=30, help="answers per side before the timing (default 30)")
    parser.add_argument("--block", type=int, default=50, help="answers per side before switching sides (default 50)")
    parser.add_argument(
        "--start-batch", type=int, default=50, help="runs started at once while setting up (default 50)"
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="after the timing, N more web answers with the server under cProfile",
    )
    parser.add_argument(
        "--wait-calm",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to this long for the load average to drop below 0.7",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="give up on any one step after this many seconds")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default bench/results/web_answer_latency.json for a full run "
        "(≥ 1,000 answers, no profile), else a file in the temp dir (a small run does not replace the figures)",
    )
    parser.add_argument("--_direct", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._direct:
        asyncio.run(direct_side(args))
        return
    result = asyncio.run(parent(args))
    report(result)
    full = args.answers >= 1_000 and not args.profile
    out = args.out or (
        RESULTS / "web_answer_latency.json" if full else Path(tempfile.gettempdir()) / "web_answer_latency.small.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
