"""The model judge (typed answers, bounded, failures made `JudgeUnavailable`) and the shipped reference list (real
addresses, valid ISBNs, every category served, references chosen by what the item names)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence

import pytest

from consulta.apps.quiz._judge import ItemJudgment, JudgeUnavailable, ModelJudge
from consulta.apps.quiz._references import CATEGORIES, MIN_REFERENCES, choose_references, load_references

from ._scripts import failing, final, rating, scripted, short_answer, silent


def test_item_ratings_map_to_a_0_1_score() -> None:
    judgment = ItemJudgment(clarity=5, answer_correct=3, distractors=1, fairness=5)
    assert judgment.score == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert judgment.score_for(with_distractors=False) == pytest.approx((1 + 0.5 + 1) / 3, abs=1e-4)


def test_judge_item_sends_the_item_and_reads_the_typed_answer() -> None:
    seen: list[str] = []
    judge = scripted(rating(4, 5, 3, 5, ["distractor C is implausible"]))
    original = judge.model.function

    def spy(messages, info):  # type: ignore[no-untyped-def]
        seen.append(str(messages[-1].parts[-1].content))
        seen.append(info.instructions or "")
        return original(messages, info)

    judge.model.function = spy
    judgment = asyncio.run(
        judge.judge_item(
            stem="2+2?", question_type="multiple_choice", choices=["3", "4", "5", "22"], correct_answer="4", lang="en"
        )
    )
    assert judgment.reasons == ["distractor C is implausible"] and judgment.distractors == 3
    assert '"correct_answer": "4"' in seen[0] and "Rate the item 1-5" in seen[1]


def test_grade_and_explain_answers() -> None:
    judge = scripted(
        final(score=64, reasoning="half", missing=["isolation"]), final(explanation="Because.", key_points=[])
    )
    grade = asyncio.run(judge.grade_answer(user_answer="atomicity", expected=["atomicity", "isolation"], stem="ACID?"))
    assert (grade.score, grade.missing) == (64, ["isolation"])
    assert (
        asyncio.run(judge.explain(question_type="short_answer", user_answer="atomicity", is_correct=False)).explanation
        == "Because."
    )


def test_out_of_range_grade_is_asked_again_then_given_up() -> None:
    judge = scripted(final(score=150, reasoning="x", missing=[]), final(score=-3, reasoning="x", missing=[]))
    with pytest.raises(JudgeUnavailable):
        asyncio.run(judge.grade_answer(user_answer="a", expected=["b"]))
    assert judge.model.calls == 2


class ProbabilityDouble:
    """A test double of a model that reads label probabilities (the embedded model does, in one forward pass): the
    verdict's labels get `verdict`, yes / no / Yes / No get `yes_no` (None: it fails on them)."""

    def __init__(self, yes_no: dict[str, float] | None = None) -> None:
        self.asked: list[tuple[str, str, tuple[str, ...]]] = []
        self.yes_no = yes_no

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        self.asked.append((system, prompt, tuple(labels)))
        if "yes" in labels:
            if self.yes_no is None:
                raise RuntimeError("the double gives no yes/no reading")
            return self.yes_no
        return {"correct": 0.7, "partial": 0.2, "incorrect": 0.1}


def test_a_verdict_is_two_readings_of_one_prompt_from_probabilities() -> None:
    model = ProbabilityDouble({"yes": 0.3, "no": 0.2, "Yes": 0.3, "No": 0.2})
    judge = ModelJudge(model)  # type: ignore[arg-type]
    probabilities = asyncio.run(
        judge.verdict(user_answer="higher", expected=["pitch|tone"], stem="How?", reference_answer="Higher pitch.")
    )
    assert probabilities == pytest.approx({"correct": 0.7, "partial": 0.2, "incorrect": 0.1, "same": 0.6})
    (system, first, labels), (system2, second, yes_no) = model.asked
    assert labels == ("correct", "partial", "incorrect") and yes_no == ("yes", "no", "Yes", "No")
    assert "Expected ideas: pitch / tone" in first and system == system2
    # the KV cache serves the second reading: the same system and prompt up to the question asked at the end
    shared = first.rsplit("\n", 1)[0]
    assert second.startswith(shared) and shared.endswith("Student's answer: higher") and first != second


def test_a_verdict_stands_alone_when_the_second_reading_fails() -> None:
    judge = ModelJudge(ProbabilityDouble(None))  # type: ignore[arg-type]
    probabilities = asyncio.run(judge.verdict(user_answer="higher", expected=["pitch"], reference_answer="Higher."))
    assert probabilities == {"correct": 0.7, "partial": 0.2, "incorrect": 0.1}


def test_failures_and_silence_are_judge_unavailable() -> None:
    with pytest.raises(JudgeUnavailable, match="ConnectionError"):
        asyncio.run(failing().grade_answer(user_answer="a", expected=["b"]))
    with pytest.raises(JudgeUnavailable, match="within 0.1 s"):
        asyncio.run(silent(0.1).explain(question_type="true_false", user_answer="True", is_correct=True))


class SilentReader:
    """A test double of a model that reads label probabilities but never gives them (the embedded model, stuck)."""

    def __init__(self) -> None:
        self.cancelled = 0

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


def test_a_label_reading_past_the_time_limit_is_judge_unavailable_and_cancelled() -> None:
    model = SilentReader()
    judge = ModelJudge(model, timeout=10)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises(JudgeUnavailable, match="within 0.1 s") as unavailable:
        asyncio.run(judge.verdict(user_answer="higher", expected=["pitch"], timeout=0.1))
    assert unavailable.value.kind == "timeout"
    with pytest.raises(JudgeUnavailable, match="within 0.1 s"):
        asyncio.run(judge.answer_blind(stem="2+2=4?", question_type="true_false", choices=None, timeout=0.1))
    assert model.cancelled == 2 and time.monotonic() - started < 5


@pytest.mark.parametrize("reads_labels", [True, False], ids=["label-reader", "typed-answer"])
def test_a_short_answer_the_model_never_grades_gets_the_seeds_fallback_in_time(reads_labels: bool) -> None:
    from consulta.apps.quiz._grading import FALLBACK, model_short_answers

    grade = model_short_answers(lambda: SilentReader() if reads_labels else silent().model, timeout_s=0.2)
    request = short_answer(answer="a higher pitch", keywords=["pitch"], stem="What does a faster vibration give?")
    started = time.monotonic()
    scored = asyncio.run(grade(request))
    assert (scored.score, scored.is_correct, scored.graded_by) == (FALLBACK.score, False, "fallback")
    assert "did not answer in time" in (scored.explanation or "") and time.monotonic() - started < 5


def _isbn13_ok(isbn: str) -> bool:
    digits = [int(c) for c in isbn if c.isdigit()]
    return len(digits) == 13 and sum(d * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits)) % 10 == 0


def test_the_reference_list_is_real_and_complete() -> None:
    refs = load_references()
    assert len({r.id for r in refs}) == len(refs) and len({r.url for r in refs}) == len(refs)
    for ref in refs:
        assert re.fullmatch(r"https://[a-z0-9.-]+\.(org|net|com|io|edu)/\S*", ref.url), ref.url
        assert not re.search(r"example\.|placeholder|localhost", ref.url), ref.url
        assert (
            set(ref.categories) <= set(CATEGORIES)
            and ref.topics
            and ref.kind in {"docs", "wikipedia", "book", "standard"}
        )
        assert len(ref.about["en"]) >= 100 and len(ref.about["zh-CN"]) >= 25, ref.id
        if ref.isbn:
            assert _isbn13_ok(ref.isbn), ref.id
    for category in CATEGORIES:
        assert sum(category in r.categories for r in refs) >= 10, category


@pytest.mark.parametrize(
    ("category", "text", "lang", "first"),
    [
        ("technical", "Which SQL join keeps unmatched rows of the left table?", "en", "postgres-joins"),
        ("business", "什么是净现值？NPV 如何计算？", "zh-CN", "wiki-npv"),
        ("general", "Which fallacy attacks the person instead of the argument (ad hominem)?", "en", "wiki-fallacy"),
        ("technical", "Python 中列表和元组有什么区别？", "zh-CN", "python-tutorial-zh"),
    ],
)
def test_references_follow_the_items_words(category: str, text: str, lang: str, first: str) -> None:
    chosen = choose_references(category=category, texts=[text], lang=lang)
    assert len(chosen) >= MIN_REFERENCES and chosen[0].id == first


def test_references_without_a_topic_come_from_the_category() -> None:
    for category in CATEGORIES:
        chosen = choose_references(category=category, texts=["zzz"], lang="en")
        assert len(chosen) == MIN_REFERENCES and all(category in r.categories for r in chosen)
    assert len(choose_references(category=None, texts=[], lang="en")) == MIN_REFERENCES
    assert "mysql" not in {
        w for r in choose_references(category="technical", texts=["mysql"], lang="en") for w in r.topics
    }


def _grading_eval():  # type: ignore[no-untyped-def]
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "bench" / "eval_quiz_grading.py"
    spec = importlib.util.spec_from_file_location("eval_quiz_grading", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_cohen_kappa() -> None:
    kappa = _grading_eval().cohen_kappa
    assert kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert kappa([True, True, False, False], [False, False, True, True]) == -1.0
    # 20 items: 15 agree; both say yes 10 times -> chance 0.5, observed 0.75
    a = [True] * 10 + [False] * 10
    b = [True] * 7 + [False] * 3 + [True] * 3 + [False] * 7
    assert kappa(a, b) == pytest.approx(0.4)
    assert kappa([True, True], [True, True]) is None
    with pytest.raises(ValueError):
        kappa([True], [True, False])


def test_the_labelled_set_and_the_grading_eval_with_a_scripted_model(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    bench = _grading_eval()
    questions, answers = bench.load_set()
    assert len(answers) >= 100 and {a["label"] for a in answers} == {"correct", "incorrect"}
    assert {a["question_id"] for a in answers} == set(questions) and len({a["id"] for a in answers}) == len(answers)
    assert bench.expected_ideas(questions["PS_51a"]["question"], questions["PS_51a"]["reference_answer"]) == [
        "tighter",
        "pitch",
        "higher",
    ]
    split = bench.split_of(answers)
    assert abs(sum(v == "train" for v in split.values()) - len(answers) / 2) <= 8  # about half, per question and label
    script = tmp_path / "grade.yaml"
    script.write_text("- tool_calls:\n    - name: final_result\n      args: {verdict: correct}\n", encoding="utf-8")
    out = tmp_path / "out.json"
    assert bench.main(["--model", f"scripted:{script}", "--limit", "8", "--out", str(out), "--quiet"]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["summary"]["all"]["n"] == 8 and len({a["question_id"] for a in record["answers"]}) == 8
    assert set(record["summary"]["by_set"]) == {"scientsbank", "zh", "seb", "beetle", "seb_domains"}  # each on its own
    assert {"scientsbank/en", "zh/zh"} <= set(record["summary"]["by_language"])  # and by the answer's language
    assert all(a["first_of_question"] for a in record["answers"])  # one answer per question: each read cold
    for name in ("seb", "beetle"):  # the SemEval sets are split by question: a held-out question is never fitted on
        sem_questions, sem_answers = bench.load_set(bench.SETS[name][0], name=name)
        sem_split = bench.split_of(sem_answers, sem_questions)
        by_question = {(a["question_id"], sem_split[a["id"]]) for a in sem_answers}
        assert len(by_question) == len(sem_questions) and {s for _, s in by_question} == {"train", "test"}
        assert not set(sem_questions) & set(questions)  # the 4 questions of the first set are left out
    zh_questions, zh_answers = bench.load_set(bench.DATA_ZH, name="zh")
    assert len(zh_answers) == 40 and sum(a["label"] == "correct" for a in zh_answers) == 20
    assert all(q["keywords"] for q in zh_questions.values())  # a teacher's expected ideas, with variants
    assert all(a["probabilities"] == {"correct": 1.0, "partial": 0.0, "incorrect": 0.0} for a in record["answers"])
    assert record["summary"]["all"]["model_verdict_alone"]["kappa"] == 0.0  # a constant grader agrees by chance only
    # a change tried on the train split alone, the grader it replaces beside it (its decisions, no model run)
    again = tmp_path / "again.json"
    assert bench.main(["--refit-from", str(out), "--split", "train", "--previous", str(out), "--out", str(again)]) == 0
    tried = json.loads(again.read_text(encoding="utf-8"))
    assert tried["answers"] and all(a["split"] == "train" for a in tried["answers"])
    assert tried["summary"]["all"]["previous"]["accuracy"] == tried["summary"]["all"]["tool"]["accuracy"]


def test_a_verdict_reads_the_yes_no_questions_asked_for_each_over_the_same_prompt() -> None:
    from consulta.apps.quiz._judge import YES_NO_READINGS

    model = ProbabilityDouble({"yes": 0.1, "no": 0.6, "Yes": 0.1, "No": 0.2})
    judge = ModelJudge(model)  # type: ignore[arg-type]
    probabilities = asyncio.run(
        judge.verdict(user_answer="lower", expected=["pitch"], reference_answer="Higher.", readings=("false", "same"))
    )
    assert probabilities == pytest.approx({"correct": 0.7, "partial": 0.2, "incorrect": 0.1, "false": 0.2, "same": 0.2})
    asked = [prompt.rsplit("\n", 1) for _, prompt, _ in model.asked]
    assert [last for _, last in asked[1:]] == [YES_NO_READINGS["false"], YES_NO_READINGS["same"]]
    assert len({shared for shared, _ in asked}) == 1  # one prompt up to its last line: the KV cache serves the rest
    none = asyncio.run(judge.verdict(user_answer="lower", expected=["pitch"], readings=()))
    assert set(none) == {"correct", "partial", "incorrect"}
    with pytest.raises(ValueError, match="Unknown verdict readings"):
        asyncio.run(judge.verdict(user_answer="lower", expected=["pitch"], readings=("vibes",)))


def test_tool_6_reads_the_yes_no_questions_its_calibration_weighs() -> None:
    from consulta.apps.quiz._score import score_and_explain
    from consulta.apps.quiz._short_answer import Calibration

    model = ProbabilityDouble({"yes": 0.9, "no": 0.1, "Yes": 0.0, "No": 0.0})
    mapping = Calibration(weights={"bias": 0.0, "keywords": 1.0, "gist": 2.0}, threshold=0.5, source="test")
    assert mapping.readings == ("gist",)
    result = asyncio.run(
        score_and_explain(
            "s", "u", "q", "short_answer", "higher pitch", correct_keywords=["pitch"], difficulty=3, category="physics",
            judge=ModelJudge(model), calibration=mapping, correct_answer="Higher pitch.", model_explains=False,
        )
    )  # fmt: skip
    assert [labels for _, _, labels in model.asked] == [("correct", "partial", "incorrect"), ("yes", "no", "Yes", "No")]
    assert model.asked[1][1].endswith("main idea of the reference answer, maybe in other words? yes or no?")
    assert result["is_correct"] is True


def test_a_verdict_reads_each_idea_of_the_reference_and_keeps_the_least_said() -> None:
    class ByIdea(ProbabilityDouble):
        async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
            if "yes" not in labels:
                return await super().label_probabilities(system=system, prompt=prompt, labels=labels)
            self.asked.append((system, prompt, tuple(labels)))
            yes = 0.9 if "tighter" in prompt.rsplit("\n", 1)[1] else 0.2
            return {"yes": yes, "no": 1 - yes, "Yes": 0.0, "No": 0.0}

    model = ByIdea()
    judge = ModelJudge(model)  # type: ignore[arg-type]
    probabilities = asyncio.run(
        judge.verdict(
            user_answer="it was tighter",
            expected=["pitch"],
            stem="What happened?",
            reference_answer="When the string was tighter, the pitch was higher.",
            readings=("ideas",),
        )
    )
    assert probabilities["ideas"] == pytest.approx(0.2)  # every idea must be said: the least said one counts
    ideas = [prompt for _, prompt, labels in model.asked if "yes" in labels]
    assert [p.rsplit("\n", 1)[1] for p in ideas] == [
        'Does the student\'s answer say this: "When the string was tighter"? yes or no?',
        'Does the student\'s answer say this: "the pitch was higher"? yes or no?',
    ]
    assert {p.rsplit("\n", 1)[0] for p in ideas} == {"Question: What happened?\nStudent's answer: it was tighter"}
    assert "Expected ideas" not in ideas[0]  # the idea alone is asked about, not code's keywords
    # no reference answer: no ideas to read, the labels stand (the calibration uses them in its place)
    alone = asyncio.run(judge.verdict(user_answer="x", expected=["pitch"], readings=("ideas",)))
    assert set(alone) == {"correct", "partial", "incorrect"}
