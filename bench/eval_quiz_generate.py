"""Mode 1 (generate → validate → save) on a model chosen by flag: N requests across the three categories, levels 1-10
and both languages, each run as `consulta chat quiz -p "…"` runs it (the quiz agent on the runtime, one fresh run per
request, one model for all: the local model's prefix cache holds across them).

For each request it records the drafts code checked (the model's first ones and each rewrite it wrote from a
rejection's one reason), how many passed validation (tool 4's final score at least 0.70; a copy, another language,
another topic or a structural flaw is refused in code before it, and counts as failing) and were saved (tool 5), the
rewrites and their reasons, the blind key checks and saved items whose key that check disputed, the run's status and
seconds. It prints and saves:

- items generated per minute (drafts checked / wall-clock minutes of the runs),
- items saved per minute,
- the share of drafts passing validation.

    .venv/bin/python bench/eval_quiz_generate.py [--model local | --model scripted:PATH] [--requests N] [--held-out]
        [--start I] [--out FILE]

With the default `--model local` the results go to bench/results/quiz_generate.json. Run the embedded model under
the shared lock: `flock /work/model.lock .venv/bin/python bench/eval_quiz_generate.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.frontends import AppHost  # noqa: E402
from consulta.runtime import RunStatus  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

REQUESTS: list[tuple[str, str]] = [
    ("en", "Generate 2 technical questions about SQL at level 3"),
    ("zh-CN", "生成2道关于计算机网络的技术类题目，难度5"),
    ("en", "Generate 2 business questions about Accounting at level 4"),
    ("zh-CN", "生成2道关于逻辑推理的通用类题目，难度4"),
    ("en", "Generate 2 general questions about Critical thinking at level 6"),
    ("zh-CN", "生成2道关于项目管理的商业类题目，难度6"),
    ("en", "Generate 2 technical questions about Python at level 7"),
    ("zh-CN", "生成2道关于统计学的技术类题目，难度2"),
    ("en", "Generate 2 business questions about Marketing at level 2"),
    ("zh-CN", "生成2道关于沟通的通用类题目，难度3"),
    ("en", "Generate 2 technical questions about Networking at level 9"),
    ("zh-CN", "生成2道关于财务管理的商业类题目，难度8"),
    ("en", "Generate 2 general questions about Probability at level 10"),
    ("zh-CN", "生成2道关于算法的技术类题目，难度7"),
    ("en", "Generate 2 business questions about Finance at level 1"),
    ("zh-CN", "生成2道关于决策的通用类题目，难度9"),
]
"""The requests, cycled when N is larger: every category, levels 1-10, English and Chinese alternating."""

HELD_OUT: list[tuple[str, str]] = [
    ("en", "Generate 2 general questions about Photosynthesis at level 3"),
    ("zh-CN", "用中文给高中生出2道关于二次函数的题，难度5"),
    ("en", "Generate 2 technical questions about Operating systems at level 6"),
    ("zh-CN", "生成2道关于中国地理的通用类题目，难度4"),
    ("en", "Generate 2 business questions about Supply chains at level 5"),
    ("zh-CN", "生成2道关于化学反应的技术类题目，难度6"),
    ("en", "Generate 2 technical questions about Cryptography at level 4"),
    ("zh-CN", "生成2道关于世界历史的通用类题目，难度3"),
    ("en", "Generate 2 general questions about The solar system at level 2"),
    ("zh-CN", "生成2道关于电子商务的商业类题目，难度5"),
    ("en", "Generate 2 business questions about Customer service at level 6"),
    ("zh-CN", "生成2道关于编译原理的技术类题目，难度7"),
    ("en", "Generate 2 general questions about Human anatomy at level 5"),
    ("zh-CN", "生成2道关于软件测试的技术类题目，难度4"),
    ("en", "Generate 2 technical questions about Cloud computing at level 7"),
    ("zh-CN", "生成2道关于经济学的商业类题目，难度3"),
    ("en", "Generate 2 general questions about Ecology at level 3"),
    ("zh-CN", "生成2道关于物理的通用类题目，难度6"),
    ("en", "Generate 2 business questions about Human resources at level 4"),
    ("zh-CN", "生成2道关于天文学的通用类题目，难度2"),
]
"""Requests on topics not in the shipped bank and not used while the generator and its checks were built
(`--held-out`; the first six as in the runs before the list grew to twenty)."""

FRESH: list[tuple[str, str]] = [
    ("en", "Generate 2 general questions about Volcanoes at level 3"),
    ("zh-CN", "生成2道关于光学的通用类题目，难度4"),
    ("en", "Generate 2 technical questions about Linux shell commands at level 4"),
    ("zh-CN", "生成2道关于遗传学的技术类题目，难度5"),
    ("en", "Generate 2 business questions about Negotiation at level 5"),
    ("zh-CN", "生成2道关于唐朝历史的通用类题目，难度3"),
    ("en", "Generate 2 general questions about Nutrition at level 2"),
    ("zh-CN", "生成2道关于税务的商业类题目，难度6"),
    ("en", "Generate 2 technical questions about Machine learning at level 6"),
    ("zh-CN", "生成2道关于微积分的通用类题目，难度7"),
    ("en", "Generate 2 business questions about Insurance at level 3"),
    ("zh-CN", "生成2道关于环境保护的通用类题目，难度2"),
    ("en", "Generate 2 general questions about Ancient Rome at level 4"),
    ("zh-CN", "生成2道关于汽车工程的技术类题目，难度6"),
    ("en", "Generate 2 technical questions about Computer graphics at level 5"),
    ("zh-CN", "生成2道关于品牌管理的商业类题目，难度4"),
    ("en", "Generate 2 business questions about International trade at level 7"),
    ("zh-CN", "生成2道关于心理学的通用类题目，难度5"),
    ("en", "Generate 2 general questions about The immune system at level 6"),
    ("zh-CN", "生成2道关于嵌入式系统的技术类题目，难度8"),
]
"""Requests written after every run of the lists above (Nov 2026, quiz30), on topics neither the bank, REQUESTS nor
HELD_OUT has, English and Chinese alternating over the three categories (`--fresh`)."""


@dataclass
class Outcome:
    lang: str
    request: str
    status: str
    seconds: float
    drafts: int
    passed: int
    saved: int
    rejected: list[dict[str, Any]]
    output: str
    blind_checked: int = 0
    blind_disagreed: int = 0
    copies_refused: int = 0
    rewrites: int = 0
    problems: list[str] = field(default_factory=list)
    saved_items: list[dict[str, Any]] = field(default_factory=list)
    saved_key_disputed: int = 0
    validations: list[dict[str, Any]] = field(default_factory=list)
    """Each tool 4 call: seconds, final score, the key's position among the options, the blind answer's."""
    timing: dict[str, float] = field(default_factory=dict)
    """Where the run's seconds went (`timing_of`)."""
    model_steps: list[dict[str, Any]] = field(default_factory=list)
    """The embedded model's steps in the run (its writing and rewrites, not the label reads): tokens and seconds."""


def outcome_of(host: AppHost, run: Any, lang: str, request: str, seconds: float) -> Outcome:
    """One run's figures from its record. Drafts: every draft code checked, the model's first ones and each rewrite
    that changed the draft (`drafts_checked` of the submit's result; before rewrites existed, the submitted ones)."""
    calls = host.store.list_tool_calls(run.id)
    checked = [c for c in calls if c.tool_name == "validate_question_quality"]
    passed = sum(1 for c in checked if isinstance(c.result, dict) and float(c.result.get("final_score", 0)) >= 0.70)
    blind = [c.result.get("blind_check") for c in checked if isinstance(c.result, dict) and c.result.get("blind_check")]
    submits = [c for c in calls if c.tool_name == "submit_questions"]
    submit = submits[-1] if submits else None
    submitted = submit.result if submit is not None and isinstance(submit.result, dict) else {}
    drafts = sum(
        int(c.result["drafts_checked"])
        if isinstance(c.result, dict) and "drafts_checked" in c.result
        else len(c.args.get("questions") or [])
        for c in submits
        if isinstance(c.args, dict)
    )
    rewrites = [c for c in calls if c.tool_name == "rewrite_question" and isinstance(c.args, dict)]
    final_rejected = list(submitted.get("rejected") or [])
    return Outcome(
        lang=lang,
        request=request,
        status=str(run.status),
        seconds=round(seconds, 2),
        drafts=drafts,
        passed=passed,
        saved=int(submitted.get("saved", 0) or 0),
        rejected=final_rejected,
        output=run.output or run.error or "",
        blind_checked=len(blind),
        blind_disagreed=sum(1 for b in blind if not b.get("agrees")),
        copies_refused=sum(c.args.get("problem") == "copies_existing_question" for c in rewrites)
        + sum("copies_existing_question" in (r.get("issues") or []) for r in final_rejected),
        rewrites=len(rewrites),
        problems=[str(c.args.get("problem")) for c in rewrites],
        saved_items=[
            {
                "stem": i.get("stem"),
                "choices": i.get("choices"),
                "key": (i.get("answer_schema") or {}).get("correct_key"),
            }
            | {"keywords": i.get("correct_keywords"), "validation_score": i.get("validation_score")}
            for i in submitted.get("items") or []
        ],
        saved_key_disputed=_saved_key_disputed(checked, submitted),
        validations=[_validation(c) for c in checked],
        timing=timing_of(calls, seconds),
    )


def timing_of(calls: list[Any], seconds: float) -> dict[str, float]:
    """Where a run's seconds went, from its recorded calls: `write_s` the model writing the drafts (the run less the
    submit call and the first look), `rewrite_s` the model's rewrites, `validate_s` tool 4 (blind answer and
    ratings), `save_s` tool 5, `code_checks_s` the rest of the submit call (code's checks and the topic reading)."""

    def spent(name: str) -> float:
        return sum(c.duration_ms for c in calls if c.tool_name == name) / 1000

    submit = spent("submit_questions")
    parts = {
        "rewrite_s": spent("rewrite_question"),
        "validate_s": spent("validate_question_quality"),
        "save_s": spent("save_generated_question"),
    }
    first_look = sum(c.duration_ms for c in calls if c.tool_call_id.startswith("look_")) / 1000
    timing = {
        "write_s": seconds - submit - first_look,
        "first_look_s": first_look,
        **parts,
        "code_checks_s": submit - sum(parts.values()),
    }
    return {k: round(v, 2) for k, v in timing.items()}


def _validation(call: Any) -> dict[str, Any]:
    args = call.args if isinstance(call.args, dict) else {}
    result = call.result if isinstance(call.result, dict) else {}
    choices = args.get("choices") or []
    blind = result.get("blind_check") or {}
    key = args.get("correct_answer")
    return {
        "type": args.get("question_type"),
        "seconds": round(call.duration_ms / 1000, 2),
        "final_score": result.get("final_score"),
        "score": result.get("score"),
        "fallback": result.get("fallback"),
        "key_at": choices.index(key) if key in choices else None,
        "blind_at": choices.index(blind["answer"]) if blind.get("answer") in choices else blind.get("answer"),
        "agrees": blind.get("agrees"),
    }


def _saved_key_disputed(checked: list[Any], submitted: dict[str, Any]) -> int:
    """Saved items whose key the blind check (tool 4's) found wrong: 0 unless a disagreement was saved anyway. An
    item's last check counts (a rewrite may keep the stem and fix the options)."""
    saved = {(i.get("stem"), (i.get("answer_schema") or {}).get("correct_key")) for i in submitted.get("items") or []}
    last: dict[tuple[Any, Any], Any] = {}
    for c in checked:
        if isinstance(c.args, dict) and isinstance(c.result, dict):
            last[(c.args.get("stem"), c.args.get("correct_answer"))] = c.result
    return sum(1 for item in saved if (last.get(item, {}).get("blind_check") or {}).get("agrees") is False)


def copies_saved(home: Path) -> int:
    """Saved (generated) questions whose stem is a shipped item's, as written or with a few words changed."""
    from sqlalchemy import create_engine, text

    from consulta.apps.quiz._modes import _near_copy

    engine = create_engine(f"sqlite:///{home}/consulta.db")
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("select stem, lang from quiz_questions where source = 'generated'")).all()
    except Exception:  # noqa: BLE001 - no table: nothing was saved
        return 0
    finally:
        engine.dispose()
    return sum(_near_copy(stem, lang) for stem, lang in rows)


class StepLog:
    """The embedded model's generated steps, as llama.cpp reports them (`LocalModel.last_stats`), while installed."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []

    def install(self) -> Callable[[], None]:
        """Record every step from now on; returns the undo."""
        from consulta.models import LocalModel

        original = LocalModel._response
        log = self.steps

        def recorded(model: Any, plan: Any, generation: Any) -> Any:
            stats = generation.stats
            log.append(
                {
                    "kind": plan.kind,
                    "prompt_tokens": stats.prompt_tokens,
                    "reused_tokens": stats.reused_tokens,
                    "prompt_s": round(stats.prompt_seconds, 2),
                    "generated_tokens": stats.generated_tokens,
                    "generation_s": round(stats.generation_seconds, 2),
                }
            )
            return original(model, plan, generation)

        LocalModel._response = recorded  # type: ignore[method-assign]

        def undo() -> None:
            LocalModel._response = original  # type: ignore[method-assign]

        return undo

    def take(self) -> list[dict[str, Any]]:
        taken, self.steps[:] = list(self.steps), []
        return taken


async def evaluate(
    model: str,
    n: int,
    home: Path,
    requests: list[tuple[str, str]] = REQUESTS,
    start: int = 0,
    on_outcome: Callable[[list[Outcome]], None] | None = None,
) -> list[Outcome]:
    """Run `n` requests from `start` in one fresh home; `on_outcome` gets the outcomes so far after each one."""
    settings = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=model, lang="en")
    host = AppHost(app="quiz", settings=settings, ask_policy="defer")
    outcomes = []
    steps = StepLog()
    undo = steps.install()
    try:
        for i in range(n):
            lang, request = requests[(start + i) % len(requests)]
            started = time.perf_counter()
            run = await host.start(request, principal=None, lang=lang)
            run = await host.runtime.settled(run.id)
            outcome = outcome_of(host, run, lang, request, time.perf_counter() - started)
            outcome.model_steps = steps.take()
            outcomes.append(outcome)
            print(
                f"[{i + 1}/{n}] {outcome.status:9} {outcome.seconds:6.1f}s drafts {outcome.drafts} saved {outcome.saved}  {request}",
                flush=True,
            )
            if on_outcome is not None:
                on_outcome(outcomes)
    finally:
        undo()
        await host.aclose()
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    minutes = sum(o.seconds for o in outcomes) / 60 or 1e-9
    drafts = sum(o.drafts for o in outcomes)
    saved = sum(o.saved for o in outcomes)
    return {
        "requests": len(outcomes),
        "finished": sum(o.status == RunStatus.finished for o in outcomes),
        "drafts": drafts,
        "passed_validation": sum(o.passed for o in outcomes),
        "saved": saved,
        "minutes": round(minutes, 3),
        "items_generated_per_minute": round(drafts / minutes, 2),
        "items_saved_per_minute": round(saved / minutes, 2),
        "share_passing_validation": round(sum(o.passed for o in outcomes) / drafts, 3) if drafts else 0.0,
        "blind_checked": sum(o.blind_checked for o in outcomes),
        "blind_disagreed": sum(o.blind_disagreed for o in outcomes),
        "copies_refused": sum(o.copies_refused for o in outcomes),
        "rewrites": sum(o.rewrites for o in outcomes),
        "saved_key_disputed": sum(o.saved_key_disputed for o in outcomes),
        "saved_short_answers_without_blind_check": sum(
            1
            for o in outcomes
            for i in o.saved_items
            if i.get("keywords") and not i.get("choices") and not i.get("key")
        ),
        "timing_s": {
            part: round(sum(o.timing.get(part, 0.0) for o in outcomes), 1)
            for part in ("write_s", "first_look_s", "rewrite_s", "validate_s", "save_s", "code_checks_s")
        },
        "by_lang": {
            lang: {
                "drafts": sum(o.drafts for o in outcomes if o.lang == lang),
                "saved": sum(o.saved for o in outcomes if o.lang == lang),
                "passed_validation": sum(o.passed for o in outcomes if o.lang == lang),
            }
            for lang in ("en", "zh-CN")
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="local", help="local (default), scripted:PATH, openai:…")
    parser.add_argument(
        "--requests", type=int, default=len(REQUESTS), help=f"how many requests (default {len(REQUESTS)})"
    )
    parser.add_argument(
        "--out", type=Path, help="where the JSON goes (default: results/quiz_generate.json for the local model)"
    )
    parser.add_argument("--held-out", action="store_true", help="topics not used while building (HELD_OUT)")
    parser.add_argument("--fresh", action="store_true", help="topics no run has used before (FRESH)")
    parser.add_argument(
        "--start", type=int, default=0, help="index of the first request (to run a long list in parts; default 0)"
    )
    args = parser.parse_args(argv)
    if args.held_out and args.fresh:
        parser.error("--held-out and --fresh are two lists: choose one")
    if args.requests < 1 or args.start < 0:
        parser.error("--requests must be at least 1 and --start at least 0")
    out = args.out or (RESULTS / "quiz_generate.json" if args.model == "local" else None)

    source = source_version()  # the code that runs: taken once, before a commit made meanwhile can move it

    def result_of(outcomes: list[Outcome], copies: int | None) -> dict[str, Any]:
        return {
            "source": source,
            "model": args.model,
            "held_out": args.held_out,
            "fresh": args.fresh,
            "start": args.start,
            "complete": copies is not None,
            **summary(outcomes),
            "copies_saved": copies,
            "runs": [asdict(o) for o in outcomes],
        }

    def write(result: dict[str, Any]) -> None:
        if out is None:
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        tmp.replace(out)

    with tempfile.TemporaryDirectory(prefix="quiz-eval-") as home:
        requests = FRESH if args.fresh else HELD_OUT if args.held_out else REQUESTS
        outcomes = asyncio.run(
            evaluate(
                args.model,
                args.requests,
                Path(home),
                requests,
                args.start,
                on_outcome=lambda so_far: write(result_of(so_far, None)),  # a run stopped early keeps what it did
            )
        )
        copies = copies_saved(Path(home))
    result = result_of(outcomes, copies)
    figures = {
        k: result[k]
        for k in (
            "requests",
            "finished",
            "drafts",
            "saved",
            "items_generated_per_minute",
            "items_saved_per_minute",
            "share_passing_validation",
            "blind_checked",
            "blind_disagreed",
            "copies_refused",
            "copies_saved",
            "rewrites",
            "saved_key_disputed",
        )
    }
    print(json.dumps(figures, ensure_ascii=False))
    write(result)
    if out is not None:
        print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main()
