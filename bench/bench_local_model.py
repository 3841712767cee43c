"""Benchmark Consulta's embedded model (LocalModel through pydantic-ai) against raw llama-cpp-python.

Same GGUF, same Llama instance, same prompt tokens, same grammar, greedy sampling, 2 threads. Three measurements,
each the median of `--repeats` rounds (default 5); within a round raw and LocalModel run back to back, in alternating
order, so a burst of load from another process does not always hit the same side:

1. text generation speed: a plain answer with no tools (no grammar);
2. JSON generation speed: a step-2 reply under the step's JSON-schema grammar;
3. prefix reuse: an agent with inventory tools answers "我需要K562细胞, 有哪些?" - step 2 (after the tool result)
   should evaluate only the new tokens, so its prompt time should be a fraction of step 1's.

Generation speed is generated tokens / (wall time of the call - llama.cpp's prompt-eval time), so it includes every
overhead after the prompt: sampling, grammar, detokenising, pydantic-ai and the worker thread.

Run: .venv/bin/python bench/bench_local_model.py  (writes bench/results/local_model.json)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import llama_cpp
from llama_cpp.llama_grammar import LlamaGrammar
from pydantic_ai import Agent
from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters

from consulta.config import Settings
from consulta.models._gguf import DEFAULT_GGUF, ensure_default_gguf
from consulta.models._local import LocalModel

TARGET_GEN_RATIO = 0.95
TARGET_PREFIX_SPEEDUP = 3.0

INSTRUCTIONS = (
    "You help the staff of a cell-culture lab manage their liquid-nitrogen inventory. Look things up with the "
    "tools before you answer; never guess box or slot numbers. Answer in the user's language, briefly."
)
USER = "我需要K562细胞, 有哪些?"
TEXT_PROMPT = "Explain step by step how to thaw a cryopreserved vial of K562 cells and start a culture."
INVENTORY = [
    {"box": 3, "slot": 12, "cell_line": "K562", "frozen": "2024-03-01", "passage": 8},
    {"box": 5, "slot": 2, "cell_line": "K562", "frozen": "2023-11-20", "passage": 11},
]


def build_agent(model: LocalModel) -> Agent[None, str]:
    """An agent shaped like the LN2 app: a handful of read and write tools."""
    agent = Agent(model, instructions=INSTRUCTIONS)

    @agent.tool_plain
    def query_inventory(cell_line: str | None = None, short_name: str | None = None) -> list[dict[str, Any]]:
        """Find vials in the inventory by cell line or short name.

        Args:
            cell_line: full cell line name, e.g. "K562" or "HEK293T".
            short_name: the lab's short name for a clone or batch.
        """
        return INVENTORY

    @agent.tool_plain
    def list_boxes(rack: int | None = None) -> list[dict[str, Any]]:
        """List the boxes with how many of their slots are free.

        Args:
            rack: only the boxes of this rack.
        """
        return [{"box": 3, "free": 20}, {"box": 5, "free": 4}]

    @agent.tool_plain
    def add_vials(cell_line: str, box: int, slots: list[int], frozen: str, note: str | None = None) -> dict[str, Any]:
        """Record newly frozen vials of a cell line.

        Args:
            cell_line: the cell line frozen.
            box: the box the vials went into.
            slots: the slot numbers used, 1-81.
            frozen: the freezing date, YYYY-MM-DD.
            note: passage number, medium or anything else worth keeping.
        """
        return {"ok": True}

    @agent.tool_plain
    def take_out(box: int, slot: int, reason: str) -> dict[str, Any]:
        """Record that the vial in a box slot was taken out.

        Args:
            box: the box number.
            slot: the slot number, 1-81.
            reason: why, e.g. "thaw for culture" or "discard".
        """
        return {"ok": True}

    @agent.tool_plain
    def move_vial(box: int, slot: int, to_box: int, to_slot: int) -> dict[str, Any]:
        """Move one vial to another slot.

        Args:
            box: the box it is in now.
            slot: the slot it is in now.
            to_box: the box it goes to.
            to_slot: the slot it goes to.
        """
        return {"ok": True}

    @agent.tool_plain
    def history(box: int, slot: int) -> list[dict[str, Any]]:
        """The audit history of one box slot: who put in or took out what, and when.

        Args:
            box: the box number.
            slot: the slot number, 1-81.
        """
        return []

    return agent


@dataclass
class GenRun:
    prompt_tokens: int
    prompt_seconds: float
    generated_tokens: int
    generation_seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.generated_tokens / self.generation_seconds


def raw_generation(llama: llama_cpp.Llama, chat: list[dict[str, Any]], grammar: str | None, max_tokens: int) -> GenRun:
    """Raw llama-cpp-python: create_chat_completion on a cold KV cache with the GGUF's own chat template."""
    llama.reset()
    llama_cpp.llama_perf_context_reset(llama.ctx)
    start = time.perf_counter()
    out = llama.create_chat_completion(
        messages=chat,  # type: ignore[arg-type]
        max_tokens=max_tokens,
        temperature=0.0,
        repeat_penalty=1.0,
        seed=0,
        grammar=LlamaGrammar.from_string(grammar, verbose=False) if grammar else None,
    )
    wall = time.perf_counter() - start
    perf = llama_cpp.llama_perf_context(llama.ctx)
    usage = out["usage"]  # type: ignore[index]
    prompt_seconds = perf.t_p_eval_ms / 1000
    return GenRun(usage["prompt_tokens"], prompt_seconds, usage["completion_tokens"], wall - prompt_seconds)


def local_generation(model: LocalModel, call: Any) -> GenRun:
    """LocalModel through pydantic-ai on a cold KV cache; `call` makes one model request."""
    model.llama.reset()
    start = time.perf_counter()
    call()
    wall = time.perf_counter() - start
    stats = model.last_stats
    assert stats is not None
    return GenRun(stats.prompt_tokens, stats.prompt_seconds, stats.generated_tokens, wall - stats.prompt_seconds)


def step_two_history() -> list[ModelMessage]:
    call = ToolCallPart("query_inventory", {"cell_line": "K562"}, tool_call_id="call_1")
    return [
        ModelRequest(parts=[UserPromptPart(USER)]),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[ToolReturnPart("query_inventory", INVENTORY, tool_call_id="call_1")]),
    ]


async def prefix_run(model: LocalModel, agent: Agent[None, str]) -> list[dict[str, Any]]:
    """One agent run from a cold cache; the StepStats of each model request, in order."""
    model.llama.reset()
    steps: list[dict[str, Any]] = []
    async with agent.iter(USER) as run:
        async for node in run:
            if Agent.is_call_tools_node(node):  # the model request before it has just finished
                assert model.last_stats is not None
                steps.append(asdict(model.last_stats))
    return steps


def median_run(runs: list[GenRun]) -> dict[str, Any]:
    return {
        "prompt_tokens": runs[0].prompt_tokens,
        "generated_tokens": runs[0].generated_tokens,
        "prompt_seconds": statistics.median(r.prompt_seconds for r in runs),
        "generation_seconds": statistics.median(r.generation_seconds for r in runs),
        "gen_tokens_per_second": statistics.median(r.tokens_per_second for r in runs),
        # Other processes on a 2-core machine make single runs up to 10x slower (ggml's threads wait for each other
        # at every barrier); the best run is the least disturbed one.
        "best_gen_tokens_per_second": max(r.tokens_per_second for r in runs),
        "all_gen_tokens_per_second": [round(r.tokens_per_second, 2) for r in runs],
    }


def wait_for_idle(limit: float) -> None:
    deadline = time.monotonic() + limit
    while os.getloadavg()[0] >= 0.5 and time.monotonic() < deadline:
        time.sleep(5)
    if os.getloadavg()[0] >= 0.5:
        print(f"note: load average {os.getloadavg()[0]:.2f}; other processes will slow both sides", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gguf", type=Path, default=None, help="a GGUF to use instead of the embedded default")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "local_model.json")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to this long for the 1-minute load average to drop below 0.5 (2 cores: any other "
        "busy process halves the figures)",
    )
    args = parser.parse_args()
    wait_for_idle(args.wait_idle)
    load_before = os.getloadavg()

    gguf = args.gguf or ensure_default_gguf(Settings.from_env().models_dir)
    model = LocalModel(gguf, n_ctx=4096, n_threads=args.threads, max_tokens=args.max_tokens)
    start = time.perf_counter()
    model.load()
    load_seconds = time.perf_counter() - start
    llama = model.llama
    agent = build_agent(model)
    plain_agent = Agent(model, instructions=INSTRUCTIONS)
    settings = {"max_tokens": args.max_tokens}

    # The same prompts, as LocalModel renders them, for the raw side.
    text_chat = model.render([ModelRequest(parts=[UserPromptPart(TEXT_PROMPT)], instructions=INSTRUCTIONS)]).chat
    tool_params = ModelRequestParameters(
        function_tools=[t.tool_def for t in agent.toolsets[0].tools.values()],  # type: ignore[attr-defined]
        allow_text_output=True,
        instruction_parts=None,
    )
    history = step_two_history()
    history[0].instructions = INSTRUCTIONS  # type: ignore[union-attr]
    json_step = model.render(history, settings, tool_params)  # type: ignore[arg-type]

    def local_text() -> None:
        plain_agent.run_sync(TEXT_PROMPT, model_settings=settings)  # type: ignore[arg-type]

    def local_json() -> None:
        asyncio.run(model_request(model, history, model_settings=settings, model_request_parameters=tool_params))  # type: ignore[arg-type]

    print(f"model {gguf.name}, {args.threads} threads, loaded in {load_seconds:.1f} s; warming up...", flush=True)
    raw_generation(llama, text_chat, None, 8)

    text_raw, text_local, json_raw, json_local, prefix = [], [], [], [], []
    for i in range(args.repeats):
        print(f"round {i + 1}/{args.repeats}", flush=True)
        # Alternate which side goes first, so a burst of load from elsewhere does not always hit the same side.
        sides = [
            (text_raw, lambda: raw_generation(llama, text_chat, None, args.max_tokens)),
            (text_local, lambda: local_generation(model, local_text)),
        ]
        json_sides = [
            (json_raw, lambda: raw_generation(llama, json_step.chat, json_step.grammar, args.max_tokens)),
            (json_local, lambda: local_generation(model, local_json)),
        ]
        for runs, measure in (sides if i % 2 == 0 else sides[::-1]) + (json_sides if i % 2 else json_sides[::-1]):
            runs.append(measure())
        prefix.append(asyncio.run(prefix_run(model, agent)))

    for raw, local in ((text_raw, text_local), (json_raw, json_local)):
        if raw[0].prompt_tokens != local[0].prompt_tokens or raw[0].generated_tokens != local[0].generated_tokens:
            print("warning: raw and LocalModel did not see/produce the same tokens", raw[0], local[0], file=sys.stderr)

    step1 = [p[0] for p in prefix]
    step2 = [p[1] for p in prefix if len(p) > 1]
    results: dict[str, Any] = {
        "text": {"raw": median_run(text_raw), "local": median_run(text_local)},
        "json": {"raw": median_run(json_raw), "local": median_run(json_local)},
    }
    for kind in ("text", "json"):
        r = results[kind]
        raw_runs, local_runs = (text_raw, text_local) if kind == "text" else (json_raw, json_local)
        # Each round's raw and LocalModel runs are back to back: the median of their ratios cancels slow drifts in
        # the machine's load better than the ratio of the two medians.
        pair_ratios = [b.tokens_per_second / a.tokens_per_second for a, b in zip(raw_runs, local_runs, strict=True)]
        r["pair_ratios"] = [round(x, 3) for x in pair_ratios]
        r["ratio_local_over_raw"] = statistics.median(pair_ratios)
        r["ratio_of_medians"] = r["local"]["gen_tokens_per_second"] / r["raw"]["gen_tokens_per_second"]
        r["best_ratio_local_over_raw"] = (
            r["local"]["best_gen_tokens_per_second"] / r["raw"]["best_gen_tokens_per_second"]
        )
    if len(step2) == len(step1):
        speedups = [a["prompt_seconds"] / b["prompt_seconds"] for a, b in zip(step1, step2, strict=False)]
        results["prefix"] = {
            "step1": {
                k: statistics.median(s[k] for s in step1)
                for k in ("prompt_tokens", "prompt_eval_tokens", "prompt_seconds")
            },
            "step2": {
                k: statistics.median(s[k] for s in step2)
                for k in ("prompt_tokens", "reused_tokens", "prompt_eval_tokens", "prompt_seconds")
            },
            "speedup_step1_over_step2": statistics.median(speedups),
            "best_speedup": max(speedups),
            "all_speedups": [round(s, 2) for s in speedups],
        }
    else:
        results["prefix"] = {"error": "the agent did not make a tool call on step 1", "runs": prefix}

    report = {
        "command": "python bench/bench_local_model.py " + " ".join(sys.argv[1:]),
        "model": {"file": gguf.name, "sha256": DEFAULT_GGUF.sha256 if args.gguf is None else None},
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "llama_cpp_python": llama_cpp.__version__,
        "threads": args.threads,
        "repeats": args.repeats,
        "max_tokens": args.max_tokens,
        "load_seconds": load_seconds,
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "targets": {"gen_ratio_min": TARGET_GEN_RATIO, "prefix_speedup_min": TARGET_PREFIX_SPEEDUP},
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    print()
    print(f"median of {args.repeats}; ratio = median of the rounds' LocalModel/raw ratios (best runs in brackets)")
    print(f"{'measurement':<34}{'raw':>12}{'LocalModel':>12}{'ratio':>8}  target")
    for kind, label in (("text", "gen tok/s, plain text"), ("json", "gen tok/s, JSON under grammar")):
        r = results[kind]
        ok = "ok" if r["ratio_local_over_raw"] >= TARGET_GEN_RATIO else "MISSED"
        print(
            f"{label:<34}{r['raw']['gen_tokens_per_second']:>12.2f}{r['local']['gen_tokens_per_second']:>12.2f}"
            f"{r['ratio_local_over_raw']:>8.3f}  >= {TARGET_GEN_RATIO} {ok}"
        )
        print(
            f"{'':<34}{'(' + format(r['raw']['best_gen_tokens_per_second'], '.2f') + ')':>12}"
            f"{'(' + format(r['local']['best_gen_tokens_per_second'], '.2f') + ')':>12}"
            f"{'(' + format(r['best_ratio_local_over_raw'], '.3f') + ')':>8}"
        )
    if "speedup_step1_over_step2" in results["prefix"]:
        p = results["prefix"]
        one, two = p["step1"], p["step2"]
        ok = "ok" if p["speedup_step1_over_step2"] >= TARGET_PREFIX_SPEEDUP else "MISSED"
        print(
            f"{'prompt s, step 1 -> step 2':<34}{one['prompt_seconds']:>12.2f}{two['prompt_seconds']:>12.2f}"
            f"{p['speedup_step1_over_step2']:>7.1f}x  >= {TARGET_PREFIX_SPEEDUP}x {ok}"
        )
        print(
            f"  step 1 evaluated {one['prompt_eval_tokens']:.0f} of {one['prompt_tokens']:.0f} prompt tokens; "
            f"step 2 reused {two['reused_tokens']:.0f} and evaluated {two['prompt_eval_tokens']:.0f} "
            f"of {two['prompt_tokens']:.0f}"
        )
    else:
        print("prefix reuse: the agent did not call a tool on step 1; see the JSON")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
