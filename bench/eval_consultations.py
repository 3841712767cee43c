"""How well the embedded model serves consult_expert: 20 consultations (5 per output type) through the tutor's real
experts on a real dataset, counting typed answers valid on the first try, valid after retries, and failed, with the
time per consultation. Not a speed benchmark: an evaluation of the model against the seed's contract.

    .venv/bin/python bench/eval_consultations.py [--model local] [--per-type 5]
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
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from consulta.apps import tutor  # noqa: E402
from consulta.asks import Consultant, RuleBook  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import resolve_model  # noqa: E402
from consulta.runtime import Store, ToolError  # noqa: E402

PEOPLE = (
    "name,age,city\n"
    + "\n".join(f"P{i},{20 + i % 30},{['Paris', 'Rome', 'Oslo', 'Lima'][i % 4]}" for i in range(120))
    + "\n"
)
SMALL = "name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"


def requests(per_type: int) -> list[dict[str, Any]]:
    def ask(expert: str, output_type: str, scenario: str, question: str, **context: Any) -> dict[str, Any]:
        return {
            "expert_id": expert,
            "question": question,
            "context": context,
            "expected_output_type": output_type,
            "scenario_id": scenario,
            "reasoning": "evaluation",
        }

    suitability = [
        ask(
            "data_inspector",
            "suitability_judgment",
            "dataset_suitability_check",
            f"Is {f} suitable for {t}?",
            file_name=f,
            task_id=t,
        )
        for f, t in [
            ("people.csv", "task_2_1"),
            ("small.csv", "task_2_1"),
            ("people.csv", "task_2_4"),
            ("small.csv", "task_2_2"),
            ("people.csv", "task_2_3"),
        ]
    ]
    concepts = [
        ask(
            "concept_explainer",
            "concept_explanation",
            "concept_clarification",
            f"Explain {c} without giving the task's answer.",
            task_id=t,
            concept_name=c,
            student_confusion=s,
        )
        for c, t, s in [
            ("pandas.merge()", "task_2_3", "on vs how"),
            ("groupby()", "task_2_4", "what does split-apply-combine mean"),
            ("read_csv()", "task_2_1", "how to load a file"),
            ("Series.mean()", "task_2_2", "mean of one column"),
            ("df.columns", "task_2_2", "what columns exist"),
        ]
    ]
    errors = [
        ask(
            "data_inspector",
            "error_diagnosis",
            "error_diagnosis",
            f"Diagnose the error of: {code}",
            file_name="small.csv",
            task_id="task_2_2",
            student_code_snippet=code,
            error_message=msg,
        )
        for code, msg in [
            ("df['age'].mean()", "KeyError: 'age'"),
            ("df['Name']", "KeyError: 'Name'"),
            ("df.groupby('town').size()", "KeyError: 'town'"),
            ("df['city'] + 1", "TypeError"),
            ("df.iloc[10]", "IndexError"),
        ]
    ]
    validations = [
        ask(
            "data_inspector",
            "validation_report",
            "progress_validation",
            "Does this evidence show the objective is met?",
            file_name="people.csv",
            task_id=t,
            student_evidence=e,
            learning_objectives="use groupby correctly",
        )
        for t, e in [
            ("task_2_4", "I used groupby to get the mean age per city."),
            ("task_2_4", "print(df.groupby('city')['age'].mean())"),
            ("task_2_2", "print(df['age'].mean())"),
            ("task_2_1", "print(df.head())"),
            ("task_2_4", "print(df.groupby('town')['age'].mean())"),
        ]
    ]
    return [*suitability[:per_type], *concepts[:per_type], *errors[:per_type], *validations[:per_type]]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("CONSULTA_MODEL", "local"))
    parser.add_argument("--per-type", type=int, default=5)
    parser.add_argument("--retries", type=int, default=2)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "consultations_local.json"))
    args = parser.parse_args()
    settings = Settings.from_env(model=args.model)
    with tempfile.TemporaryDirectory(prefix="consulta-eval-") as tmp:
        uploads = Path(tmp, "uploads")
        uploads.mkdir()
        (uploads / "people.csv").write_text(PEOPLE, encoding="utf-8")
        (uploads / "small.csv").write_text(SMALL, encoding="utf-8")
        with resources.as_file(tutor.BINDING_RULES) as rules:
            book = RuleBook.load(rules)
        model = resolve_model(args.model, models_dir=settings.models_dir)
        if callable(load := getattr(model, "load", None)):
            load()
        consultant = Consultant(
            store=Store(f"sqlite:///{tmp}/eval.db"),
            experts=tutor.tutor_experts(catalog=tutor.load_catalog(), uploads=uploads),
            rules=book,
            resolve_model=lambda spec: model,
            model=args.model,
            retries=args.retries,
        )
        rows = []
        for n, request in enumerate(requests(args.per_type), 1):
            started = time.perf_counter()
            try:
                result = await consultant.consult(request)
                kept = consultant.store.get_consultation(result["consultation_id"])
                outcome, attempts, error = ("first_try" if kept.attempts == 1 else "after_retry"), kept.attempts, None
            except ToolError as refused:
                outcome, attempts, error = "failed", args.retries + 1, f"{refused.error_code}: {refused.message}"
            seconds = time.perf_counter() - started
            rows.append(
                {
                    "n": n,
                    "output_type": request["expected_output_type"],
                    "outcome": outcome,
                    "attempts": attempts,
                    "seconds": round(seconds, 1),
                    "error": error,
                }
            )
            print(
                f"{n:2d} {request['expected_output_type']:22s} {outcome:12s} attempts={attempts} {seconds:6.1f} s {error or ''}",
                flush=True,
            )
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("first_try", "after_retry", "failed")}
    by_type = {
        t: {k: sum(r["outcome"] == k for r in rows if r["output_type"] == t) for k in counts}
        for t in dict.fromkeys(r["output_type"] for r in rows)
    }
    median = statistics.median(r["seconds"] for r in rows)
    print(
        f"\n{len(rows)} consultations: valid on the first try {counts['first_try']}, after retry {counts['after_retry']}, failed {counts['failed']}; median {median:.1f} s"
    )
    Path(args.out).write_text(
        json.dumps(
            {
                "evaluation": "consultations",
                "source": source_version(),
                "model": args.model,
                "cpus": os.cpu_count(),
                "retries": args.retries,
                "command": "python bench/eval_consultations.py " + " ".join(sys.argv[1:]),
                "counts": counts,
                "by_type": by_type,
                "median_seconds": median,
                "consultations": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    asyncio.run(main())
