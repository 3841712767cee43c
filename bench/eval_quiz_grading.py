"""Agreement of quiz's short-answer grading (seed tool 6) with human labels: Cohen's κ on a public labelled set.

The set: 140 student answers to 4 SciEntsBank questions of SemEval-2013 Task 7 (Dzikovska et al. 2013), each
labelled correct / incorrect by trained annotators (the 2-way labels), CC BY-SA 3.0 — see bench/data/grading/README.md.

Each answer is graded as tool 6 grades a short answer: the model's 0-100 grade (`ModelJudge.grade_answer`, given the
question, the reference answer and the expected ideas) bounded by keyword coverage (`_score.short_answer_score`), and
counted correct at >= 80 (`is_correct`). The expected ideas (tool 6's `correct_keywords`) are made by code from the
reference answer: its content words that the question does not already say (all of them when that leaves fewer
than two). The explanation is not generated (it
does not change the score and would triple the time).

Printed and saved, against the human labels: κ and accuracy of (1) the tool's decision, (2) the model's raw grade
at >= 80, (3) the baseline measured in the same run, keywords alone (correct when at least half the expected words
appear); the raw grade's κ at other cut-offs; per question; fallbacks (no answer in time, or none that fit).

    .venv/bin/python bench/eval_quiz_grading.py [--model local] [--limit N] [--timeout S] [--out PATH]

`--model scripted:PATH` replays a script (every grade is the script's first step: a smoke test of the pipeline).
A run with `--limit` writes `bench/results/quiz_grading.quick.json` (unless `--out`), so it never replaces the
figures of a full run (`bench/results/quiz_grading.json`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections.abc import Sequence
from itertools import zip_longest
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from consulta.apps.quiz._judge import JudgeUnavailable, ModelJudge  # noqa: E402
from consulta.apps.quiz._score import CORRECT_THRESHOLD, FALLBACK_SCORE, keyword_matches, short_answer_score  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import prepare_model  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "grading"
RESULTS = Path(__file__).resolve().parent / "results"
CUTOFFS = (50, 60, 70, 80, 90)
_STOP = frozenset(
    "the a an of to in on for and or but is are was were be been it its this that these those which what when where why "
    "how with by from as at into than then there their they them will would could should can other others each when "
    "very more most less much many some such".split()
)


def load_set(folder: Path = DATA) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The questions (by id) and the labelled answers."""
    questions = {q["question_id"]: q for q in json.loads((folder / "questions.json").read_text(encoding="utf-8"))}
    answers = [
        json.loads(line) for line in (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return questions, answers


def interleaved(answers: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers taken round-robin across questions, so that `--limit N` covers every question."""
    by_question: dict[str, list[dict[str, Any]]] = {}
    for answer in answers:
        by_question.setdefault(answer["question_id"], []).append(answer)
    return [a for group in zip_longest(*by_question.values()) for a in group if a is not None]


def expected_ideas(question: str, reference: str) -> list[str]:
    """Tool 6's `correct_keywords` for an item of the set: the reference answer's content words the question lacks
    (all its content words when that leaves fewer than two)."""
    asked = set(re.findall(r"[a-z]+", question.lower()))
    content = list(dict.fromkeys(w for w in re.findall(r"[a-z]+", reference.lower()) if len(w) >= 4 and w not in _STOP))
    new = [w for w in content if w not in asked]
    return new if len(new) >= 2 else content


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's κ of two binary ratings of the same items (None when chance agreement is total)."""
    n = len(a)
    if n == 0 or n != len(b):
        raise ValueError("two ratings of the same, non-empty list of items are needed")
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance == 1 else round((observed - chance) / (1 - chance), 4)


def agreement(predicted: Sequence[bool], human: Sequence[bool]) -> dict[str, Any]:
    tp = sum(p and h for p, h in zip(predicted, human, strict=True))
    tn = sum((not p) and (not h) for p, h in zip(predicted, human, strict=True))
    return {
        "kappa": cohen_kappa(predicted, human),
        "accuracy": round((tp + tn) / len(human), 4),
        "confusion": {"tp": tp, "fp": sum(predicted) - tp, "fn": sum(human) - tp, "tn": tn},
    }


async def grade_all(
    judge: ModelJudge, questions: dict[str, dict[str, Any]], answers: Sequence[dict[str, Any]], *, progress: bool = True
) -> list[dict[str, Any]]:
    """Grade each answer as tool 6 does; one record per answer."""
    graded = []
    for i, item in enumerate(answers, 1):
        q = questions[item["question_id"]]
        keywords = expected_ideas(q["question"], q["reference_answer"])
        found = keyword_matches(item["answer"], keywords)
        started = time.perf_counter()
        try:
            grade = await judge.grade_answer(
                user_answer=item["answer"],
                expected=keywords,
                stem=q["question"],
                reference_answer=q["reference_answer"],
                lang="en",
            )
            raw, score, fallback, error = (
                grade.score,
                short_answer_score(grade.score, len(found), len(keywords)),
                False,
                None,
            )
            reasoning = grade.reasoning
        except JudgeUnavailable as failure:
            raw, score, fallback, error, reasoning = None, FALLBACK_SCORE, True, str(failure), None
        seconds = round(time.perf_counter() - started, 2)
        graded.append(
            {
                "id": item["id"],
                "question_id": item["question_id"],
                "human": item["label"],
                "model_score": raw,
                "score": score,
                "is_correct": (not fallback) and score >= CORRECT_THRESHOLD,
                "keywords": keywords,
                "keyword_matches": found,
                "reasoning": reasoning,
                "fallback": fallback,
                "error": error,
                "seconds": seconds,
            }
        )
        if progress:
            print(
                f"  {i:>3}/{len(answers)} {item['id']:<16} human={item['label']:<9} model={raw!s:>4} tool={score:>3} {seconds:6.1f}s",
                flush=True,
            )
    return graded


def summarize(graded: Sequence[dict[str, Any]]) -> dict[str, Any]:
    human = [g["human"] == "correct" for g in graded]
    tool = [g["is_correct"] for g in graded]
    raw = [g["model_score"] for g in graded]
    raw_at = {c: [r is not None and r >= c for r in raw] for c in CUTOFFS}
    baseline = [len(g["keyword_matches"]) * 2 >= len(g["keywords"]) for g in graded]
    per_question = {}
    for qid in dict.fromkeys(g["question_id"] for g in graded):
        idx = [i for i, g in enumerate(graded) if g["question_id"] == qid]
        per_question[qid] = {"n": len(idx), **agreement([tool[i] for i in idx], [human[i] for i in idx])}
    seconds = [g["seconds"] for g in graded]
    return {
        "n": len(graded),
        "human_correct": sum(human),
        "tool": agreement(tool, human),
        "model_raw_at_80": agreement(raw_at[80], human),
        "baseline_keywords_half": agreement(baseline, human),
        "model_raw_kappa_by_cutoff": {str(c): cohen_kappa(raw_at[c], human) for c in CUTOFFS},
        "per_question": per_question,
        "fallbacks": sum(g["fallback"] for g in graded),
        "seconds_median": round(statistics.median(seconds), 2) if seconds else None,
        "seconds_total": round(sum(seconds), 1),
    }


def _print(summary: dict[str, Any], model: str) -> None:
    print(f"\nquiz grading vs human labels (SemEval-2013 Task 7 SciEntsBank, 2-way), model {model}, n={summary['n']}")
    print(f"{'grader':<34}{'kappa':>8}{'accuracy':>10}")
    for name, key in (
        ("tool 6 (model + keyword bound)", "tool"),
        ("model raw grade >= 80", "model_raw_at_80"),
        ("baseline: half the keywords", "baseline_keywords_half"),
    ):
        row = summary[key]
        print(f"{name:<34}{row['kappa']!s:>8}{row['accuracy']:>10.3f}")
    print("model raw kappa by cut-off:", summary["model_raw_kappa_by_cutoff"])
    print(
        f"fallbacks {summary['fallbacks']}, median {summary['seconds_median']} s per answer, total {summary['seconds_total']} s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="model spec (local, scripted:PATH, openai:NAME, ...)")
    parser.add_argument(
        "--limit", type=int, default=None, help="grade only the first N answers (round-robin over questions)"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per grade (default 120)")
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON results")
    parser.add_argument("--quiet", action="store_true", help="no line per answer")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    questions, answers = load_set()
    chosen = interleaved(answers)[: args.limit] if args.limit else interleaved(answers)
    loading = time.perf_counter()
    model = prepare_model(args.model, models_dir=Settings.from_env().models_dir)  # loaded before the clock starts
    load_seconds = round(time.perf_counter() - loading, 1)
    judge = ModelJudge(model, timeout=args.timeout)
    started = time.perf_counter()
    graded = asyncio.run(grade_all(judge, questions, chosen, progress=not args.quiet))
    summary = summarize(graded)
    out = args.out or RESULTS / ("quiz_grading.quick.json" if args.limit else "quiz_grading.json")
    record = {
        "benchmark": "eval_quiz_grading",
        "source": source_version(),
        "model": args.model,
        "limit": args.limit,
        "dataset": "SemEval-2013 Task 7 SciEntsBank, 4 questions, 2-way labels (CC BY-SA 3.0; bench/data/grading)",
        "correct_threshold": CORRECT_THRESHOLD,
        "load_seconds": load_seconds,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "summary": summary,
        "answers": graded,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out)  # atomic: a reader never sees half a file
    _print(summary, args.model)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
