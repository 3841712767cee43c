"""One step of the embedded model with llama.cpp's threads fitted to the free cores, against a fixed thread count.

llama.cpp's threads meet at a barrier after every layer and spin while they wait. On a 2-core machine another
process that wants a core (a test suite, a second model, a build) deschedules one of them at every barrier, so two
threads can be slower than one. `LocalModel` now gives each step the cores free at its start (`threads_for_now`,
in `consulta.models._llama_cpu`); this benchmark measures what that buys and what it costs, in the same run:

* **baseline**: every step on `n_threads` threads (the behaviour before: every core);
* **fitted**: each step on the cores free at its start (at most `n_threads`).

Each is run `--rounds` times (alternating) in two conditions: **alone** (nothing else asked for; whatever else runs
on the machine is reported as its load average), and **beside a busy process** (one Python loop on one core, started
by the benchmark). One step: a short prompt, a context emptied first, 48 tokens generated greedily.

Ratio = median baseline / median fitted, per condition (> 1: fitted is faster).

    .venv/bin/python bench/bench_threads.py [--rounds 3]     # writes bench/results/threads.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import LocalModel, _local  # noqa: E402
from consulta.models._gguf import ensure_default_gguf  # noqa: E402

PROMPT = "List five things a lab must record about each frozen cell vial, one per line."
TOKENS = 48


def _busy(stop: Any) -> None:
    while not stop.is_set():
        sum(range(10_000))


def _step(model: LocalModel) -> float:
    from pydantic_ai import Agent

    model.llama.reset()  # a context emptied first: the prompt is read every time
    started = time.perf_counter()
    Agent(model).run_sync(PROMPT, model_settings={"max_tokens": TOKENS, "temperature": 0.0})
    return time.perf_counter() - started


def _measure(model: LocalModel, rounds: int) -> dict[str, list[float]]:
    fitted = _local.threads_for_now
    times: dict[str, list[float]] = {"baseline": [], "fitted": []}
    for _ in range(rounds):
        for kind in ("baseline", "fitted"):
            _local.threads_for_now = (lambda most, **_: most) if kind == "baseline" else fitted  # type: ignore[assignment]
            try:
                times[kind].append(round(_step(model), 2))
            finally:
                _local.threads_for_now = fitted
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "threads.json")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    model = LocalModel(ensure_default_gguf(Settings.from_env().models_dir), n_ctx=2048, n_threads=cores)
    model.load()
    _step(model)  # warm-up: pages the weights in
    results: dict[str, Any] = {}
    for condition in ("alone", "beside a busy process"):
        stop = multiprocessing.Event()
        busy = multiprocessing.Process(target=_busy, args=(stop,)) if condition != "alone" else None
        if busy is not None:
            busy.start()
            time.sleep(1)
        load_before = os.getloadavg()[0]
        try:
            times = _measure(model, args.rounds)
        finally:
            if busy is not None:
                stop.set()
                busy.join(10)
        medians = {k: statistics.median(v) for k, v in times.items()}
        results[condition] = {
            "seconds": times,
            "median_s": medians,
            "ratio_baseline_over_fitted": round(medians["baseline"] / medians["fitted"], 2),
            "load_average_1min_at_start": round(load_before, 2),
        }
        print(
            f"{condition}: baseline ({cores} threads) {medians['baseline']:.2f} s, fitted {medians['fitted']:.2f} s "
            f"→ ratio {results[condition]['ratio_baseline_over_fitted']}× (load {load_before:.2f})"
        )
    model.close()
    report = {
        "benchmark": "bench_threads",
        "source": source_version(),
        "cpus": cores,
        "prompt": PROMPT,
        "tokens": TOKENS,
        "rounds": args.rounds,
        "command": "python bench/bench_threads.py " + " ".join(sys.argv[1:]),
        "conditions": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
