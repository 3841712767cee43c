"""1,000 concurrent event-stream clients on one server process, each with its own session and a pending question.

One real server (`python -m consulta serve ln2`, uvicorn, in its own process on a free port) and one client
process (this one: raw HTTP/1.1 over asyncio streams, see `_web_support` — one socket and a small buffer per
client, no task per idle client; the kernel and the event loop take the pings in, so the client is no bottleneck).

1. Warm-up: a few runs started and answered (imports, the model's first call, the store's pages).
2. `--clients` + `--baseline` sessions (POST /api/sessions, one token each) and one run per session, each paused on
   its question (started `--start-batch` at a time, each waited for until its ask is pending).
3. **RSS before the clients connect** (psutil, the server process, settled 2 s): every run pending, no stream open.
4. **Baseline, 0 idle clients** (first half): `--baseline` / 2 answers, in turn, each with its run's stream open
   (as `bench_web_answer_latency.py`'s web path: answer POST → the run's `step_started` frame read by the client).
5. `--clients` clients connect, `--connect-batch` at a time, each with its own token: GET /api/runs/{id}/events,
   replay read up to `event: live`. Then all wait `--hold` seconds (longer than the server's 15 s heartbeat, so the
   pings are part of it): **RSS with all connected**, growth per client, the server's CPU while they wait.
6. **Under load**: `--answers` of the clients (spread evenly over them) answered in turn, one at a time, the others
   still connected and waiting: p50/p99 answer → `step_started`.
7. The remaining clients disconnect; **baseline, second half** (0 idle clients again). The two halves bracket the
   loaded phase in time, so a change of machine load shows up as a difference between them.

    .venv/bin/python bench/bench_sse_clients.py                                   # 1,000 clients
    .venv/bin/python bench/bench_sse_clients.py --clients 100 --answers 50 --baseline 40 --hold 2   # quick check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from _web_support import (  # noqa: E402
    MB,
    RESUMED,
    BenchHome,
    Connection,
    ConnectionPool,
    EventStream,
    PendingRun,
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


async def answer_in_turn(
    server: Server,
    conn: Connection,
    runs: list[PendingRun],
    streams: dict[str, EventStream] | None,
    timeout: float,
    *,
    pings: list[int] | None = None,
) -> list[Timing]:
    """Answer `runs` one at a time; a run's stream is taken from `streams` (connected and waiting) or opened for it.
    `pings`, if given, gets the heartbeat comments each stream had carried by the time its run ended."""
    timings = []
    for run in runs:
        stream = streams.pop(run.run_id) if streams is not None else await open_live(server.port, run, timeout=timeout)
        try:
            timings.append(await time_answer(conn, stream, run, timeout=timeout))
        finally:
            stream.close()
        if pings is not None:
            pings.append(stream.pings)
    return timings


async def connect_all(server: Server, runs: list[PendingRun], *, batch: int, timeout: float) -> dict[str, EventStream]:
    streams: dict[str, EventStream] = {}
    for first in range(0, len(runs), batch):
        group = runs[first : first + batch]
        opened = await asyncio.gather(*(open_live(server.port, run, timeout=timeout) for run in group))
        streams.update((run.run_id, stream) for run, stream in zip(group, opened))
    return streams


def spread(items: list[Any], n: int) -> list[Any]:
    """`n` items spread evenly over `items`."""
    n = min(n, len(items))
    return [items[i * len(items) // n] for i in range(n)]


def client_stats() -> dict[str, float]:
    me = psutil.Process()
    cpu = me.cpu_times()
    return {"rss_mb": me.memory_info().rss / MB, "cpu_s": cpu.user + cpu.system, "fds": me.num_fds()}


async def wait_fds_down(server: Server, target: int, timeout: float) -> int:
    """Wait until the server has closed the streams' sockets (fds ≤ target); returns its fd count."""
    deadline = time.monotonic() + timeout
    while (fds := server.stats()["fds"]) > target and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return fds


async def parent(args: argparse.Namespace) -> dict[str, Any]:
    source = source_version()
    nofile = raise_open_files_limit()  # before the server starts: it inherits the limit
    if nofile["soft"] < args.clients + 100:
        raise SystemExit(f"the open-files limit ({nofile['soft']}) is too low for {args.clients} clients")
    load_wait = wait_for_calm(args.wait_calm)
    load_before = os.getloadavg()
    half = args.baseline // 2
    with BenchHome("consulta-bench-sse-clients-") as bench:
        server = Server(
            home=bench.home("web"), model=bench.model, profile=bench.root / "server.prof" if args.profile else None
        )
        pool = None
        try:
            await server.ready()
            server_nofile = server.open_files_limit()
            pool = await ConnectionPool.open(server.port, 8)
            conn = await Connection.open(server.port)

            # 1. warm-up
            (warm_token,) = await new_sessions(pool, 1)
            warm = await start_pending_runs(
                pool, [warm_token] * args.warmup, batch=args.start_batch, timeout=args.timeout
            )
            await answer_in_turn(server, conn, warm, None, args.timeout)
            rss_warm = await server.settled_rss_mb()

            # 2. one session and one pending run per client, and for the baseline
            t0 = time.perf_counter()
            tokens = await new_sessions(pool, args.clients + args.baseline)
            runs = await start_pending_runs(pool, tokens, batch=args.start_batch, timeout=args.timeout)
            setup_s = time.perf_counter() - t0
            client_runs, base_runs = runs[: args.clients], runs[args.clients :]
            assert len({r.token for r in runs}) == len(runs), "one session per client"

            # 3.–4. before any client connects; baseline, first half
            rss_pending = await server.settled_rss_mb()
            base_1 = await answer_in_turn(server, conn, base_runs[:half], None, args.timeout)
            rss_before = await server.settled_rss_mb()
            before = server.stats()

            # 5. all clients connected and waiting
            t0 = time.perf_counter()
            streams = await connect_all(server, client_runs, batch=args.connect_batch, timeout=args.timeout)
            connect_s = time.perf_counter() - t0
            rss_connected_now = server.rss_mb()
            hold_from, client_from = server.stats(), client_stats()
            await asyncio.sleep(args.hold)
            hold_to, client_to = server.stats(), client_stats()
            rss_connected = await server.settled_rss_mb(seconds=0)

            # 6. answers under load
            sample = spread(client_runs, args.answers)
            if args.profile:
                server.profile_start()
            t0 = time.perf_counter()
            cpu0, ccpu0 = server.stats()["cpu_s"], client_stats()["cpu_s"]
            pings: list[int] = []
            loaded = await answer_in_turn(server, conn, sample, streams, args.timeout, pings=pings)
            loaded_s = time.perf_counter() - t0
            cpu1, ccpu1 = server.stats()["cpu_s"], client_stats()["cpu_s"]
            profile = profile_summary(server.profile_stop(), per_call=len(sample)) if args.profile else None

            # 7. the rest disconnect; baseline, second half
            left_connected = len(streams)
            for stream in streams.values():
                stream.close()
            fds_after = await wait_fds_down(server, before["fds"] + 5, args.timeout)
            base_2 = await answer_in_turn(server, conn, base_runs[half:], None, args.timeout)
            conn.close()
        finally:
            if pool is not None:
                pool.close()
            server.stop()
    load_after = os.getloadavg()
    baseline = base_1 + base_2
    lat = latency_summary([t.resumed for t in loaded])
    base = latency_summary([t.resumed for t in baseline])
    growth_mb = rss_connected - rss_before
    return {
        "benchmark": "sse_clients",
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
        "open_files_limit": {"client": nofile, "server_soft_hard": list(server_nofile)},
        "client_side": "raw HTTP/1.1 over asyncio streams (one socket + StreamReader per client, no task per idle client); "
        "one process, one event loop",
        "server": {
            "command": " ".join(server.command[1:]),
            "runs_pending": len(runs),
            "sessions": len(tokens),
            "setup_s": setup_s,
        },
        "rss_mb": {
            "after_warmup": rss_warm,
            "all_runs_pending_no_client": rss_pending,
            "before_clients_connect": rss_before,
            "all_clients_connected_at_once": rss_connected_now,
            "all_clients_connected_after_hold": rss_connected,
        },
        "rss_growth_mb": growth_mb,
        "rss_growth_kib_per_client": growth_mb * 1024 / args.clients,
        "rss_per_pending_run_kib": (rss_pending - rss_warm) * 1024 / len(runs),
        "connect_s": connect_s,
        "fds": {"before_clients": before["fds"], "connected": hold_from["fds"], "after_disconnect": fds_after},
        "threads": {"before_clients": before["threads"], "connected": hold_to["threads"]},
        "idle_hold": {
            "seconds": args.hold,
            "server_cpu_percent": 100 * (hold_to["cpu_s"] - hold_from["cpu_s"]) / args.hold,
            "client_cpu_percent": 100 * (client_to["cpu_s"] - client_from["cpu_s"]) / args.hold,
            "client_rss_mb": client_to["rss_mb"],
        },
        "loaded": {
            "mode": f"{len(sample)} of the {args.clients} clients (spread evenly), answered in turn, one at a time",
            "connected_during": [args.clients, args.clients - len(sample) + 1],
            "left_connected_after": left_connected,
            "pings_carried_by_answered_streams": {"min": min(pings), "max": max(pings)},
            "phase_s": loaded_s,
            "server_cpu_ms_per_answer": 1000 * (cpu1 - cpu0) / len(sample),
            "client_cpu_ms_per_answer": 1000 * (ccpu1 - ccpu0) / len(sample),
            "answer_to_resumed": lat,
            "answer_to_first_event": latency_summary([t.first for t in loaded]),
            "answer_to_response": latency_summary([t.response for t in loaded]),
            "profile": profile,
        },
        "baseline_0_clients": {
            "mode": f"{len(baseline)} answers in turn on the same server with no idle client: {len(base_1)} before the clients connect, {len(base_2)} after they leave",
            "answer_to_resumed": base,
            "before_half": latency_summary([t.resumed for t in base_1]),
            "after_half": latency_summary([t.resumed for t in base_2]),
            "answer_to_first_event": latency_summary([t.first for t in baseline]),
        },
        "latency_point": f"the run's `{RESUMED}` SSE frame read by the client; the clock starts just before the answer's POST is written",
        "ratio_p50": lat["p50_ms"] / base["p50_ms"],
        "ratio_p99": lat["p99_ms"] / base["p99_ms"],
    }


def report(r: dict[str, Any]) -> None:
    lat, base = r["loaded"]["answer_to_resumed"], r["baseline_0_clients"]["answer_to_resumed"]
    rss = r["rss_mb"]
    n = r["args"]["clients"]
    print_table(
        ("metric", f"{n:,} clients connected", "0 idle clients (baseline)", "ratio"),
        [
            (f"answer -> {RESUMED} p50, ms", f"{lat['p50_ms']:.2f}", f"{base['p50_ms']:.2f}", f"{r['ratio_p50']:.2f}x"),
            (f"answer -> {RESUMED} p90, ms", f"{lat['p90_ms']:.2f}", f"{base['p90_ms']:.2f}", ""),
            (f"answer -> {RESUMED} p99, ms", f"{lat['p99_ms']:.2f}", f"{base['p99_ms']:.2f}", f"{r['ratio_p99']:.2f}x"),
            (f"answer -> {RESUMED} max, ms", f"{lat['max_ms']:.2f}", f"{base['max_ms']:.2f}", ""),
            (
                "answer -> first event (ask_closed) p99, ms",
                f"{r['loaded']['answer_to_first_event']['p99_ms']:.2f}",
                f"{r['baseline_0_clients']['answer_to_first_event']['p99_ms']:.2f}",
                "",
            ),
            (
                "server RSS, MB",
                f"{rss['all_clients_connected_after_hold']:.1f}",
                f"{rss['before_clients_connect']:.1f}",
                "",
            ),
            (
                "  growth, MB (per client, KiB)",
                f"+{r['rss_growth_mb']:.1f} ({r['rss_growth_kib_per_client']:.1f})",
                "",
                "",
            ),
            ("server open fds", f"{r['fds']['connected']}", f"{r['fds']['before_clients']}", ""),
        ],
    )
    b = r["baseline_0_clients"]
    print(
        f"baseline halves: before the clients p50 {b['before_half']['p50_ms']:.2f} / p99 {b['before_half']['p99_ms']:.2f} ms; "
        f"after they left p50 {b['after_half']['p50_ms']:.2f} / p99 {b['after_half']['p99_ms']:.2f} ms"
    )
    print(
        f"under load: {r['loaded']['mode']}; connected {r['loaded']['connected_during'][0]} -> {r['loaded']['connected_during'][1]}; "
        f"heartbeat pings each answered stream carried {r['loaded']['pings_carried_by_answered_streams']['min']}–{r['loaded']['pings_carried_by_answered_streams']['max']}; "
        f"server CPU {r['loaded']['server_cpu_ms_per_answer']:.1f} ms / client CPU {r['loaded']['client_cpu_ms_per_answer']:.1f} ms per answer"
    )
    h = r["idle_hold"]
    print(
        f"{n:,} clients connected in {r['connect_s']:.1f} s and waited {h['seconds']:.0f} s: server CPU {h['server_cpu_percent']:.1f} %, "
        f"client CPU {h['client_cpu_percent']:.1f} % (client RSS {h['client_rss_mb']:.0f} MB); server threads {r['threads']['before_clients']} -> {r['threads']['connected']}"
    )
    print(
        f"server RSS: {rss['after_warmup']:.1f} MB after warm-up, {rss['all_runs_pending_no_client']:.1f} MB with {r['server']['runs_pending']:,} runs pending "
        f"({r['rss_per_pending_run_kib']:.1f} KiB per pending run), {rss['before_clients_connect']:.1f} before the clients, "
        f"{rss['all_clients_connected_at_once']:.1f} just after they connected, {rss['all_clients_connected_after_hold']:.1f} after the hold"
    )
    lim = r["open_files_limit"]
    print(
        f"open-files limit: client soft {lim['client']['soft_before']} -> {lim['client']['soft']} (hard {lim['client']['hard']}), "
        f"server (soft, hard) {tuple(lim['server_soft_hard'])}; {r['server']['sessions']:,} sessions; "
        f"set-up {r['server']['setup_s']:.0f} s; load average {r['load_average']['before'][0]} -> {r['load_average']['after'][0]}; "
        f"{r['machine']['cpus']} cores; source {r['source']}"
    )
    if r["loaded"]["profile"]:
        print(
            f"\nserver under cProfile during the loaded answers ({r['loaded']['profile']['profiled_answers']}; the latency above is profiled):"
        )
        print_profile(r["loaded"]["profile"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--clients", type=int, default=1_000, help="concurrent event-stream clients, one session each (default 1,000)"
    )
    parser.add_argument(
        "--answers", type=int, default=300, help="clients answered in turn while the others wait (default 300)"
    )
    parser.add_argument(
        "--baseline", type=int, default=300, help="answers with no idle client: half before, half after (default 300)"
    )
    parser.add_argument(
        "--hold", type=float, default=20.0, help="seconds all clients wait connected before the answers (default 20)"
    )
    parser.add_argument("--warmup", type=int, default=30, help="runs answered before anything is measured (default 30)")
    parser.add_argument(
        "--start-batch", type=int, default=50, help="runs started at once while setting up (default 50)"
    )
    parser.add_argument("--connect-batch", type=int, default=100, help="clients connecting at once (default 100)")
    parser.add_argument(
        "--profile", action="store_true", help="profile the server (cProfile) during the loaded answers"
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
        help="default bench/results/sse_clients.json for a full run "
        "(≥ 1,000 clients, no profile), else a file in the temp dir (a small run does not replace the figures)",
    )
    args = parser.parse_args(argv)
    result = asyncio.run(parent(args))
    report(result)
    full = args.clients >= 1_000 and not args.profile
    out = args.out or (RESULTS / "sse_clients.json" if full else Path(tempfile.gettempdir()) / "sse_clients.small.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
