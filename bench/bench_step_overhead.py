"""Per-step overhead of a Consulta run over bare pydantic-ai with the same scripted model. Target ≤ 1.2×.

The same `ScriptedModel` instance calls a trivial read tool `lookup` K times, then answers in text; the same tool
function is given to both sides:

* **bare** (the baseline) — `pydantic_ai.Agent(model, instructions=..., tools=[lookup]).run(prompt)`, the agent
  built for every run, as Consulta builds its engine agent for every stretch of a run;
* **consulta** — `Runtime.run(agent, prompt, model=...)` over a temporary SQLite store, `lookup` declared with
  `@read_tool`; every run is stored (run row, a checkpoint per engine node, a tool-call record, events);
* **bare, agent reused** — informational only: one pydantic-ai agent for all runs.

Each measured round runs every arm once, in a rotating order (drift and warm caches hit all arms alike); time per
step = run wall time / K; the table shows medians and the ratio consulta/bare (ratio of medians, and the median of
the per-round ratios). `--k-sweep` repeats the comparison for other K to separate the per-run fixed cost from the
per-step cost (the marginal step cost is the slope between the smallest and largest K).

Breakdown (where Consulta's extra time goes), on separate runs so it does not disturb the timing above:

1. wall-time wrappers around every `Store` method and around the engine's `dump_messages` / `load_messages` /
   `build_engine_agent`: calls and ms per run;
2. cProfile of a few runs of each side (the event-loop thread only — the model function and the tool run in
   worker threads identically on both sides): own time grouped by library, consulta minus bare, and the top
   functions of the Consulta run.

    .venv/bin/python bench/bench_step_overhead.py           # K=10, 50 rounds, sweep K=1,24
    .venv/bin/python bench/bench_step_overhead.py --quick   # smoke test, < 20 s
    .venv/bin/python bench/bench_step_overhead.py --clock cpu   # CPU time: steadier when the machine is shared
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import json
import os
import platform
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TARGET_RATIO = 1.2


def lookup(name: str) -> dict:
    """Look a name up."""
    return {"ok": True, "found": [name + "-a", name + "-b"]}


def script(k: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [{"tool_calls": [{"name": "lookup", "args": {"name": f"K{i}"}}]} for i in range(k)]
    return [*steps, {"text": f"Looked up {k} names."}]


class Arms:
    """The three ways to run the same script; each `await arm()` is one run, checked for the expected result."""

    def __init__(self, k: int, tmp: str) -> None:
        from pydantic_ai import Agent as PaiAgent

        from consulta.models import ScriptedModel
        from consulta.runtime import Agent, Runtime, Store, read_tool

        self.k = k
        self.model = ScriptedModel(script(k))
        self.expected = f"Looked up {k} names."
        self.instructions = "Be brief."
        self.PaiAgent = PaiAgent
        self.reused = PaiAgent(self.model, instructions=self.instructions, tools=[lookup])
        self.store = Store(f"sqlite:///{tmp}/step-overhead-k{k}.db")
        self.runtime = Runtime(store=self.store, resolve_model=lambda _spec: self.model)
        self.agent = Agent(app="bench", instructions=self.instructions, tools=(read_tool(lookup),), max_steps=k + 5)
        self.n = 0

    async def bare(self) -> None:
        result = await self.PaiAgent(self.model, instructions=self.instructions, tools=[lookup]).run(f"prompt {self.n}")
        assert result.output == self.expected, result.output
        self.n += 1

    async def bare_reused(self) -> None:
        result = await self.reused.run(f"prompt {self.n}")
        assert result.output == self.expected, result.output
        self.n += 1

    async def consulta(self) -> None:
        run = await self.runtime.run(self.agent, f"prompt {self.n}", model="scripted")
        assert run.status.value == "finished" and run.output == self.expected, (run.status, run.output, run.error)
        self.n += 1

    async def aclose(self) -> None:
        await self.runtime.aclose()
        self.store.close()


ARM_NAMES = ("bare", "consulta", "bare_reused")


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""`wall`: what a user waits; `cpu`: the process's CPU time (all its threads), which other processes on a shared
machine disturb far less — both arms do the same waiting, so their CPU ratio is the runtime's own cost."""


async def measure(arms: Arms, rounds: int, warmup: int, clock: Any = time.perf_counter) -> dict[str, list[float]]:
    """Per-step seconds (of `clock`) for each arm, `rounds` rounds in rotating order."""
    fns = {"bare": arms.bare, "consulta": arms.consulta, "bare_reused": arms.bare_reused}
    for _ in range(warmup):
        for name in ARM_NAMES:
            await fns[name]()
    times: dict[str, list[float]] = {name: [] for name in ARM_NAMES}
    for r in range(rounds):
        order = ARM_NAMES[r % 3 :] + ARM_NAMES[: r % 3]
        for name in order:
            t0 = clock()
            await fns[name]()
            times[name].append((clock() - t0) / arms.k)
    return times


def summarise(times: dict[str, list[float]]) -> dict[str, Any]:
    med = {name: statistics.median(v) * 1000 for name, v in times.items()}
    pair = [c / b for c, b in zip(times["consulta"], times["bare"], strict=True)]
    q = statistics.quantiles([x * 1000 for x in times["consulta"]], n=4) if len(times["consulta"]) >= 2 else [0, 0, 0]
    qb = statistics.quantiles([x * 1000 for x in times["bare"]], n=4) if len(times["bare"]) >= 2 else [0, 0, 0]
    return {
        "median_ms_per_step": med,
        "iqr_ms_per_step": {"consulta": [q[0], q[2]], "bare": [qb[0], qb[2]]},
        "ratio_of_medians": med["consulta"] / med["bare"],
        "median_of_round_ratios": statistics.median(pair),
        "ratio_vs_reused": med["consulta"] / med["bare_reused"],
        "extra_ms_per_step": med["consulta"] - med["bare"],
        "rounds": len(pair),
    }


# ---- breakdown ----------------------------------------------------------------------------------------------------


async def wrapped_breakdown(arms: Arms, runs: int) -> dict[str, dict[str, Any]]:
    """Calls and wall ms per run of each Store method and engine helper during `runs` Consulta runs, by thread.

    Store writes may run on the runtime's write-behind thread: their time overlaps the event loop's work and only
    costs the run what the loop then waits for them (`WriteBehind.drain`, wrapped too when it exists).
    """
    import consulta.runtime._runtime as runtime_module
    from consulta.runtime import Store

    stats: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    restore: list[tuple[Any, str, Any]] = []
    main = threading.main_thread()

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None or not callable(original):
            return

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                current = threading.current_thread()
                entry = stats[(label, "loop" if current is main else current.name)]
                entry[0] += 1
                entry[1] += time.perf_counter() - t0

        restore.append((owner, name, owner.__dict__.get(name, None) if hasattr(owner, "__dict__") else None))
        setattr(owner, name, timed)

    store = arms.store
    for name in dir(Store):
        if not name.startswith("_") and callable(getattr(Store, name)) and name != "close":
            wrap(store, name, f"store.{name}")
    for name in ("dump_messages", "load_messages", "build_engine_agent"):
        wrap(runtime_module, name, f"engine.{name}")
    writer = getattr(arms.runtime, "_writer", None)
    if writer is not None:
        wrap(writer, "drain", "runtime: loop waits for the store writer (drain)")
    consulta_s: list[float] = []
    bare_s: list[float] = []
    try:
        for _ in range(runs):  # bare runs interleaved, for an "extra" measured in the same window
            t0 = time.perf_counter()
            await arms.consulta()
            consulta_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await arms.bare()
            bare_s.append(time.perf_counter() - t0)
    finally:
        for owner, name, previous in reversed(restore):
            if previous is None:
                delattr(owner, name)
            else:
                setattr(owner, name, previous)
    out: dict[str, dict[str, Any]] = {
        f"{label} @{thread}": {
            "function": label,
            "thread": thread,
            "calls_per_run": n / runs,
            "ms_per_run": t * 1000 / runs,
        }
        for (label, thread), (n, t) in stats.items()
    }
    out["_total"] = {"calls_per_run": 0, "ms_per_run": sum(consulta_s) * 1000 / runs}
    out["_bare_same_window"] = {"calls_per_run": 0, "ms_per_run": sum(bare_s) * 1000 / runs}
    return out


def area(filename: str, funcname: str) -> str:
    if "sqlite3" in funcname or "sqlite3" in filename:
        return "sqlite3 (C: execute/commit/fetch)"
    if "/sqlalchemy/" in filename:
        return "sqlalchemy (Core: build/compile/cache/result)"
    if "/consulta/" in filename:
        return "consulta (python)"
    if "pydantic_core" in funcname or "pydantic_core" in filename or "/pydantic/" in filename:
        return "pydantic (validate/serialise)"
    if "/pydantic_ai/" in filename or "/pydantic_graph/" in filename or "/genai_prices/" in filename:
        return "pydantic-ai / pydantic-graph"
    if "/anyio/" in filename or "asyncio" in filename or "selectors" in filename or "select" in funcname:
        return "event loop (asyncio/anyio)"
    if "json" in filename or "json" in funcname:
        return "json"
    return "other (stdlib, builtins)"


async def profile(arms: Arms, runs: int) -> dict[str, Any]:
    """cProfile `runs` runs of bare and of consulta; own time per run grouped by area; top consulta functions."""
    results: dict[str, Any] = {}
    gc_time = {"t": 0.0, "start": 0.0}

    def on_gc(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            gc_time["start"] = time.perf_counter()
        else:
            gc_time["t"] += time.perf_counter() - gc_time["start"]

    for name, fn in (("bare", arms.bare), ("consulta", arms.consulta)):
        gc.collect()
        gc_time["t"] = 0.0
        gc.callbacks.append(on_gc)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(runs):
            await fn()
        profiler.disable()
        gc.callbacks.remove(on_gc)
        stats = pstats.Stats(profiler)
        areas: dict[str, float] = defaultdict(float)
        for (filename, _line, funcname), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            areas[area(filename, funcname)] += tottime
        own = {
            f"{Path(fn).name}:{line}({func})": (tt * 1000 / runs, nc / runs)
            for (fn, line, func), (_cc, nc, tt, _ct, _c) in stats.stats.items()
        }  # type: ignore[attr-defined]
        results[name] = {
            "areas_ms_per_run": {k: v * 1000 / runs for k, v in areas.items()},
            "gc_ms_per_run (included in the areas above)": gc_time["t"] * 1000 / runs,
            "stats": stats,
            "own": own,
        }
    # Top cumulative costs of consulta-specific functions (store and runtime), per run.
    stats = results["consulta"]["stats"]
    top = []
    for (filename, line, funcname), (_cc, nc, _tt, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/consulta/" in filename:
            top.append((cumtime * 1000 / runs, nc / runs, f"{Path(filename).name}:{line}({funcname})"))
    top.sort(reverse=True)
    own = sorted(
        (
            (tt * 1000 / runs, nc / runs, f"{Path(fn).name}:{line}({func})")
            for (fn, line, func), (_cc, nc, tt, _ct, _c) in stats.stats.items()
        ),  # type: ignore[attr-defined]
        reverse=True,
    )
    bare_own, consulta_own = results["bare"]["own"], results["consulta"]["own"]
    diff = sorted(((consulta_own[f][0] - bare_own.get(f, (0.0, 0.0))[0], f) for f in consulta_own), reverse=True)
    results["largest_own_time_differences"] = [
        {
            "extra_ms_per_run": d,
            "function": f,
            "calls_per_run_consulta": consulta_own[f][1],
            "calls_per_run_bare": bare_own.get(f, (0.0, 0.0))[1],
        }
        for d, f in diff[:20]
    ]
    for side in ("bare", "consulta"):
        del results[side]["stats"], results[side]["own"]
    results["top_consulta_cumulative"] = [
        {"ms_per_run": ms, "calls_per_run": n, "function": f} for ms, n, f in top[:15]
    ]
    results["top_consulta_own_time"] = [{"ms_per_run": ms, "calls_per_run": n, "function": f} for ms, n, f in own[:15]]
    return results


# ---- main ---------------------------------------------------------------------------------------------------------


def table(rows: list[tuple[Any, ...]], headers: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    print(" | ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(str(x).ljust(w) for x, w in zip(r, widths)))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    source = source_version()  # the commit this process imports, noted before the runs
    tmp = tempfile.mkdtemp(prefix="consulta-bench-steps-")
    try:
        ks = sorted({args.k, *args.k_sweep})
        by_k: dict[int, dict[str, Any]] = {}
        main_arms: Arms | None = None
        for k in ks:
            arms = Arms(k, tmp)
            rounds = args.rounds if k == args.k else args.sweep_rounds
            print(f"[K={k}] {rounds} rounds × 3 arms …", flush=True)
            times = await measure(arms, rounds, args.warmup, CLOCKS[args.clock])
            by_k[k] = summarise(times)
            by_k[k]["median_ms_per_run"] = {n: v * k for n, v in by_k[k]["median_ms_per_step"].items()}
            if k == args.k:
                main_arms = arms
            else:
                await arms.aclose()
        assert main_arms is not None
        print(
            f"[K={args.k}] breakdown: {args.breakdown_runs} wrapped runs, {args.profile_runs} profiled runs per side …",
            flush=True,
        )
        wrapped = await wrapped_breakdown(main_arms, args.breakdown_runs)
        profiled = await profile(main_arms, args.profile_runs)
        steps_per_run = main_arms.k
        await main_arms.aclose()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    s = by_k[args.k]
    med = s["median_ms_per_step"]
    ok = s["ratio_of_medians"] <= TARGET_RATIO
    print()
    print(
        f"Per-step {args.clock} time, K={args.k} tool steps + 1 final answer per run, {s['rounds']} interleaved rounds (median; IQR); source {source}"
    )
    table(
        [
            (
                "bare pydantic-ai (baseline)",
                f"{med['bare']:.3f}",
                f"{s['iqr_ms_per_step']['bare'][0]:.3f}–{s['iqr_ms_per_step']['bare'][1]:.3f}",
                "1.00x",
                "",
                "",
            ),
            (
                "consulta Runtime.run",
                f"{med['consulta']:.3f}",
                f"{s['iqr_ms_per_step']['consulta'][0]:.3f}–{s['iqr_ms_per_step']['consulta'][1]:.3f}",
                f"{s['ratio_of_medians']:.2f}x",
                f"<= {TARGET_RATIO}x",
                "PASS" if ok else "MISS",
            ),
            ("  (median of per-round ratios)", "", "", f"{s['median_of_round_ratios']:.2f}x", "", ""),
            (
                "bare, agent reused (info)",
                f"{med['bare_reused']:.3f}",
                "",
                f"{med['bare_reused'] / med['bare']:.2f}x",
                "",
                "",
            ),
        ],
        ("arm", "ms/step", "IQR ms/step", "ratio vs bare", "target", "result"),
    )
    if len(ks) > 1:
        print()
        print("K sweep (median ms per step / per run; ratio consulta/bare):")
        table(
            [
                (
                    k,
                    f"{v['median_ms_per_step']['bare']:.3f}",
                    f"{v['median_ms_per_step']['consulta']:.3f}",
                    f"{v['ratio_of_medians']:.2f}x",
                    f"{v['median_ms_per_run']['bare']:.1f}",
                    f"{v['median_ms_per_run']['consulta']:.1f}",
                    f"{v['median_ms_per_run']['consulta'] - v['median_ms_per_run']['bare']:.1f}",
                    f"{v['median_ms_per_step']['consulta'] - v['median_ms_per_step']['bare']:.2f}",
                )
                for k, v in sorted(by_k.items())
            ],
            (
                "K",
                "bare ms/step",
                "consulta ms/step",
                "ratio",
                "bare ms/run",
                "consulta ms/run",
                "extra ms/run",
                "extra ms/step",
            ),
        )
        lo, hi = min(ks), max(ks)
        marginal = {
            side: (by_k[hi]["median_ms_per_run"][side] - by_k[lo]["median_ms_per_run"][side]) / (hi - lo)
            for side in ("bare", "consulta")
        }
        fixed = {side: by_k[lo]["median_ms_per_run"][side] - marginal[side] * lo for side in ("bare", "consulta")}
        print(
            f"marginal cost of one more step (K={lo}→{hi}): bare {marginal['bare']:.3f} ms, consulta {marginal['consulta']:.3f} ms "
            f"({marginal['consulta'] / marginal['bare']:.2f}x); fixed cost per run: bare {fixed['bare']:.2f} ms, consulta {fixed['consulta']:.2f} ms"
        )
    else:
        marginal, fixed = {}, {}

    print()
    w_total, w_bare = wrapped["_total"]["ms_per_run"], wrapped["_bare_same_window"]["ms_per_run"]
    print(
        f"Where consulta's time goes (K={steps_per_run}; wall-time wrappers, {args.breakdown_runs} runs interleaved with bare runs: "
        f"consulta {w_total:.2f} ms/run, bare {w_bare:.2f} ms/run, extra {w_total - w_bare:.2f} ms/run):"
    )
    rows = sorted(
        ((k, v) for k, v in wrapped.items() if not k.startswith("_")),
        key=lambda kv: (kv[1]["thread"] != "loop", -kv[1]["ms_per_run"]),
    )
    extra = max(w_total - w_bare, 1e-9)
    on_loop = sum(
        v["ms_per_run"]
        for _k, v in rows
        if v["thread"] == "loop" and v["function"].startswith(("store.", "engine.", "runtime:"))
    )
    table(
        [
            (
                v["function"],
                v["thread"],
                f"{v['calls_per_run']:.1f}",
                f"{v['ms_per_run']:.2f}",
                f"{v['ms_per_run'] / w_total * 100:.0f}%",
                f"{v['ms_per_run'] / extra * 100:.0f}%" if v["thread"] == "loop" else "(overlaps)",
            )
            for _k, v in rows
            if v["calls_per_run"]
        ]
        + [
            (
                "all of the above on the loop",
                "loop",
                "",
                f"{on_loop:.2f}",
                f"{on_loop / w_total * 100:.0f}%",
                f"{on_loop / extra * 100:.0f}%",
            )
        ],
        ("function", "thread", "calls/run", "ms/run", "% of run", "% of extra"),
    )
    print(
        "(on the loop, store.* and engine.* add up; work on another thread overlaps the loop and costs the run only what the loop"
    )
    print(
        " waits for it — the drain row — plus GIL contention; dump_messages serialises the whole history for each checkpoint.)"
    )
    print()
    print(
        f"cProfile own time by area, ms per run ({args.profile_runs} runs per side, event-loop thread; profiler inflates all figures):"
    )
    areas = sorted(
        set(profiled["bare"]["areas_ms_per_run"]) | set(profiled["consulta"]["areas_ms_per_run"]),
        key=lambda a: (
            -(profiled["consulta"]["areas_ms_per_run"].get(a, 0) - profiled["bare"]["areas_ms_per_run"].get(a, 0))
        ),
    )
    table(
        [
            (
                a,
                f"{profiled['bare']['areas_ms_per_run'].get(a, 0):.2f}",
                f"{profiled['consulta']['areas_ms_per_run'].get(a, 0):.2f}",
                f"{profiled['consulta']['areas_ms_per_run'].get(a, 0) - profiled['bare']['areas_ms_per_run'].get(a, 0):+.2f}",
            )
            for a in areas
        ],
        ("area", "bare", "consulta", "extra"),
    )
    print("(event-loop thread only: work on the store writer thread is in the table above)")
    gc_key = "gc_ms_per_run (included in the areas above)"
    print(
        f"garbage collection pauses (spread over the areas): bare {profiled['bare'][gc_key]:.2f}, consulta {profiled['consulta'][gc_key]:.2f} ms/run"
    )
    print()
    print("Top consulta functions by cumulative time (cProfile, ms per run):")
    table(
        [
            (f"{t['ms_per_run']:.2f}", f"{t['calls_per_run']:.1f}", t["function"])
            for t in profiled["top_consulta_cumulative"][:10]
        ],
        ("ms/run", "calls/run", "function"),
    )
    print()
    print(
        "Largest own-time differences consulta - bare (cProfile, ms per run; GC pauses land on whatever function runs):"
    )
    table(
        [
            (
                f"{t['extra_ms_per_run']:+.2f}",
                f"{t['calls_per_run_bare']:.0f}",
                f"{t['calls_per_run_consulta']:.0f}",
                t["function"],
            )
            for t in profiled["largest_own_time_differences"][:12]
        ],
        ("extra ms/run", "calls bare", "calls consulta", "function"),
    )
    return {
        "benchmark": "step_overhead",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "source": source,
        "args": vars(args),
        "target_ratio": TARGET_RATIO,
        "verdict": "PASS" if ok else "MISS",
        "k": args.k,
        "summary": s,
        "by_k": {str(k): v for k, v in by_k.items()},
        "marginal_ms_per_step": marginal,
        "fixed_ms_per_run": fixed,
        "breakdown_wrapped": wrapped,
        "breakdown_profile": profiled,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=10, help="tool steps per run (default 10)")
    parser.add_argument("--rounds", type=int, default=50, help="interleaved rounds at K (default 50)")
    parser.add_argument(
        "--k-sweep",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[1, 24],
        help="other K to run for the fixed/marginal split, comma-separated ('' for none; default 1,24)",
    )
    parser.add_argument("--sweep-rounds", type=int, default=30, help="rounds for each sweep K (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured rounds first (default 3)")
    parser.add_argument("--breakdown-runs", type=int, default=20, help="consulta runs under the wall-time wrappers")
    parser.add_argument("--profile-runs", type=int, default=10, help="runs per side under cProfile")
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke test")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="time the arms by wall clock (default) or by process CPU time (steadier on a busy machine)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.k_sweep, args.sweep_rounds, args.warmup, args.breakdown_runs, args.profile_runs = (
            10,
            [1],
            5,
            1,
            5,
            3,
        )
    gc.collect()
    result = asyncio.run(run(args))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"step_overhead{'.quick' if args.quick else ''}{'.cpu' if args.clock == 'cpu' else ''}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    sys.exit(main())
