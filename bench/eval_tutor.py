"""The tutor end to end on the embedded model: student turns through the orchestrator (consult_expert, then an
instruction packet checked against the binding rules) and the conversational assistant, as `consulta chat tutor`
runs them. Each turn is checked in code: did the run finish, was a packet accepted, did the expected expert answer
with the expected output type, did the expected binding rule fire, did the assistant reply. The replies are kept
in the JSON for a person to read. An evaluation of the model against the app, not a speed benchmark.

    .venv/bin/python bench/eval_tutor.py [--model local] [--only NAME]
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

from consulta.apps import AppEnv, tutor  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import resolve_model  # noqa: E402
from consulta.runtime import Runtime, RunStatus, Store  # noqa: E402

PEOPLE = "name,age,city\n" + "\n".join(f"P{i},{20 + i % 30},{['Paris', 'Rome', 'Oslo', 'Lima'][i % 4]}" for i in range(120)) + "\n"
SMALL = "name,score\n" + "\n".join(f"S{i},{50 + i}" for i in range(60)) + "\n"


@dataclass(frozen=True)
class Turn:
    name: str
    file: tuple[str, str]
    student: str
    output_type: str
    rule: str | None


TURNS = [
    Turn("unsuitable_en", ("student_data.csv", SMALL), "I uploaded student_data.csv. Can I start task_2_1?", "suitability_judgment", "dataset_not_suitable"),
    Turn("unsuitable_zh", ("student_data.csv", SMALL), "我上传了数据，可以开始task_2_1吗？", "suitability_judgment", "dataset_not_suitable"),
    Turn("suitable_en", ("people.csv", PEOPLE), "I uploaded people.csv. Can I start task_2_1?", "suitability_judgment", None),
    Turn("key_error", ("people.csv", PEOPLE), "For task_2_2 I ran df['Age'].mean() and got KeyError: 'Age'. Why?", "error_diagnosis", "no_solution_in_hints"),
    Turn("concept", ("people.csv", PEOPLE), "For task_2_3 I don't understand what the how parameter of merge does.", "concept_explanation", None),
    Turn("claim_done", ("people.csv", PEOPLE), "I finished task_2_4: I used groupby to get the mean age per city.", "validation_report", "evidence_not_enough"),
]


async def one_turn(turn: Turn, *, model_spec: str, models_dir: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="consulta-eval-tutor-") as tmp:
        uploads = Path(tmp, "uploads")
        uploads.mkdir()
        Path(uploads, turn.file[0]).write_text(turn.file[1], encoding="utf-8")
        db = f"sqlite:///{tmp}/eval.db"
        store = Store(db)
        runtime = Runtime(store=store, resolve_model=lambda spec: resolve_model(spec, models_dir=models_dir))
        env = AppEnv(store=store, resolve_model=runtime.resolve_model, model=model_spec, lang="en", data_dir=Path(tmp))
        agent = tutor.APP.build(tutor.APP.main_agent, tutor.TutorOptions(uploads=uploads), env)
        started = time.perf_counter()
        try:
            run = await runtime.run(agent, turn.student, model=model_spec, lang="en")
            handed = tutor.follow_up(run, env) if run.status == RunStatus.finished else None
            if handed is not None:  # as the host hands over: the next agent over the run's options and the hand-over's
                options = tutor.APP.recorded_options({**run.options, **handed.options})
                reply = await runtime.run(tutor.APP.build(handed.agent, options, env), handed.prompt, model=model_spec, lang="en")
            else:
                reply = None
        finally:
            await runtime.aclose()
        seconds = time.perf_counter() - started
        calls = store.list_tool_calls(run.id)
        consulted = [c for c in sorted(store.list_consultations(run_id=run.id), key=lambda c: c.id)]
        done = [c for c in consulted if c.status == "done"]
        packets = [c.result["packet"] for c in calls if c.tool_name == tutor.SUBMIT_PACKET_TOOL_NAME and isinstance(c.result, dict) and c.result.get("accepted")]
        fired = [r["rule_name"] for c in done for r in c.binding_rules]
        row = {
            "turn": turn.name,
            "student": turn.student,
            "finished": run.status == RunStatus.finished,
            "error": run.error,
            "packet_accepted": bool(packets),
            "expected_consulted": any(c.request.get("expected_output_type") == turn.output_type for c in done),
            "expected_rule": turn.rule is None or turn.rule in fired,
            "assistant_replied": bool(reply and reply.status == RunStatus.finished and (reply.output or "").strip()),
            "steps": len(calls),
            "refusals": [c.error_code for c in calls if c.error_code],
            "consultations": [f"{c.expert_id}/{c.request.get('expected_output_type')}/{c.status}" for c in consulted],
            "rules": fired,
            "packet": packets[-1] if packets else None,
            "reply": reply.output if reply else None,
            "seconds": round(seconds, 1),
        }
        store.close()
        return row


CHECKS = ("finished", "packet_accepted", "expected_consulted", "expected_rule", "assistant_replied")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("CONSULTA_MODEL", "local"))
    parser.add_argument("--only", action="append", help="run only this turn (repeatable)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "tutor_local.json"))
    args = parser.parse_args()
    settings = Settings.from_env(model=args.model)
    model = resolve_model(args.model, models_dir=settings.models_dir)
    if callable(load := getattr(model, "load", None)):
        load()
    rows = []
    for turn in TURNS:
        if args.only and turn.name not in args.only:
            continue
        row = await one_turn(turn, model_spec=args.model, models_dir=settings.models_dir)
        rows.append(row)
        marks = " ".join(f"{k}={'✓' if row[k] else '✗'}" for k in CHECKS)
        print(f"{turn.name:14s} {marks} steps={row['steps']} refusals={row['refusals']} {row['seconds']:6.1f} s", flush=True)
        print(f"    consultations: {row['consultations']}  rules: {row['rules']}", flush=True)
        print(f"    reply: {(row['reply'] or '').strip()[:300]!r}", flush=True)
    passed = {k: sum(bool(r[k]) for r in rows) for k in CHECKS}
    complete = sum(all(r[k] for k in CHECKS) for r in rows)
    median = statistics.median(r["seconds"] for r in rows)
    print(f"\n{complete} of {len(rows)} turns passed every check; by check: {passed}; median {median:.1f} s per turn")
    Path(args.out).write_text(json.dumps({
        "evaluation": "tutor turns", "source": source_version(), "model": args.model, "cpus": os.cpu_count(),
        "command": "python bench/eval_tutor.py " + " ".join(sys.argv[1:]), "complete": complete, "passed": passed,
        "median_seconds": median, "turns": rows,
    }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
