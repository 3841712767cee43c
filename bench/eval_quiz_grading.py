"""Agreement of quiz's short-answer grading (seed tool 6) with human labels: Cohen's κ on a public labelled set.

The set: 140 student answers to 4 SciEntsBank questions of SemEval-2013 Task 7 (Dzikovska et al. 2013), each
labelled correct / incorrect by trained annotators (the 2-way labels), CC BY-SA 3.0 — see bench/data/grading/README.md.
A second set (`--set zh`; all sets by default): 40 answers to 4 Chinese school questions, 32 in Chinese and 8 in English,
labelled by one person (see bench/data/grading_zh/README.md; its questions give their expected ideas with variants).
Two more (`--set seb`, `--set beetle`): SemEval-2013 Task 7 SciEntsBank (63 questions, 420 answers) and Beetle (25
questions, 188 answers), CC BY-SA 3.0, split BY QUESTION as the organisers split them (`test` = their unseen
questions) — see bench/data/grading_semeval/README.md; their expected ideas are made by code from the reference.
Each set is reported on its own. Each is split in two: by its questions' `split` where they give one (the SemEval
sets), else fixed by the answers' ids (per question and label, alternately by a hash of the id): `train` (what `--fit`
fits the calibration on) and `test` (held out: the figures reported).

Each answer is graded as tool 6 grades a short answer (`_short_answer`): code's evidence (expected keywords with
variants, the reference's coverage) and the model's verdict read as probabilities (`ModelJudge.verdict`: the labels,
then yes/no questions such as "does it say what the reference says?" — `--readings`, by default those the shipped
calibration weighs —, one forward pass each over one prompt), mapped by the calibration to P(correct) and the seed's
score, correct at >= 80. The expected ideas (tool 6's
`correct_keywords`) are the question's own `keywords` (a teacher's, with variants: both sets' questions give them),
else made by code from the reference answer: its content words that the question does not already say (all of them
when that leaves fewer than two). The explanation is not generated (it does not change the score).

Printed and saved, against the human labels, on the held-out split (and on all answers): κ, accuracy and the
confusion table of (1) the tool's decision, (2) the model's verdict alone (P(correct)+P(partial)/2 >= 0.5),
(3) the keyword baseline measured in the same run (correct when at least half the expected words appear), and with
`--today` (4) the grader this replaced (the model's sampled 0-100, bounded by keywords); per question; per set and
the answer's language (`zh/en`: the zh set's answers written in English); seconds per answer (median, and those of
each item's first answer, whose prompt the KV cache does not hold yet).

    .venv/bin/python bench/eval_quiz_grading.py [--model local] [--limit N] [--readings all] [--fit] [--today] [--out PATH]
        [--split train|test] [--previous EARLIER.json]
    .venv/bin/python bench/eval_quiz_grading.py --refit-from bench/results/quiz_grading.json [more.json ...] --fit

`--fit` fits the calibration on the train split and writes it to src/consulta/apps/quiz/data/grading_calibration.json
(what the tool ships): its features are chosen on the train split alone, by forward selection on the log loss of
predicting each question's answers from a fit on the other questions' (`select_features`; a run with `--readings all`
gives it every yes/no reading to choose from); `--refit-from` reuses the model's recorded probabilities instead of running it again.
`--previous-calibration FILE` decides with an earlier calibration on this run's model probabilities and prints it as
the previous grader (the grader before, on the same answers, no extra model run). `--split train` grades the train
split alone (to try a change on it
without seeing the held-out answers); `--previous EARLIER.json` prints that run's decisions on the same answers as one
more grader (the grader this run's code replaces). `--model scripted:PATH` replays a script (a smoke test of the pipeline). A run with `--limit` or `--split` writes
`bench/results/quiz_grading.quick.json` (unless `--out`), never the figures of a full run.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
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
from consulta.apps.quiz._item_rules import has_cjk  # noqa: E402
from consulta.apps.quiz._judge import VERDICT_READINGS, JudgeUnavailable, ModelJudge  # noqa: E402
from consulta.apps.quiz._score import CORRECT_THRESHOLD, FALLBACK_SCORE, keyword_matches  # noqa: E402
from consulta.apps.quiz._short_answer import (  # noqa: E402
    CALIBRATION_FILE,
    CODE_FEATURES,
    Calibration,
    default_calibration,
    evidence,
)
from consulta.config import Settings  # noqa: E402
from consulta.models import prepare_model  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "grading"
DATA_ZH = Path(__file__).resolve().parent / "data" / "grading_zh"
DATA_SEMEVAL = Path(__file__).resolve().parent / "data" / "grading_semeval"
RESULTS = Path(__file__).resolve().parent / "results"
DATASET = "SemEval-2013 Task 7 SciEntsBank, 4 questions, 2-way labels (CC BY-SA 3.0; bench/data/grading)"
SETS = {
    "scientsbank": (DATA, DATASET),
    "zh": (
        DATA_ZH,
        "a bilingual (zh/en) set of 40 answers to 4 questions, one rater (Apache-2.0; bench/data/grading_zh)",
    ),
    "seb": (
        DATA_SEMEVAL / "sciEntsBank",
        "SemEval-2013 Task 7 SciEntsBank, 63 questions (48 train, 15 test = the release's unseen questions), 420 "
        "answers, 2-way labels (CC BY-SA 3.0; bench/data/grading_semeval)",
    ),
    "beetle": (
        DATA_SEMEVAL / "beetle",
        "SemEval-2013 Task 7 Beetle, 25 questions (16 train, 9 test = the release's unseen questions), 188 answers, "
        "2-way labels (CC BY-SA 3.0; bench/data/grading_semeval)",
    ),
    "seb_domains": (
        DATA_SEMEVAL / "seb_domains",
        "SemEval-2013 Task 7 SciEntsBank unseen-domains test, 46 questions, 460 answers, all test, 2-way labels (CC BY-SA "
        "3.0; bench/data/grading_semeval/seb_domains)",
    ),
}
FIXED = ("bias", "model", *CODE_FEATURES)  # then one feature per yes/no reading of the verdict
_STOP = frozenset(
    "the a an of to in on for and or but is are was were be been it its this that these those which what when where why "
    "how with by from as at into than then there their they them will would could should can other others each when "
    "very more most less much many some such".split()
)


def load_set(
    folder: Path = DATA, *, name: str = "scientsbank"
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The questions (by id) and the labelled answers (each with `set`: `name`). A question may give its expected
    ideas (`keywords`, variants with `|`); else they are made from its reference answer (`expected_ideas`)."""
    questions = {q["question_id"]: q for q in json.loads((folder / "questions.json").read_text(encoding="utf-8"))}
    answers = [
        {**json.loads(line), "set": name}
        for line in (folder / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return questions, answers


def load_sets(names: Sequence[str]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The named sets (`SETS`) together."""
    questions: dict[str, dict[str, Any]] = {}
    answers: list[dict[str, Any]] = []
    for name in names:
        q, a = load_set(SETS[name][0], name=name)
        questions.update(q)
        answers.extend(a)
    return questions, answers


def keywords_of(question: dict[str, Any]) -> list[str]:
    """Tool 6's `correct_keywords` for a question of a set: its own, or made from its reference answer."""
    return list(question.get("keywords") or expected_ideas(question["question"], question["reference_answer"]))


def split_of(answers: Sequence[dict[str, Any]], questions: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """`train` or `test` for each answer id: its question's `split` when the question gives one (the SemEval sets are
    split by question: a held-out question is one the fit never saw); else within each (question, label), ordered by
    a hash of the id, alternately."""
    groups: dict[tuple[str, str], list[str]] = {}
    split = {}
    for a in answers:
        if questions and (given := questions[a["question_id"]].get("split")):
            split[a["id"]] = given
            continue
        groups.setdefault((a["question_id"], a["label"]), []).append(a["id"])
    for ids in groups.values():
        for i, answer_id in enumerate(sorted(ids, key=lambda x: hashlib.sha256(x.encode()).hexdigest())):
            split[answer_id] = "train" if i % 2 == 0 else "test"
    return split


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
        "n": len(human),
        "kappa": cohen_kappa(predicted, human) if human else None,
        "accuracy": round((tp + tn) / len(human), 4) if human else None,
        "confusion": {"tp": tp, "fp": sum(predicted) - tp, "fn": sum(human) - tp, "tn": tn},
    }


async def grade_all(
    judge: ModelJudge,
    questions: dict[str, dict[str, Any]],
    answers: Sequence[dict[str, Any]],
    *,
    readings: Sequence[str] = ("same",),
    today: bool = False,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """The model's verdict probabilities (its labels and the yes/no `readings`) and code's evidence for each answer
    (and today's grade with `today`)."""
    graded = []
    for i, item in enumerate(answers, 1):
        q = questions[item["question_id"]]
        keywords = keywords_of(q)
        started = time.perf_counter()
        try:
            probabilities: dict[str, float] | None = await judge.verdict(
                user_answer=item["answer"],
                expected=keywords,
                stem=q["question"],
                reference_answer=q["reference_answer"],
                readings=readings,
            )
            error = None
        except JudgeUnavailable as failure:
            probabilities, error = None, str(failure)
        seconds = round(time.perf_counter() - started, 2)
        record: dict[str, Any] = {
            "id": item["id"],
            "question_id": item["question_id"],
            "set": item.get("set", "scientsbank"),
            "human": item["label"],
            "answer": item["answer"],
            "keywords": keywords,
            "probabilities": probabilities,
            "error": error,
            "seconds": seconds,
            # the item's prompt is not in the KV cache yet: the whole prompt is read (a warm answer reads its own part)
            "first_of_question": i == 1 or answers[i - 2]["question_id"] != item["question_id"],
        }
        if today:
            record.update(await _today(judge, q, item["answer"], keywords))
        graded.append(record)
        if progress:
            shown = " ".join(f"{k[:4]}={v:.2f}" for k, v in (probabilities or {}).items())
            print(
                f"  {i:>3}/{len(answers)} {item['id']:<16} human={item['label']:<9} {shown} {seconds:6.2f}s", flush=True
            )
    return graded


async def _today(judge: ModelJudge, q: dict[str, Any], answer: str, keywords: list[str]) -> dict[str, Any]:
    """The grader this replaced: the model's sampled 0-100 bounded by keyword coverage, correct at >= 80."""
    found = keyword_matches(answer, keywords)
    started = time.perf_counter()
    try:
        grade = await judge.grade_answer(
            user_answer=answer, expected=keywords, stem=q["question"], reference_answer=q["reference_answer"]
        )
        cap = 100 if not keywords else round(60 + 40 * len(found) / len(keywords))  # its keyword bound
        score, fallback = min(grade.score, cap), False
    except JudgeUnavailable:
        score, fallback = FALLBACK_SCORE, True
    return {
        "today_score": score,
        "today_correct": (not fallback) and score >= CORRECT_THRESHOLD,
        "today_seconds": round(time.perf_counter() - started, 2),
    }


def with_evidence(graded: list[dict[str, Any]], questions: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record with code's evidence (computed again: cheap, and follows the code measured)."""
    for g in graded:
        q = questions[g["question_id"]]
        found = evidence(g["answer"], g["keywords"], reference=q["reference_answer"], stem=q["question"])
        g["found"], g["keyword_share"], g["reference_share"] = (
            list(found.found),
            found.keyword_share,
            found.reference_share,
        )
        g["answer_tokens"], g["negation_differs"], g["on_topic_share"] = (
            found.answer_tokens,
            found.negation_differs,
            found.on_topic_share,
        )
        said = sum(
            any(v.strip() in g["answer"].casefold() for v in k.casefold().split("|") if v.strip())
            for k in g["keywords"]
        )
        g["baseline_correct"] = said * 2 >= len(g["keywords"])  # substrings, no variants beyond those listed
    return graded


def _evidence_of(g: dict[str, Any]) -> Any:
    from consulta.apps.quiz._short_answer import Evidence

    return Evidence(
        found=tuple(g["found"]),
        missing=(),
        keyword_share=g["keyword_share"],
        reference_share=g["reference_share"],
        answer_tokens=g.get("answer_tokens", 0),
        negation_differs=g.get("negation_differs", False),
        on_topic_share=g.get("on_topic_share"),
    )


def _design(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> Any:
    """The feature matrix of `rows` for the features `names` (`FIXED` ones and yes/no readings)."""
    import numpy as np

    readings = [n for n in names if n not in FIXED]
    table = [Calibration.features(g["probabilities"], _evidence_of(g), readings) for g in rows]
    return np.array([[x[n] for n in names] for x in table], dtype=float)


def _logistic(x: Any, y: Any, l2: float) -> Any:
    """Logistic regression weights (Newton's method, an L2 penalty on all but the first column, the bias)."""
    import numpy as np

    w = np.zeros(x.shape[1])
    penalty = np.diag([0.0] + [l2] * (x.shape[1] - 1))
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def _cv_log_loss(rows: Sequence[dict[str, Any]], names: Sequence[str], l2: float) -> float:
    """Mean log loss of the features `names`, each question's answers predicted by a fit on the other questions'
    (leave one question out: a new item is what the tool meets)."""
    import numpy as np

    x, y = _design(rows, names), np.array([g["human"] == "correct" for g in rows], dtype=float)
    groups = np.array([g["question_id"] for g in rows])
    loss = 0.0
    for question in dict.fromkeys(groups):
        out = groups == question
        w = _logistic(x[~out], y[~out], l2)
        p = np.clip(1 / (1 + np.exp(-(x[out] @ w))), 1e-6, 1 - 1e-6)
        loss -= float(np.sum(y[out] * np.log(p) + (1 - y[out]) * np.log(1 - p)))
    return loss / len(rows)


def select_features(
    rows: Sequence[dict[str, Any]], *, l2: float = 1.0, gain: float = 0.002
) -> tuple[list[str], list[dict[str, Any]]]:
    """Forward selection on the training answers: from the bias alone, add the feature (code's evidence, the labels,
    a yes/no reading every row has) that lowers the leave-one-question-out log loss most, while it lowers it by at
    least `gain`. The chosen names and each step's loss."""
    have = [r for r in VERDICT_READINGS if all(r in g["probabilities"] for g in rows)]
    chosen, loss = ["bias"], _cv_log_loss(rows, ["bias"], l2)
    steps: list[dict[str, Any]] = [{"added": "bias", "cv_log_loss": round(loss, 4)}]
    candidates = [n for n in (*FIXED, *have) if n != "bias"]
    while candidates:
        losses = {n: _cv_log_loss(rows, [*chosen, n], l2) for n in candidates}
        best = min(losses, key=losses.__getitem__)
        if loss - losses[best] < gain:
            break
        loss = losses[best]
        chosen.append(best)
        candidates.remove(best)
        steps.append({"added": best, "cv_log_loss": round(losses[best], 4)})
    return chosen, steps


def fit(
    train: Sequence[dict[str, Any]], *, sets: Sequence[str] = ("scientsbank",), l2: float = 1.0
) -> tuple[Calibration, list[dict[str, Any]]]:
    """The features chosen by `select_features`, the logistic regression of the human label on them over all the
    training answers, then the threshold on P(correct) that maximises κ on the same answers; and the selection's
    steps."""
    import numpy as np

    rows = [g for g in train if g["probabilities"] is not None]
    names, steps = select_features(rows, l2=l2)
    x = _design(rows, names)
    y = np.array([g["human"] == "correct" for g in rows], dtype=float)
    w = _logistic(x, y, l2)
    p = 1 / (1 + np.exp(-(x @ w)))
    human = [bool(v) for v in y]
    best = max((cohen_kappa([pi >= t for pi in p], human) or -1.0, -abs(t - 0.5), t) for t in np.linspace(0.1, 0.9, 81))
    weights = {name: round(float(v), 4) for name, v in zip(names, w, strict=True)}
    named = "; ".join(SETS[name][1] for name in sets)
    source = (
        f"{named}: train split ({len(rows)} answers), features chosen by leave-one-question-out log loss, "
        "bench/eval_quiz_grading.py --fit"
    )
    return Calibration(weights=weights, threshold=round(float(best[2]), 3), source=source), steps


def readings_auc(graded: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """How well each raw signal alone ranks the people's correct answers above their incorrect ones (AUC)."""
    rows = [g for g in graded if g["probabilities"] is not None]
    signals: dict[str, Any] = {
        "model": lambda g: g["probabilities"]["correct"] + g["probabilities"].get("partial", 0.0) / 2,
        "keywords": lambda g: g["keyword_share"],
        "reference": lambda g: g["reference_share"] or 0.0,
        "negation_same": lambda g: float(not g.get("negation_differs", False)),
        "on_topic": lambda g: g.get("on_topic_share") or 0.0,
        "length": lambda g: g.get("answer_tokens", 0),
        **{r: (lambda g, r=r: g["probabilities"].get(r)) for r in VERDICT_READINGS},
    }
    out: dict[str, float | None] = {}
    for name, signal in signals.items():
        pairs = [(signal(g), g["human"] == "correct") for g in rows if signal(g) is not None]
        pos = [v for v, h in pairs if h]
        neg = [v for v, h in pairs if not h]
        if pos and neg and len(pairs) == len(rows):
            wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
            out[name] = round(wins / (len(pos) * len(neg)), 3)
    return out


def decide(graded: list[dict[str, Any]], calibration: Calibration) -> None:
    for g in graded:
        if g["probabilities"] is None:
            g["score"], g["is_correct"] = FALLBACK_SCORE, False
            continue
        mapping = calibration.for_verdict(g["probabilities"])
        g["score"] = mapping.score(mapping.probability(g["probabilities"], _evidence_of(g)))
        g["is_correct"] = g["score"] >= CORRECT_THRESHOLD
        pr = g["probabilities"]
        g["model_correct"] = pr["correct"] + pr.get("partial", 0.0) / 2 >= 0.5


def summarize(graded: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if not graded:
        return {}
    human = [g["human"] == "correct" for g in graded]
    graders = {
        "tool": [g["is_correct"] for g in graded],
        "model_verdict_alone": [g.get("model_correct", False) for g in graded],
        "baseline_keywords_half": [g["baseline_correct"] for g in graded],
        "code_every_idea_found": [g["keyword_share"] == 1.0 for g in graded],
    }
    if graded and all("today_correct" in g for g in graded):
        graders["today"] = [g["today_correct"] for g in graded]
    if graded and all("previous_correct" in g for g in graded):
        graders["previous"] = [g["previous_correct"] for g in graded]
    per_question = {}
    for qid in dict.fromkeys(g["question_id"] for g in graded):
        idx = [i for i, g in enumerate(graded) if g["question_id"] == qid]
        per_question[qid] = agreement([graders["tool"][i] for i in idx], [human[i] for i in idx])
    seconds = [g["seconds"] for g in graded]
    cold = [g["seconds"] for g in graded if g.get("first_of_question")]
    summary = {
        "n": len(graded),
        "human_correct": sum(human),
        **{name: agreement(values, human) for name, values in graders.items()},
        "per_question": per_question,
        "fallbacks": sum(g["probabilities"] is None for g in graded),
        "seconds_median": round(statistics.median(seconds), 2) if seconds else None,
        "seconds_max": max(seconds) if seconds else None,
        "seconds_first_of_question": cold,
        "signal_auc": readings_auc(graded),
    }
    if "today" in graders:
        summary["today_seconds_median"] = round(statistics.median(g["today_seconds"] for g in graded), 2)
    return summary


def _print(summary: dict[str, Any], title: str) -> None:
    print(f"\n{title}: n={summary['n']}, people say correct {summary['human_correct']}")
    print(f"{'grader':<40}{'kappa':>8}{'accuracy':>10}  confusion (tp fp fn tn)")
    for name, key in (
        ("tool 6 (model probabilities + code)", "tool"),
        ("model verdict alone", "model_verdict_alone"),
        ("baseline: half the keywords", "baseline_keywords_half"),
        ("code alone: every expected idea found", "code_every_idea_found"),
        ("today's grader (sampled 0-100 + cap)", "today"),
        ("previous grader (--previous run)", "previous"),
    ):
        if key in summary:
            row, c = summary[key], summary[key]["confusion"]
            print(f"{name:<40}{row['kappa']!s:>8}{row['accuracy']:>10.3f}  {c['tp']} {c['fp']} {c['fn']} {c['tn']}")
    print(
        f"fallbacks {summary['fallbacks']}, median {summary['seconds_median']} s per answer (max {summary['seconds_max']}"
        f"; an item's first answer, its prompt not yet cached: {summary['seconds_first_of_question']} s)"
        + (f"; today's grader median {summary['today_seconds_median']} s" if "today_seconds_median" in summary else "")
    )
    if summary.get("signal_auc"):
        print("each signal alone, AUC: " + ", ".join(f"{k} {v}" for k, v in summary["signal_auc"].items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="model spec (local, scripted:PATH, openai:NAME, ...)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N answers (round-robin over questions)")
    parser.add_argument(
        "--timeout", type=float, default=15.0, help="seconds allowed per verdict (default: tool 6's 15)"
    )
    parser.add_argument("--fit", action="store_true", help="fit the calibration on the train split and ship it")
    parser.add_argument("--today", action="store_true", help="also run the grader this replaced (slow)")
    parser.add_argument(
        "--refit-from", type=Path, nargs="+", default=None, help="reuse results files' model probabilities (no model)"
    )
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON results")
    parser.add_argument("--quiet", action="store_true", help="no line per answer")
    parser.add_argument(
        "--set", choices=[*SETS, "all"], nargs="+", default=["all"], help="which labelled sets (default: all)"
    )
    parser.add_argument(
        "--split",
        choices=["train", "test", "all"],
        default="all",
        help="grade only the train split (to try a change without seeing the held-out answers) or the test split",
    )
    parser.add_argument(
        "--previous",
        type=Path,
        default=None,
        help="an earlier results file: its grader's decisions on the same answers, side by side (no model run)",
    )
    parser.add_argument(
        "--previous-calibration",
        type=Path,
        default=None,
        help="an earlier calibration file: its decisions on this run's model probabilities, side by side as the "
        "previous grader (no model run)",
    )
    parser.add_argument(
        "--readings",
        default=None,
        help="the verdict's yes/no readings, comma-separated names, or 'all' (default: those the shipped calibration "
        f"uses); names: {', '.join(VERDICT_READINGS)}",
    )
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if args.readings is None:
        readings = list(default_calibration().wanted)
    elif args.readings == "all":
        readings = list(VERDICT_READINGS)
    else:
        readings = [r.strip() for r in args.readings.split(",") if r.strip()]
        if unknown := [r for r in readings if r not in VERDICT_READINGS]:
            parser.error(f"unknown --readings {unknown}; names: {', '.join(VERDICT_READINGS)}")
    names = list(SETS) if "all" in args.set else list(dict.fromkeys(args.set))
    questions, answers = load_sets(names)
    split = split_of(answers, questions)  # of the whole set: a split run grades the same answers as a full run's split
    if args.split != "all":
        if args.fit and args.split == "test":
            parser.error("--fit needs the train split")
        answers = [a for a in answers if split[a["id"]] == args.split]
    load_seconds = wall = 0.0
    if args.refit_from:
        runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.refit_from]
        wanted = {a["id"] for a in answers}
        by_id = {g["id"]: g for run in runs for g in run["answers"] if g["id"] in wanted}
        graded = list(by_id.values())  # a later file's record of an answer replaces an earlier one's
        model_name = " + ".join(dict.fromkeys(run["model"] for run in runs))
    else:
        chosen = interleaved(answers)[: args.limit] if args.limit else list(answers)
        # One question after another: the model's KV cache keeps the item's prompt from one answer to the next.
        order = list(dict.fromkeys(a["question_id"] for a in answers))
        chosen.sort(key=lambda a: order.index(a["question_id"]))
        loading = time.perf_counter()
        model = prepare_model(args.model, models_dir=Settings.from_env().models_dir)  # loaded before the clock
        load_seconds = round(time.perf_counter() - loading, 1)
        judge = ModelJudge(model, timeout=args.timeout)
        started = time.perf_counter()
        graded = asyncio.run(
            grade_all(judge, questions, chosen, readings=readings, today=args.today, progress=not args.quiet)
        )
        wall = round(time.perf_counter() - started, 1)
        model_name = args.model
    graded = with_evidence(graded, questions)
    for before, g in zip([None, *graded], graded, strict=False):  # records of older runs, kept in the order they ran
        g.setdefault("first_of_question", before is None or before["question_id"] != g["question_id"])
    for g in graded:
        g["split"] = split[g["id"]]
        g.setdefault("set", "scientsbank")
        g["lang"] = "zh" if has_cjk(g["answer"]) else "en"
    calibration, selection = default_calibration(), None
    if args.fit:
        calibration, selection = fit([g for g in graded if g["split"] == "train"], sets=names)
        tmp = CALIBRATION_FILE.with_suffix(".json.tmp")
        tmp.write_text(calibration.to_json(), encoding="utf-8")
        tmp.replace(CALIBRATION_FILE)
        print(f"fitted {calibration.weights}, threshold {calibration.threshold}; wrote {CALIBRATION_FILE}")
    decide(graded, calibration)
    if args.previous:
        before = {g["id"]: g for g in json.loads(args.previous.read_text(encoding="utf-8"))["answers"]}
        if missing := [g["id"] for g in graded if g["id"] not in before or "is_correct" not in before[g["id"]]]:
            parser.error(f"--previous {args.previous} has no decision for {len(missing)} answers, e.g. {missing[0]}")
        for g in graded:
            g["previous_correct"] = before[g["id"]]["is_correct"]
    if args.previous_calibration:
        before_calibration = Calibration.from_file(args.previous_calibration)
        for g in graded:
            mapping = before_calibration.for_verdict(g["probabilities"])
            p = mapping.probability(g["probabilities"], _evidence_of(g)) if g["probabilities"] else 0.0
            g["previous_correct"] = g["probabilities"] is not None and mapping.score(p) >= CORRECT_THRESHOLD
    held_out = [g for g in graded if g["split"] == "test"]
    summary: dict[str, Any] = {"held_out": summarize(held_out) if held_out else None, "all": summarize(graded)}
    summary["by_set"] = {
        name: {
            "held_out": summarize([g for g in held_out if g["set"] == name]) or None,
            "all": summarize([g for g in graded if g["set"] == name]) or None,
        }
        for name in names
    }
    summary["by_language"] = {  # per set and the answer's language: "zh/en" is the zh set's answers in English
        part: {
            "held_out": summarize([g for g in held_out if f"{g['set']}/{g['lang']}" == part]) or None,
            "all": summarize([g for g in graded if f"{g['set']}/{g['lang']}" == part]) or None,
        }
        for part in sorted({f"{g['set']}/{g['lang']}" for g in graded})
    }
    partial_run = args.limit or args.split != "all"
    out = args.out or RESULTS / ("quiz_grading.quick.json" if partial_run else "quiz_grading.json")
    record = {
        "benchmark": "eval_quiz_grading",
        "source": source_version(),
        "model": model_name,
        "limit": args.limit,
        "datasets": {name: SETS[name][1] for name in names},
        "readings": readings if not args.refit_from else None,
        "split": args.split,
        "previous": str(args.previous or args.previous_calibration or "") or None,
        "calibration": {"weights": dict(calibration.weights), "threshold": calibration.threshold},
        "feature_selection": selection,
        "correct_threshold": CORRECT_THRESHOLD,
        "load_seconds": load_seconds,
        "wall_seconds": wall,
        "summary": summary,
        "answers": graded,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out)  # atomic: a reader never sees half a file
    for name in names:
        part = summary["by_set"][name]
        if part["held_out"]:
            _print(part["held_out"], f"held-out split of {name} ({SETS[name][1]}), model {model_name}")
    for name, part in summary["by_language"].items():
        if part["held_out"]:
            _print(part["held_out"], f"held-out split, set/answer language {name}")
    if len(names) > 1 and summary["held_out"]:
        _print(summary["held_out"], "held-out split, all sets")
    if args.split == "train":
        for name in names:
            if part := summary["by_set"][name]["all"]:
                _print(part, f"train split of {name}, model {model_name}")
    _print(
        summary["all"],
        "all answers graded (" + ("train + held-out" if args.split == "all" else args.split) + ", all sets)",
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
