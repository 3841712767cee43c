"""Fit quiz's grading probe and the calibration that weighs it, on training answers only (never a held-out one).

The probe (`consulta.apps.quiz._probe`) is a logistic read-out of the embedded model's final hidden state at the end
of the short-answer verdict prompt (`ModelJudge.verdict`'s labels prompt). This script:

1. reads every answer of the training pool (`bench/data/grading_semeval/probe_train`: all 178 SemEval-2013 Task 7
   training questions of SciEntsBank and Beetle but the four of bench/data/grading, 2,586 answers, CC BY-SA 3.0; and
   the `train` split of the `zh` and `scientsbank` sets of eval_quiz_grading.py) through the model: the verdict's
   label probabilities and the hidden state, one prompt each (the states are kept in `--states`, not committed);
2. fits the probe: an L2 logistic regression on the standardised states, its strength chosen by grouped
   cross-validation over questions (a new item is what the tool meets), and each answer's out-of-fold probe
   probability (its question's answers predicted by a fit on other questions);
3. fits the calibration as `eval_quiz_grading.py --fit` does (forward selection by leave-one-question-out log loss
   over code's evidence, the labels and the `probe` reading, the out-of-fold probe standing for the probe), and the
   same without the probe as its `fallback` (a model the probe was not fitted on, or no time left to read it);
4. writes `src/consulta/apps/quiz/data/grading_probe.json` and `grading_calibration.json`.

    .venv/bin/python bench/fit_quiz_probe.py [--states PATH] [--limit N]

The held-out figures come from `bench/eval_quiz_grading.py` afterwards (it grades with what this wrote).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eval_quiz_grading as grading  # noqa: E402
from _common import source_version  # noqa: E402
from consulta.apps.quiz._judge import VERDICT_PROMPT_KEY, verdict_prompt  # noqa: E402
from consulta.apps.quiz._probe import PROBE_FILE, GradingProbe  # noqa: E402
from consulta.apps.quiz._short_answer import CALIBRATION_FILE, LABELS, Calibration  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import prepare_model  # noqa: E402
from consulta.runtime import label_probabilities, last_state  # noqa: E402

POOL = grading.DATA_SEMEVAL / "probe_train"
POOL_NAME = (
    "SemEval-2013 Task 7 SciEntsBank and Beetle, their training questions but 4, up to 14 (SciEntsBank) and 16 "
    "(Beetle) answers each, 2-way labels (CC BY-SA 3.0; bench/data/grading_semeval/probe_train)"
)
STATES = Path(__file__).resolve().parent / "results" / "quiz_probe_states.jsonl"
STRENGTHS = (0.0003, 0.001, 0.003, 0.01)  # sklearn's C: the inverse of the L2 penalty on standardised states


def training_answers(limit: int | None = None) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The pool's questions and answers, then the `train` split of the zh and scientsbank sets."""
    questions, answers = grading.load_set(POOL, name="probe_train")
    more_q, more_a = grading.load_sets(["zh", "scientsbank"])
    split = grading.split_of(more_a, more_q)
    questions.update(more_q)
    answers += [a for a in more_a if split[a["id"]] == "train"]
    return questions, grading.interleaved(answers)[:limit] if limit else answers


async def read_states(
    questions: dict[str, dict[str, Any]], answers: Sequence[dict[str, Any]], path: Path
) -> list[dict[str, Any]]:
    """Each answer's label probabilities and hidden state (appended to `path` as read; answers already there are not
    read again)."""
    done = {}
    if path.exists():
        done = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    todo = [a for a in answers if a["id"] not in done]
    if todo:
        model = prepare_model("local", models_dir=Settings.from_env().models_dir)
        started = time.perf_counter()
        with path.open("a", encoding="utf-8") as out:
            for i, a in enumerate(todo, 1):
                q = questions[a["question_id"]]
                keywords = grading.keywords_of(q)
                system, prompt = verdict_prompt(
                    user_answer=a["answer"],
                    expected=keywords,
                    stem=q["question"],
                    reference_answer=q["reference_answer"],
                )
                probabilities = await label_probabilities(model=model, system=system, prompt=prompt, labels=LABELS)
                state = await last_state(model=model, system=system, prompt=prompt)
                record = {
                    "id": a["id"],
                    "question_id": a["question_id"],
                    "set": a["set"],
                    "human": a["label"],
                    "answer": a["answer"],
                    "keywords": keywords,
                    "probabilities": probabilities,
                    "model_name": model.model_name,
                    "state": [round(x, 4) for x in state or []],
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                done[a["id"]] = record
                if i % 50 == 0:
                    print(f"  {i}/{len(todo)} read, {time.perf_counter() - started:.0f} s", flush=True)
    return [done[a["id"]] for a in answers]


def fit_probe(rows: Sequence[dict[str, Any]]) -> tuple[GradingProbe, list[float], dict[str, Any]]:
    """The probe fitted on all `rows`, each row's out-of-fold probe probability, and how the strength was chosen."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold

    x = np.array([r["state"] for r in rows], dtype=float)
    y = np.array([r["human"] == "correct" for r in rows])
    groups = np.array([r["question_id"] for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mean) / scale
    folds = list(GroupKFold(n_splits=8).split(z, y, groups))

    def out_of_fold(c: float) -> Any:
        p = np.zeros(len(y))
        for train, held in folds:
            p[held] = LogisticRegression(C=c, max_iter=5000).fit(z[train], y[train]).predict_proba(z[held])[:, 1]
        return p

    tried = {c: out_of_fold(c) for c in STRENGTHS}
    losses = {c: float(log_loss(y, p)) for c, p in tried.items()}
    best = min(losses, key=losses.__getitem__)
    final = LogisticRegression(C=best, max_iter=5000).fit(z, y)
    weights = final.coef_[0] / scale  # the standardisation folded into the weights
    bias = float(final.intercept_[0] - np.sum(final.coef_[0] * mean / scale))
    probe = GradingProbe(
        model=rows[0]["model_name"],
        prompt=VERDICT_PROMPT_KEY,
        weights=tuple(float(w) for w in weights),
        bias=bias,
        source=f"{len(rows)} training answers ({POOL_NAME}; the zh and scientsbank train splits), L2 logistic C={best} "
        "chosen by 8-fold cross-validation grouped by question, bench/fit_quiz_probe.py",
    )
    choice = {"strengths_cv_log_loss": {str(c): round(v, 4) for c, v in losses.items()}, "chosen": best}
    return probe, [float(p) for p in tried[best]], choice


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=Path, default=STATES, help="where the read states are kept (JSON lines)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N answers (a smoke test)")
    args = parser.parse_args(argv)
    questions, answers = training_answers(args.limit)
    rows = asyncio.run(read_states(questions, answers, args.states))
    print(f"{len(rows)} training answers read")
    probe, oof, choice = fit_probe(rows)
    graded = grading.with_evidence(
        [{**r, "probabilities": {**r["probabilities"], "probe": p}} for r, p in zip(rows, oof, strict=True)], questions
    )
    with_probe, steps = grading.fit(graded, sets=())
    without, steps_without = grading.fit(
        [{**g, "probabilities": {k: v for k, v in g["probabilities"].items() if k != "probe"}} for g in graded], sets=()
    )
    source = (
        f"{len(graded)} training answers ({POOL_NAME}; the zh and scientsbank train splits), bench/fit_quiz_probe.py"
    )
    calibration = Calibration(
        weights=with_probe.weights,
        threshold=with_probe.threshold,
        source=f"{source}: the probe's out-of-fold probability as its reading; features by leave-one-question-out log loss",
        fallback=Calibration(
            weights=without.weights, threshold=without.threshold, source=f"{source}: without the probe"
        ),
    )
    PROBE_FILE.write_text(probe.to_json(), encoding="utf-8")
    CALIBRATION_FILE.write_text(calibration.to_json(), encoding="utf-8")
    report = {
        "source": source_version(),
        "answers": len(rows),
        "probe": choice,
        "calibration": json.loads(calibration.to_json()),
        "selection": steps,
        "selection_without_probe": steps_without,
        "train_auc": grading.readings_auc(graded),
    }
    out = Path(__file__).resolve().parent / "results" / "quiz_probe_fit.json"
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("probe", "calibration", "train_auc")}, indent=1, ensure_ascii=False))
    print(f"wrote {PROBE_FILE}, {CALIBRATION_FILE} and {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
