"""Make `sciEntsBank/` and `beetle/` (questions.json, answers.jsonl) from the organisers' SemEval-2013 Task 7 release.

    python bench/data/grading_semeval/from_release.py UNZIPPED_SEMEVAL_3WAY_DIR

UNZIPPED_SEMEVAL_3WAY_DIR is `semeval-3way.zip` of https://github.com/myrosia/semeval-2013-task7 unzipped (it holds
`training/2way/…` and `test/2way/…`). The split is the release's and is BY QUESTION: `train` questions come from
`training/2way/<corpus>` (a sample of them, chosen by a hash of the question id), `test` questions are all of
`test/2way/<corpus>/test-unseen-questions` (questions no training file has). Each question keeps a sample of its
answers (the first N by a hash of the answer id: the labels' own proportions, not balanced). The question's reference
answer is its first reference (Beetle: its first BEST one). The four questions of bench/data/grading (EM_35, ME_28b,
MX_22a, PS_51a) are left out, so that set's held-out answers stay unseen.
"""

from __future__ import annotations

import hashlib
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = {  # corpus: (train questions kept, answers per train question, answers per test question)
    "sciEntsBank": (48, 5, 12),
    "beetle": (16, 5, 12),
}
LEFT_OUT = frozenset({"EM_35", "ME_28b", "MX_22a", "PS_51a"})


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _question(path: Path, *, split: str, answers: int) -> tuple[dict[str, str], list[dict[str, str]]]:
    root = ET.parse(path).getroot()
    references = root.findall("./referenceAnswers/referenceAnswer")
    best = [r for r in references if r.get("category") == "BEST"] or references
    question = {
        "question_id": root.attrib["id"],
        "question": " ".join((root.findtext("questionText") or "").split()),
        "reference_answer": " ".join((best[0].text or "").split()),
        "split": split,
        "source_file": path.name,
    }
    rows = [
        {
            "id": a.attrib["id"],
            "question_id": root.attrib["id"],
            "answer": " ".join((a.text or "").split()),
            "label": a.attrib["accuracy"],
        }
        for a in root.findall("./studentAnswers/studentAnswer")
    ]
    rows = sorted((r for r in rows if r["answer"]), key=lambda r: _hash(r["id"]))[:answers]
    return question, sorted(rows, key=lambda r: r["id"])


def _write(folder: str, questions: list[dict[str, str]], answers: list[dict[str, str]]) -> None:
    """`HERE/folder/questions.json` and `answers.jsonl`, and a line saying how many."""
    out = HERE / folder
    out.mkdir(exist_ok=True)
    (out / "questions.json").write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n", "utf-8")
    (out / "answers.jsonl").write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), "utf-8")
    print(f"{folder}: {len(questions)} questions, {len(answers)} answers")


def main(release: Path) -> None:
    for corpus, (kept, per_train, per_test) in CORPORA.items():
        train_files = sorted((release / "training" / "2way" / corpus).glob("*.xml"))
        test_files = sorted((release / "test" / "2way" / corpus / "test-unseen-questions").glob("*.xml"))
        chosen = [f for f in train_files if ET.parse(f).getroot().attrib["id"] not in LEFT_OUT]
        chosen = sorted(chosen, key=lambda f: _hash(ET.parse(f).getroot().attrib["id"]))[:kept]
        questions, answers = [], []
        for files, split, n in ((chosen, "train", per_train), (test_files, "test", per_test)):
            for path in sorted(files):
                question, rows = _question(path, split=split, answers=n)
                questions.append(question)
                answers.extend(rows)
        _write(corpus, questions, answers)
    probe_pool(release)
    unseen_domains(release)


DOMAINS_PER_QUESTION = 10


def unseen_domains(release: Path) -> None:
    """`seb_domains/`: SciEntsBank's *unseen-domains* test (46 questions of science domains no training question is
    from), the first 10 answers of each by the same hash, all `split: test`: a held-out set no fit or exploration has
    read (added after the grading probe was fitted)."""
    questions, answers = [], []
    for path in sorted((release / "test" / "2way" / "sciEntsBank" / "test-unseen-domains").glob("*.xml")):
        question, rows = _question(path, split="test", answers=DOMAINS_PER_QUESTION)
        questions.append(question)
        answers.extend(rows)
    _write("seb_domains", questions, answers)


PROBE_POOL = {"sciEntsBank": 14, "beetle": 16}  # answers per training question for the grading probe's fit


def probe_pool(release: Path) -> None:
    """`probe_train/`: every training question of both corpora (but LEFT_OUT) with its first N answers by the same
    hash (a superset of the `train` answers above): what `bench/fit_quiz_probe.py` fits the grading probe on. No test
    question is in it."""
    questions, answers = [], []
    for corpus, n in PROBE_POOL.items():
        for path in sorted((release / "training" / "2way" / corpus).glob("*.xml")):
            if ET.parse(path).getroot().attrib["id"] in LEFT_OUT:
                continue
            question, rows = _question(path, split="train", answers=n)
            questions.append({**question, "corpus": corpus})
            answers.extend(rows)
    _write("probe_train", questions, answers)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
