"""10,000 simultaneously pending questions in one process, against the seed's thread-per-question design.

What is measured (each side in its own fresh child process of this same benchmark run, so that one side's heap
and thread-stack caches cannot flatter or penalise the other; the parent only collects and compares):

* **consulta** — one `Runtime(ask_policy="wait")` over a temporary SQLite store. N runs of a toy agent whose
  `ScriptedModel` calls `question` at once and, once answered, replies with text. Runs are started in batches
  (default 250 at a time, each batch waited until its asks are open — questions pile up over time in real use);
  `--start-batch 0` starts all N at once. When all N asks are pending: RSS growth (psutil) over the RSS after a
  warm-up, and every thread that did not exist before, classified by name and by where it is blocked.
* **threads (baseline, "seed design")** — seed 001 section 3: a worker thread parked per pending question in
  `threading.Event().wait(timeout)`. Only the parked thread is modelled (no agent state), so the baseline is a
  lower bound on the seed's real cost. Default thread stack size unless `--thread-stack-kb` is given.

Latency, for `--answers` questions, one after the other:

* consulta: `runtime.answer(ask_id, ...)` called on the event loop → the run's next step starts, observed as the
  scripted model's function being called again (it runs in pydantic-ai's worker thread; that is the first point
  where the resumed run does the model's work — the model itself is instant, so model time is excluded). The next
  answer is given only after that run has finished, so measurements do not overlap.
* threads: `event.set()` in the main thread → `wait()` returns in the parked thread.

Targets (DESIGN): RSS growth ≤ 200 MB at N=10,000, no extra threads, answer→resume p99 ≤ 50 ms. The timing target
is absolute, so it is printed with the ratio against the baseline measured in the same run (the machine is shared).

    .venv/bin/python bench/bench_pending_questions.py            # N=10,000, 1,000 answers
    .venv/bin/python bench/bench_pending_questions.py --quick    # smoke test, < 20 s
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import psutil

from _common import source_version  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
MB = 1024 * 1024

TARGET_RSS_MB = 200.0
TARGET_P99_MS = 50.0
ANYIO_POOL_CAP = 40  # anyio's default thread limiter: the most worker threads pydantic-ai's sync calls can use


# ---- shared helpers ---------------------------------------------------------------------------------------------


def rss() -> int:
    gc.collect()
    return psutil.Process().memory_info().rss


def rss_after_trim() -> int | None:
    """RSS after glibc's malloc_trim(0): what is left once free heap pages go back to the OS (None off glibc)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return None
    return psutil.Process().memory_info().rss


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))
    return ordered[k]


def latency_summary(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 50),
        "p90_ms": percentile(ms, 90),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms) if ms else float("nan"),
        "mean_ms": statistics.fmean(ms) if ms else float("nan"),
    }


def describe_thread(thread: threading.Thread, frames: dict[int, Any]) -> str:
    """`name — where it is blocked`, e.g. `AnyIO worker thread — idle in queue.get`."""
    frame = frames.get(thread.ident or -1)
    chain: list[str] = []
    while frame is not None:
        chain.append(f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}")
        frame = frame.f_back
    base = thread.name.split(" (")[0]
    if base.startswith("Thread-"):
        base = "Thread-*"
    if base == "consulta-store-writer":  # older versions of the runtime had one; kept to report it if it returns
        where = "store write-behind thread (one per runtime), " + (
            "idle" if chain[:1] == ["_writer.py:_run"] else "writing"
        )
    elif "queue.py:get" in chain and any(c.startswith("_asyncio.py:run") for c in chain):
        where = "idle in queue.get (anyio worker pool)"
    elif "queue.py:get" in chain:
        where = "idle in queue.get"
    elif chain:
        where = " <- ".join(chain[:3])
    else:
        where = "?"
    return f"{base} — {where}"


def new_threads(before: set[int]) -> dict[str, int]:
    frames = sys._current_frames()
    return dict(Counter(describe_thread(t, frames) for t in threading.enumerate() if t.ident not in before))


# ---- consulta side ----------------------------------------------------------------------------------------------


async def consulta_side(args: argparse.Namespace) -> dict[str, Any]:
    source = source_version()  # the commit this process imports, noted before the long run
    from pydantic_ai.messages import ModelMessage, ModelResponse, UserPromptPart
    from pydantic_ai.models.function import AgentInfo

    from consulta.asks import question_tool
    from consulta.models import ScriptedModel
    from consulta.runtime import Agent, AskOpened, AskStatus, Runtime, Store

    loop = asyncio.get_running_loop()
    resumed_at: dict[str, float] = {}
    waiters: dict[str, asyncio.Future[float]] = {}

    class TimedScript(ScriptedModel):
        """The scripted model, noting when a run's second step (the one after the answer) starts."""

        def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if any(isinstance(m, ModelResponse) for m in messages):
                now = time.perf_counter()
                prompt = next(p.content for p in messages[0].parts if isinstance(p, UserPromptPart))
                resumed_at[prompt] = now
                future = waiters.pop(prompt, None)
                if future is not None:
                    loop.call_soon_threadsafe(future.set_result, now)
            return super()._respond(messages, info)

    question = {"header": "Cell Line", "question": "Which one?", "options": ["K562-a", "K562-b"]}
    model = TimedScript([{"tool_calls": [{"name": "question", "args": {"questions": [question]}}]}, {"text": "Done."}])
    agent = Agent(
        app="bench", instructions="Be brief.", tools=(question_tool(),), question_timeout=args.question_timeout
    )

    tmp = tempfile.mkdtemp(prefix="consulta-bench-pending-")
    db = Path(tmp) / "bench.db"
    store = Store(f"sqlite:///{db}")
    runtime = Runtime(store=store, resolve_model=lambda _spec: model, ask_policy="wait")
    opened: dict[str, str] = {}  # run id -> ask id
    prompts: dict[str, str] = {}  # run id -> prompt
    target = {"n": 0}
    all_open = asyncio.Event()

    def on_event(event: Any) -> None:
        if isinstance(event, AskOpened):
            opened[event.run_id] = event.ask_id
            if len(opened) >= target["n"]:
                all_open.set()

    runtime.subscribe(on_event)

    async def start_and_wait(first: int, count: int) -> None:
        target["n"] = len(opened) + count
        all_open.clear()
        for i in range(first, first + count):
            prompt = f"bench-{i}"
            run = await runtime.start(agent, prompt, model="scripted")
            prompts[run.id] = prompt
        await asyncio.wait_for(all_open.wait(), timeout=args.phase_timeout)

    async def answer_and_time(run_id: str) -> tuple[float, float, float]:
        prompt = prompts[run_id]
        future: asyncio.Future[float] = loop.create_future()
        waiters[prompt] = future
        t0 = time.perf_counter()
        runtime.answer(opened[run_id], ["K562-b"])
        t_answered = time.perf_counter()
        t_resumed = await asyncio.wait_for(future, timeout=args.phase_timeout)
        record = await runtime.settled(run_id)
        t_done = time.perf_counter()
        assert record.status.value == "finished", (record.status, record.error)
        return t_resumed - t0, t_answered - t0, t_done - t0

    threads_at_start = {t.ident for t in threading.enumerate()}  # before any run: the main thread only
    count_at_start = threading.active_count()
    try:
        # Warm-up: imports, schema generation, the thread pool, SQLite pages — all the one-off costs.
        await start_and_wait(-args.warmup, args.warmup)
        for run_id in list(opened):
            await answer_and_time(run_id)
        opened.clear()
        await asyncio.sleep(0)

        count_after_warmup = threading.active_count()
        os_threads_before = psutil.Process().num_threads()
        rss_before = rss()
        peak = rss_before

        # N runs, each paused on its question.
        t_start = time.perf_counter()
        batch = args.start_batch or args.n
        for first in range(0, args.n, batch):
            await start_and_wait(first, min(batch, args.n - first))
            peak = max(peak, psutil.Process().memory_info().rss)
        startup_s = time.perf_counter() - t_start

        rss_pending = rss()
        trimmed = rss_after_trim()
        threads_pending = threading.active_count()
        os_threads_pending = psutil.Process().num_threads()
        extra = new_threads(threads_at_start)  # includes the pool threads the warm-up started
        pending_in_store = len(store.list_asks(status=AskStatus.pending))
        assert len(opened) == args.n and pending_in_store == args.n, (len(opened), pending_in_store)

        # Answer → resume, one at a time, while the others stay pending. GC pauses are noted: with N runs' objects
        # alive, a full collection is one of the few things that can stall the loop besides the poller.
        gc_pauses: list[float] = []
        gc_start = [0.0]

        def on_gc(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                gc_start[0] = time.perf_counter()
            elif info.get("generation") == 2:
                gc_pauses.append(time.perf_counter() - gc_start[0])

        gc.callbacks.append(on_gc)
        resume, answer_call, to_finish = [], [], []
        t_lat = time.perf_counter()
        for run_id in list(opened)[: args.answers]:
            a, b, c = await answer_and_time(run_id)
            resume.append(a)
            answer_call.append(b)
            to_finish.append(c)
        latency_s = time.perf_counter() - t_lat
        gc.callbacks.remove(on_gc)

        # What the poller does every heartbeat_interval (5 s) with all these runs live in this process.
        live_ids = [r.id for r in store.list_runs(limit=args.n + args.warmup + 10) if runtime.is_running_here(r.id)]
        t0 = time.perf_counter()
        store.heartbeat()
        store.cancel_requested()
        heartbeat_ms = (time.perf_counter() - t0) * 1000

        return {
            "side": "consulta",
            "source": source,
            "n": args.n,
            "ask_policy": "wait",
            "question_timeout_s": args.question_timeout,
            "start_batch": batch,
            "warmup_runs": args.warmup,
            "rss_before_mb": rss_before / MB,
            "rss_pending_mb": rss_pending / MB,
            "rss_growth_mb": (rss_pending - rss_before) / MB,
            "rss_peak_during_startup_mb": peak / MB,
            "rss_growth_after_malloc_trim_mb": None if trimmed is None else (trimmed - rss_before) / MB,
            "kb_per_pending": (rss_pending - rss_before) / 1024 / args.n,
            "threads_before": count_at_start,
            "threads_after_warmup": count_after_warmup,
            "threads_pending": threads_pending,
            "os_threads_before": os_threads_before,
            "os_threads_pending": os_threads_pending,
            "extra_threads": extra,
            "startup_s": startup_s,
            "startup_ms_per_run": startup_s * 1000 / args.n,
            "db_mb": db.stat().st_size / MB
            + (Path(f"{db}-wal").stat().st_size / MB if Path(f"{db}-wal").exists() else 0),
            "latency": latency_summary(resume),
            "answer_call": latency_summary(answer_call),
            "answer_to_finished": latency_summary(to_finish),
            "latency_phase_s": latency_s,
            "full_gc_during_latency_phase": {"count": len(gc_pauses), "max_ms": max(gc_pauses, default=0.0) * 1000},
            "heartbeat_ms": heartbeat_ms,
            "live_runs_at_heartbeat": len(live_ids),
            "latency_point": "scripted model function called for the run's 2nd step (pydantic-ai worker thread)",
        }
    finally:
        await runtime.aclose()
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- threads side (the seed's design) ---------------------------------------------------------------------------


def threads_side(args: argparse.Namespace) -> dict[str, Any]:
    if args.thread_stack_kb:
        threading.stack_size(args.thread_stack_kb * 1024)
    events: list[threading.Event] = []
    woke: list[float] = []
    ack = threading.Event()
    parked = {"n": 0}
    lock = threading.Lock()

    def worker(i: int) -> None:  # seed 001 §3: the worker thread blocks until the GUI sets the answer
        with lock:
            parked["n"] += 1
        events[i].wait(args.question_timeout)
        woke[i] = time.perf_counter()
        ack.set()

    threads_before = {t.ident for t in threading.enumerate()}
    count_before = threading.active_count()
    os_before = psutil.Process().num_threads()
    rss_before = rss()
    threads: list[threading.Thread] = []
    error = None
    t_start = time.perf_counter()
    for i in range(args.n):
        events.append(threading.Event())
        woke.append(0.0)
        thread = threading.Thread(target=worker, args=(i,), name=f"question-worker-{i}", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # can't start new thread
            error = f"{type(exc).__name__}: {exc} (after {i} threads)"
            events.pop()
            woke.pop()
            break
        threads.append(thread)
    started = len(threads)
    while parked["n"] < started:
        time.sleep(0.01)
    time.sleep(0.2)  # let the last ones reach wait()
    startup_s = time.perf_counter() - t_start
    rss_pending = rss()
    trimmed = rss_after_trim()
    count_pending = threading.active_count()
    os_pending = psutil.Process().num_threads()
    frames = sys._current_frames()
    extra = Counter(
        "question-worker-* — parked in Event.wait"
        if t.name.startswith("question-worker-")
        else describe_thread(t, frames)
        for t in threading.enumerate()
        if t.ident not in threads_before
    )

    latencies = []
    for i in range(min(args.answers, started)):
        ack.clear()
        t0 = time.perf_counter()
        events[i].set()
        ack.wait()
        latencies.append(woke[i] - t0)
    for event in events:
        event.set()
    for thread in threads:
        thread.join()

    growth = rss_pending - rss_before
    return {
        "side": "threads",
        "n": args.n,
        "threads_started": started,
        "start_error": error,
        "stack_size": f"{args.thread_stack_kb} KiB (threading.stack_size)"
        if args.thread_stack_kb
        else f"default (RLIMIT_STACK = {resource.getrlimit(resource.RLIMIT_STACK)[0] // 1024} KiB virtual per thread)",
        "rss_before_mb": rss_before / MB,
        "rss_pending_mb": rss_pending / MB,
        "rss_growth_mb": growth / MB,
        "rss_growth_extrapolated_mb": None if started == args.n else growth / MB * args.n / max(started, 1),
        "rss_growth_after_malloc_trim_mb": None if trimmed is None else (trimmed - rss_before) / MB,
        "kb_per_pending": growth / 1024 / max(started, 1),
        "threads_before": count_before,
        "threads_pending": count_pending,
        "os_threads_before": os_before,
        "os_threads_pending": os_pending,
        "extra_threads": dict(extra),
        "startup_s": startup_s,
        "startup_ms_per_run": startup_s * 1000 / max(started, 1),
        "latency": latency_summary(latencies),
        "latency_point": "threading.Event.set() in main thread -> wait() returns in the parked thread",
    }


# ---- parent: run both sides, compare ----------------------------------------------------------------------------


def run_child(side: str, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--_child",
        side,
        "--n",
        str(args.n),
        "--answers",
        str(args.answers),
        "--start-batch",
        str(args.start_batch),
        "--warmup",
        str(args.warmup),
        "--question-timeout",
        str(args.question_timeout),
        "--thread-stack-kb",
        str(args.thread_stack_kb),
        "--phase-timeout",
        str(args.phase_timeout),
    ]
    print(f"[{side}] starting child: N={args.n}, answers={args.answers} …", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.phase_timeout * 4)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"[{side}] child failed with exit code {proc.returncode}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["child_wall_s"] = time.perf_counter() - t0
    print(f"[{side}] done in {result['child_wall_s']:.1f} s", flush=True)
    return result


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report(c: dict[str, Any], t: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    t_growth = t["rss_growth_mb"] if t["rss_growth_extrapolated_mb"] is None else t["rss_growth_extrapolated_mb"]
    t_label = "" if t["rss_growth_extrapolated_mb"] is None else f" (extrapolated from {t['threads_started']})"
    pool = sum(v for k, v in c["extra_threads"].items() if "anyio worker pool" in k)
    writer = sum(v for k, v in c["extra_threads"].items() if "one per runtime" in k)
    per_question_threads = sum(c["extra_threads"].values()) - pool - writer  # threads beyond the bounded ones
    cl, tl = c["latency"], t["latency"]
    rows = [
        (
            "pending questions (N)",
            f"{c['n']:,}",
            f"{t['threads_started']:,}{' of ' + format(t['n'], ',') if t['threads_started'] != t['n'] else ''}",
            "",
            "",
            "",
        ),
        (
            "RSS growth, MB",
            f"{c['rss_growth_mb']:.1f}",
            f"{t_growth:.1f}{t_label}",
            f"{c['rss_growth_mb'] / t_growth:.2f}x" if t_growth > 0 else "n/a",
            f"<= {TARGET_RSS_MB:.0f}",
            verdict(c["rss_growth_mb"] <= TARGET_RSS_MB),
        ),
        ("  KiB per pending question", f"{c['kb_per_pending']:.1f}", f"{t['kb_per_pending']:.1f}", "", "", ""),
        (
            "extra threads (all)",
            f"{sum(c['extra_threads'].values())}",
            f"{sum(t['extra_threads'].values())}",
            "",
            "",
            "",
        ),
        (
            "  threads per pending question",
            f"{per_question_threads}/{c['n']}",
            f"{t['threads_started']}/{t['threads_started']}",
            "",
            "0 extra",
            verdict(per_question_threads == 0 and pool <= ANYIO_POOL_CAP and writer <= 1),
        ),
        ("  idle anyio pool threads (bounded)", f"{pool} (cap {ANYIO_POOL_CAP})", "0", "", "", ""),
        ("  store writer thread (one per runtime)", f"{writer}", "0", "", "", ""),
        (
            "answer->resume p50, ms",
            f"{cl['p50_ms']:.2f}",
            f"{tl['p50_ms']:.3f}",
            f"{cl['p50_ms'] / tl['p50_ms']:.0f}x",
            "",
            "",
        ),
        (
            "answer->resume p99, ms",
            f"{cl['p99_ms']:.2f}",
            f"{tl['p99_ms']:.3f}",
            f"{cl['p99_ms'] / tl['p99_ms']:.0f}x",
            f"<= {TARGET_P99_MS:.0f} (abs.)",
            verdict(cl["p99_ms"] <= TARGET_P99_MS),
        ),
        ("answer->resume max, ms", f"{cl['max_ms']:.2f}", f"{tl['max_ms']:.3f}", "", "", ""),
        ("start-up to all pending, s", f"{c['startup_s']:.1f}", f"{t['startup_s']:.1f}", "", "", ""),
        ("  ms per run started", f"{c['startup_ms_per_run']:.2f}", f"{t['startup_ms_per_run']:.3f}", "", "", ""),
    ]
    headers = ("metric", "consulta", "seed: thread/question", "ratio c/s", "target", "result")
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    print()
    print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(str(x).ljust(w) for x, w in zip(r, widths)))
    print()
    trim_c, trim_t = c["rss_growth_after_malloc_trim_mb"], t["rss_growth_after_malloc_trim_mb"]
    print(
        f"consulta: RSS {c['rss_before_mb']:.0f} -> {c['rss_pending_mb']:.0f} MB (peak during start-up {c['rss_peak_during_startup_mb']:.0f} MB), "
        f"start batch {c['start_batch']}, warm-up {c['warmup_runs']} runs, store {c['db_mb']:.1f} MB on disk"
    )
    if trim_c is not None and trim_t is not None:
        print(
            f"RSS growth once malloc_trim(0) has returned free heap pages to the OS (info): consulta {trim_c:.1f} MB, seed {trim_t:.1f} MB"
        )
    print(
        f"consulta: threads {c['threads_before']} before any run, {c['threads_after_warmup']} after warm-up, {c['threads_pending']} with all pending "
        f"(OS threads after warm-up {c['os_threads_before']} -> {c['os_threads_pending']}); new threads: {c['extra_threads'] or 'none'}"
    )
    print(
        f"consulta: answer() call itself p50 {c['answer_call']['p50_ms']:.2f} / p99 {c['answer_call']['p99_ms']:.2f} ms; "
        f"answer -> run finished p50 {c['answer_to_finished']['p50_ms']:.2f} / p99 {c['answer_to_finished']['p99_ms']:.2f} ms"
    )
    g = c["full_gc_during_latency_phase"]
    print(
        f"consulta: during the latency phase ({c['latency_phase_s']:.0f} s): {g['count']} full (gen-2) garbage collections, longest {g['max_ms']:.0f} ms"
    )
    print(
        f"consulta: one poller heartbeat over {c['live_runs_at_heartbeat']:,} live runs (UPDATE … WHERE owner + SELECT … WHERE owner) = {c['heartbeat_ms']:.1f} ms, every 5 s, on the event loop"
    )
    print(f"consulta latency point: {c['latency_point']}; source {c.get('source', 'unknown')}")
    print(
        f"seed:     {t['stack_size']}; threads {t['threads_before']} -> {t['threads_pending']}; start error: {t['start_error']}"
    )
    print(f"seed latency point: {t['latency_point']}")
    return {
        "benchmark": "pending_questions",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "source": c.get("source", "unknown"),
        "args": {k: v for k, v in vars(args).items() if not k.startswith("_")},
        "targets": {"rss_growth_mb": TARGET_RSS_MB, "extra_threads": 0, "p99_ms": TARGET_P99_MS},
        "verdicts": {
            "rss": verdict(c["rss_growth_mb"] <= TARGET_RSS_MB),
            "threads": verdict(per_question_threads == 0 and pool <= ANYIO_POOL_CAP and writer <= 1),
            "p99": verdict(cl["p99_ms"] <= TARGET_P99_MS),
        },
        "ratios": {
            "rss_growth_consulta_over_threads": c["rss_growth_mb"] / t_growth if t_growth > 0 else None,
            "p50_consulta_over_threads": cl["p50_ms"] / tl["p50_ms"],
            "p99_consulta_over_threads": cl["p99_ms"] / tl["p99_ms"],
        },
        "consulta": c,
        "threads": t,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="simultaneously pending questions (default 10,000)")
    parser.add_argument("--answers", type=int, default=1_000, help="answers timed one after the other (default 1,000)")
    parser.add_argument(
        "--start-batch", type=int, default=250, help="runs started per batch; 0 = all at once (default 250)"
    )
    parser.add_argument(
        "--warmup", type=int, default=20, help="runs asked and answered before the 'before' RSS (default 20)"
    )
    parser.add_argument("--question-timeout", type=float, default=86_400.0, help="the agent's question_timeout, s")
    parser.add_argument("--thread-stack-kb", type=int, default=0, help="baseline thread stack size; 0 = default")
    parser.add_argument("--phase-timeout", type=float, default=900.0, help="give up on a phase after this many s")
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke test (N=300, 100 answers)")
    parser.add_argument("--side", choices=["both", "consulta", "threads"], default="both")
    parser.add_argument("--_child", choices=["consulta", "threads"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.answers, args.warmup, args.start_batch = 300, 100, 5, 100

    if args._child == "consulta":
        print(json.dumps(asyncio.run(consulta_side(args))))
        return
    if args._child == "threads":
        print(json.dumps(threads_side(args)))
        return

    consulta = run_child("consulta", args) if args.side in ("both", "consulta") else None
    threads = run_child("threads", args) if args.side in ("both", "threads") else None
    if consulta is None or threads is None:
        print(json.dumps(consulta or threads, indent=2))
        return
    result = report(consulta, threads, args)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("pending_questions.quick.json" if args.quick else "pending_questions.json")
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
