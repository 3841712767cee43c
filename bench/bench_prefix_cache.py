"""Step 1 of an ln2 request on the embedded model: prompt time with and without the saved prompt prefix.

Every run of an app starts with the same system message (instructions, tool list, reply format; ~1,200 tokens for
ln2). `LocalModel` with a `PrefixCache` saves llama.cpp's state after it once and loads that file at the start of
every later run and process (see `consulta.models`). This benchmark measures what that buys on the real ln2 agent:

* the step-1 request is captured from a real `Runtime.run` of the ln2 agent (its instructions over the sample
  inventory, its tools, the question tool) on the embedded model;
* then, alternating, `--rounds` times each (default 5), one step is run on a context emptied first (as in a new
  process, or after another agent's prompt replaced the KV cache) with `max_tokens=1`, so the time is the prompt's:
  - **cold** (baseline): no saved prefix — the whole prompt is evaluated;
  - **saved prefix**: the prefix cache holds the system message — its state file is loaded, only the rest evaluated.
  The figure is the wall time of the model call (tokenising, loading the state file, evaluating, one token sampled).

Ratio = median cold / median with the saved prefix; target ≥ 5×. The state file's size and load time are printed too.
The request → first tool call and whole-request medians over many requests are `eval_ln2.py`'s (same model, real
requests).

    .venv/bin/python bench/bench_prefix_cache.py [--rounds 5]     # writes bench/results/prefix_cache.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pydantic_ai.messages import ModelMessage  # noqa: E402
from pydantic_ai.models import ModelRequestParameters  # noqa: E402
from pydantic_ai.settings import ModelSettings  # noqa: E402

from _common import source_version  # noqa: E402
from consulta.apps import AppEnv, get_app  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import LocalModel, PrefixCache  # noqa: E402
from consulta.models._gguf import ensure_default_gguf  # noqa: E402
from consulta.runtime import Runtime, Store  # noqa: E402

TARGET = 5.0
REQUEST = "Do we have any HeLa cells left?"


class _Captured(Exception):
    pass


class CapturingModel(LocalModel):
    """The embedded model that records its first request and stops the run there."""

    captured: tuple[list[ModelMessage], ModelSettings | None, ModelRequestParameters] | None = None

    async def request(self, messages, model_settings, model_request_parameters):  # type: ignore[override]
        self.captured = (list(messages), model_settings, model_request_parameters)
        raise _Captured


async def capture_step_one(
    gguf: Path, home: Path
) -> tuple[list[ModelMessage], ModelSettings | None, ModelRequestParameters]:
    model = CapturingModel(gguf, n_ctx=8192)
    store = Store(f"sqlite:///{home}/bench.db")
    runtime = Runtime(store=store, resolve_model=lambda spec: model)
    app = get_app("ln2")
    env = AppEnv(store=store, resolve_model=runtime.resolve_model, model="local", lang="en", data_dir=home)
    options = app.options.model_validate({})
    agent = app.build(app.main_agent, options, env)
    try:
        await runtime.run(agent, REQUEST, model="local", lang="en")
    except _Captured:
        pass
    finally:
        await runtime.aclose()
        store.close()
    assert model.captured is not None, "the run never reached the model"
    return model.captured


def empty_context(model: LocalModel) -> None:
    llama = model.llama
    llama._ctx.kv_cache_seq_rm(-1, 0, -1)
    llama.reset()


async def one_step(model: LocalModel, captured: Any) -> tuple[float, Any]:
    messages, settings, params = captured
    settings = ModelSettings(**(settings or {}), max_tokens=1)
    started = time.perf_counter()
    await model.request(messages, settings, params)
    return time.perf_counter() - started, model.last_stats


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "prefix_cache.json"))
    args = parser.parse_args()
    gguf = Path(os.environ.get("CONSULTA_GGUF") or ensure_default_gguf(Settings.from_env().models_dir))

    with tempfile.TemporaryDirectory(prefix="consulta-bench-prefix-") as tmp:
        home = Path(tmp)
        captured = await capture_step_one(gguf, home)
        cache = PrefixCache(home / "prefix-cache")
        cold_model = LocalModel(gguf, n_ctx=8192, n_threads=args.threads)
        warm_model = LocalModel(gguf, n_ctx=8192, n_threads=args.threads, prefix_cache=cache)
        # The first saved-prefix step saves the state (the first run ever); not timed.
        empty_context(warm_model)
        _, first = await one_step(warm_model, captured)
        assert first is not None and first.prefix_saved, "the first step should have saved its system message"
        state_files = list((home / "prefix-cache").rglob("*.state"))
        state_mb = sum(p.stat().st_size for p in state_files) / 1e6

        cold: list[float] = []
        warm: list[float] = []
        warm_stats = cold_stats = None
        for index in range(args.rounds):
            order = [("cold", cold_model), ("warm", warm_model)]
            if index % 2:
                order.reverse()
            for name, model in order:
                empty_context(model)
                seconds, stats = await one_step(model, captured)
                (cold if name == "cold" else warm).append(seconds)
                if name == "cold":
                    cold_stats = stats
                else:
                    warm_stats = stats
            print(f"round {index + 1}: cold {cold[-1]:.2f} s, saved prefix {warm[-1]:.2f} s", flush=True)
        cold_model.close()
        warm_model.close()

    ratio = statistics.median(cold) / statistics.median(warm)
    verdict = "PASS" if ratio >= TARGET else "MISS"
    assert cold_stats is not None and warm_stats is not None
    print()
    print(
        f"step-1 prompt: {cold_stats.prompt_tokens} tokens; saved prefix {warm_stats.restored_tokens} tokens ({state_mb:.1f} MB on disk)"
    )
    print(
        f"cold (baseline):  median {statistics.median(cold):.2f} s  (evaluated {cold_stats.prompt_eval_tokens} tokens)"
    )
    print(
        f"saved prefix:     median {statistics.median(warm):.2f} s  (evaluated {warm_stats.prompt_eval_tokens} tokens)"
    )
    print(f"ratio {ratio:.1f}x faster (target >= {TARGET:.0f}x): {verdict}")
    Path(args.out).write_text(
        json.dumps(
            {
                "benchmark": "step-1 prompt time with and without the saved prefix (ln2 agent, embedded model)",
                "source": source_version(),
                "cpus": os.cpu_count(),
                "threads": args.threads,
                "command": "python bench/bench_prefix_cache.py " + " ".join(sys.argv[1:]),
                "prompt_tokens": cold_stats.prompt_tokens,
                "restored_tokens": warm_stats.restored_tokens,
                "state_mb": round(state_mb, 1),
                "cold_s": cold,
                "saved_prefix_s": warm,
                "ratio": round(ratio, 2),
                "target": TARGET,
                "verdict": verdict,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
