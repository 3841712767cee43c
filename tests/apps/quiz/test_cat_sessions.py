"""A person's adaptive test in the store (`_cat_sessions`): the profile checked and saved, items chosen one at a time,
answers scored and recorded once (the same answer again is not counted; an answer to an item not shown is refused and
changes nothing), the end with θ ± SE, the plot and the review; a test killed mid-way (the process, in a subprocess)
continues where it was. `add_items` (a small real bank: arithmetic and facts, in en and zh-CN) is shared by the quiz-take
tests."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import Engine

from consulta.apps.quiz import _db
from consulta.apps.quiz._cat import CatRules
from consulta.apps.quiz._cat_sessions import (
    Scored,
    ShortAnswer,
    TestSessionError,
    TestSessions,
    ability_svg,
    metadata,
    prior_mean,
    test_items,
    test_sessions,
    user_id_of,
)
from consulta.apps.quiz._profiles import load_profile
from consulta.i18n import t

from ._scripts import short_answer

PROFILE = {
    "self_level": "intermediate",
    "years_experience": 3,
    "job_role": "Data analyst",
    "duty": "Reports",
    "interests": ["SQL", "statistics"],
}
SRC = Path(__file__).resolve().parents[3] / "src"


# ---- a small real bank ------------------------------------------------------------------------------------------


def bank_items(lang: str) -> list[dict[str, Any]]:
    """Items with real answers: products (multiple choice, levels from the numbers' size), primes (true/false) and two
    short answers."""
    zh = lang == "zh-CN"
    items: list[dict[str, Any]] = []
    for n, (x, y) in enumerate(
        [(2, 3), (4, 6), (7, 8), (9, 12), (13, 14), (17, 19), (23, 27), (36, 48), (57, 64), (96, 125)]
    ):
        right = x * y
        choices = [str(right), str(right + x), str(right - y), str(right + 10)]
        stem = f"{x} × {y} 等于多少？" if zh else f"What is {x} × {y}?"
        explanation = f"{x} × {y} = {right}。" if zh else f"{x} × {y} = {right}: {x} added {y} times."
        items.append(
            dict(
                item_type="multiple_choice",
                stem=stem,
                choices=choices,
                correct_key=str(right),
                difficulty=n + 1,
                categories=["general"],
                topic="arithmetic",
                explanation=explanation,
            )
        )
    for n, (number, prime) in enumerate(
        [(2, True), (9, False), (13, True), (21, False), (29, True), (51, False), (89, True), (91, False)]
    ):
        stem = f"{number} 是质数。" if zh else f"{number} is a prime number."
        why = (
            f"{number} {'只有 1 和它本身两个因数' if prime else '有 1 和它本身以外的因数'}。"
            if zh
            else (
                f"{number} has no divisors but 1 and itself."
                if prime
                else f"{number} has a divisor other than 1 and itself."
            )
        )
        items.append(
            dict(
                item_type="true_false",
                stem=stem,
                choices=None,
                correct_key="true" if prime else "false",
                difficulty=min(10, 2 + n),
                categories=["technical"],
                topic="primes",
                explanation=why,
            )
        )
    for n, (stem, keywords, why) in enumerate(
        [
            (
                ("用一个词说出 SQL 中合并两张表的行的操作。", ["JOIN"], "JOIN 按条件把两张表的行合并。")
                if zh
                else (
                    "Name the SQL operation that combines rows of two tables.",
                    ["join"],
                    "A JOIN combines rows of two tables on a condition.",
                )
            ),
            (
                ("样本方差的分母是 n 减几？", ["1"], "样本方差除以 n − 1（贝塞尔校正）。")
                if zh
                else (
                    "The sample variance divides by n minus what?",
                    ["1"],
                    "The sample variance divides by n − 1 (Bessel's correction).",
                )
            ),
        ]
    ):
        items.append(
            dict(
                item_type="short_answer",
                stem=stem,
                choices=None,
                correct_key=None,
                correct_keywords=keywords,
                difficulty=4 + n,
                categories=["business"],
                topic="data",
                explanation=why,
            )
        )
    return items


def add_items(engine: Engine, lang: str) -> list[str]:
    """Put `bank_items(lang)` in the quiz bank; their ids."""
    _db.create_tables(engine)
    ids = []
    now = datetime.now(UTC).isoformat()
    with engine.begin() as conn:
        for item in bank_items(lang):
            qid = str(uuid.uuid4())
            ids.append(qid)
            conn.execute(
                _db.questions.insert().values(
                    id=qid,
                    item_type=item["item_type"],
                    stem=item["stem"],
                    choices=json.dumps(item["choices"], ensure_ascii=False) if item["choices"] else None,
                    correct_key=item["correct_key"],
                    correct_keywords=json.dumps(item.get("correct_keywords")) if item.get("correct_keywords") else None,
                    difficulty=item["difficulty"],
                    categories=json.dumps(item["categories"]),
                    topic=item["topic"],
                    lang=lang,
                    explanation=item["explanation"],
                    source="bank",
                    content_hash=f"{lang}:{item['stem']}",
                    created_at=now,
                )
            )
    return ids


def right_answer(engine: Engine, question_id: str) -> str:
    with engine.connect() as conn:
        row = conn.execute(select(_db.questions).where(_db.questions.c.id == question_id)).mappings().one()
    return row["correct_key"] or json.loads(row["correct_keywords"])[0]


def wrong_answer(engine: Engine, question_id: str) -> str:
    with engine.connect() as conn:
        row = conn.execute(select(_db.questions).where(_db.questions.c.id == question_id)).mappings().one()
    if row["item_type"] == "multiple_choice":
        return next(c for c in json.loads(row["choices"]) if c != row["correct_key"])
    if row["item_type"] == "true_false":
        return "false" if row["correct_key"] == "true" else "true"
    return "no idea"


async def keyword_grader(request: ShortAnswer) -> Scored:
    """A stand-in for the model's grading in these tests: right when a keyword is in the answer."""
    right = any(k.casefold() in request.answer.casefold() for k in request.keywords)
    return Scored(
        score=90.0 if right else 10.0, is_correct=right, graded_by="model", explanation="graded", feedback="ok"
    )


# ---- fixtures -------------------------------------------------------------------------------------------------------


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = create_engine(f"sqlite:///{tmp_path}/quiz.db")
    add_items(engine, "en")
    add_items(engine, "zh-CN")
    yield engine
    engine.dispose()


@pytest.fixture
def tests(engine: Engine) -> TestSessions:
    return TestSessions(
        engine, rules=CatRules(se_target=0.3, min_items=3, max_items=6, randomesque=3), short_answers=keyword_grader
    )


def answer(tests: TestSessions, principal: str, view: Any, text: str | None = None, **changes: Any) -> Any:
    item = view.item
    given = dict(
        position=item.position,
        question_id=item.question_id,
        answer=text if text is not None else right_answer(tests.engine, item.question_id),
    )
    return asyncio.run(tests.answer(principal, view.id, **{**given, **changes}))


def counts(engine: Engine) -> tuple[int, int, int]:
    """(answers given, answers accounted for, sessions): an answer is accounted for by its response row (kept for
    calibration), or as left ungraded (the grader's fallback: no evidence, so no response row)."""
    metadata.create_all(engine)
    answered = test_items.c.answer.is_not(None)
    with engine.connect() as conn:
        ungraded = select(func.count()).select_from(test_items).where(answered, test_items.c.graded_by == "fallback")
        return (
            conn.execute(select(func.count()).select_from(test_items).where(answered)).scalar(),
            conn.execute(select(func.count()).select_from(_db.responses)).scalar() + conn.execute(ungraded).scalar(),
            conn.execute(select(func.count()).select_from(test_sessions)).scalar(),
        )


# ---- the tests ----------------------------------------------------------------------------------------------------


def test_a_whole_test_from_profile_to_review(tests: TestSessions, engine: Engine) -> None:
    view = tests.start("alice", PROFILE, lang="en")
    assert view.status == "in_progress" and view.item.position == 1 and view.answered == 0
    assert (
        view.trajectory[0].theta == prior_mean("intermediate") == -0.25 and view.trajectory[0].se == 1.0
    )  # level 5's b
    assert tests.saved_profile("alice").job_role == "Data analyst"
    seen = set()
    while view.status == "in_progress":
        seen.add(view.item.question_id)
        result = answer(tests, "alice", view)
        assert result.feedback.is_correct and not result.repeated
        assert result.feedback.score == (
            100 if view.item.item_type != "short_answer" else 90
        )  # short answers: the grader's
        assert result.feedback.explanation  # the item's explanation, after each answer
        view = result.session
    assert view.status == "finished" and view.stop_reason in ("se_target", "max_items")
    assert 3 <= view.answered <= 6 and len(seen) == view.answered  # no item twice
    assert view.theta > 0.5  # every answer right: the estimate rose
    assert [p.position for p in view.trajectory] == list(range(view.answered + 1))
    assert view.review and all(r.feedback.correct_answer or r.feedback.correct_keywords for r in view.review)
    assert counts(engine)[:2] == (view.answered, view.answered)  # one response row per answer, for calibration
    # no item here was calibrated: the test says so, and stops at the target level-derived items can meet
    assert view.level_derived_items == view.answered and view.calibrated_items == 0 and view.se_target == 0.45
    assert all(r.level_derived for r in view.review)
    person = load_profile(engine, user_id_of("alice"))
    assert person is not None and person.previous_score == 100.0 and person.lang == "en"
    tests.start("alice", {**PROFILE, "years_experience": 9}, lang="en")  # the profile anew, its last score kept
    person = load_profile(engine, user_id_of("alice"))
    assert person is not None and (person.years_experience, person.previous_score) == (9, 100.0)
    svg = ability_svg(view.trajectory, lang="zh-CN")
    assert (
        svg.startswith("<svg") and t("quiz.take.plot.x", "zh-CN") in svg and svg.count("<circle") == view.answered + 1
    )


def test_wrong_answers_lower_the_estimate_and_items_are_in_the_persons_language(
    tests: TestSessions, engine: Engine
) -> None:
    view = tests.start("bob", {**PROFILE, "self_level": "expert"}, lang="zh-CN")
    assert view.trajectory[0].theta == prior_mean("expert") == 1.75
    while view.status == "in_progress":
        assert any("\u4e00" <= ch <= "\u9fff" for ch in view.item.stem)
        result = answer(tests, "bob", view, wrong_answer(engine, view.item.question_id))
        assert (
            not result.feedback.is_correct
            and result.feedback.correct_answer != result.feedback.answer
            or result.feedback.correct_keywords
        )
        view = result.session
    assert view.theta < 1.75 and view.review is not None


def test_an_answer_twice_counts_once(tests: TestSessions, engine: Engine) -> None:
    view = tests.start("alice", PROFILE, lang="en")
    first = answer(tests, "alice", view)
    again = answer(tests, "alice", view)  # the same answer to item 1 again (a retry)
    assert again.repeated and again.feedback == first.feedback and again.session.answered == 1
    assert again.session.item.position == 2
    with pytest.raises(TestSessionError) as refused:  # a different answer to item 1
        answer(tests, "alice", view, wrong_answer(engine, view.item.question_id))
    assert refused.value.code == "already_answered" and refused.value.status == 409
    assert counts(engine)[:2] == (1, 1)


def test_an_answer_to_an_item_not_shown_is_refused_and_changes_nothing(tests: TestSessions, engine: Engine) -> None:
    view = tests.start("alice", PROFILE, lang="en")
    for changes in ({"position": 2}, {"question_id": str(uuid.uuid4())}):
        with pytest.raises(TestSessionError) as refused:
            answer(tests, "alice", view, **changes)
        assert refused.value.code == "not_current_item" and refused.value.field == "position"
        assert "1" in refused.value.localized("zh-CN")
    item = view.item
    for text, code in (("", "empty_answer"), ("x" * 2001, "answer_too_long")):
        with pytest.raises(TestSessionError) as refused:
            answer(tests, "alice", view, text)
        assert refused.value.code == code and refused.value.status == 422
    if item.item_type in ("multiple_choice", "true_false"):
        with pytest.raises(TestSessionError) as refused:
            answer(tests, "alice", view, "not one of them")
        assert refused.value.code == "not_a_choice"
    with pytest.raises(TestSessionError) as refused:  # someone else's test: as if unknown
        answer(tests, "mallory", view)
    assert refused.value.code == "unknown_test" and refused.value.status == 404
    assert counts(engine) == (0, 0, 1)
    assert tests.view("alice", view.id) == view


def test_a_bad_profile_is_one_clear_line_and_nothing_is_written(tests: TestSessions, engine: Engine) -> None:
    cases = [
        ({**PROFILE, "self_level": "guru"}, "profile.self_level"),
        ({**PROFILE, "years_experience": -1}, "profile.years_experience"),
        ({**PROFILE, "years_experience": "many"}, "profile.years_experience"),
        ({**PROFILE, "job_role": " "}, "profile.job_role"),
        ({**PROFILE, "duty": "x" * 501}, "profile.duty"),
        ({**PROFILE, "interests": []}, "profile.interests"),
        ({**PROFILE, "interests": ["x"] * 11}, "profile.interests"),
        ({**PROFILE, "interests": ["y" * 51]}, "profile.interests.0"),
        ({**PROFILE, "interests": ["sql", "\x1f"]}, "profile.interests.1"),  # str.strip() strips it; regex \S did not
        ({**PROFILE, "duty": "\x1c\x1d"}, "profile.duty"),
        ({k: v for k, v in PROFILE.items() if k != "duty"}, "profile.duty"),
        ({**PROFILE, "salary": 1}, "profile.salary"),
    ]
    for profile, field in cases:
        with pytest.raises(TestSessionError) as refused:
            tests.start("alice", profile, lang="en")
        error = refused.value
        assert (error.code, error.field, error.status) == ("invalid_profile", field, 422)
        for lang in ("en", "zh-CN"):
            line = error.localized(lang)
            assert "\n" not in line and "{" not in line and len(line) < 200
    with pytest.raises(TestSessionError) as refused:
        tests.start("alice", {**PROFILE, "years_experience": 61}, lang="en")
    assert refused.value.localized("zh-CN") == "个人资料的“工作年限”：请填 0 到 60 之间的整数。"
    assert refused.value.localized("en") == "Profile, years of experience: a whole number from 0 to 60."
    assert counts(engine) == (0, 0, 0) and tests.saved_profile("alice") is None


def test_one_test_in_progress_at_a_time_and_starting_over(tests: TestSessions) -> None:
    first = tests.start("alice", PROFILE, lang="en")
    with pytest.raises(TestSessionError) as refused:
        tests.start("alice", PROFILE, lang="en")
    assert refused.value.code == "test_in_progress"
    assert tests.open_test("alice").id == first.id and tests.open_test("bob") is None
    second = tests.start("alice", PROFILE, lang="en", replace_open=True)
    assert tests.view("alice", first.id).status == "abandoned" and tests.open_test("alice").id == second.id
    with pytest.raises(TestSessionError) as refused:
        answer(tests, "alice", first)
    assert refused.value.code == "test_finished"


def test_no_items_in_the_language(engine: Engine, tmp_path: Path) -> None:
    empty = create_engine(f"sqlite:///{tmp_path}/empty.db")
    with pytest.raises(TestSessionError) as refused:
        TestSessions(empty).start("alice", PROFILE, lang="en")
    assert (
        refused.value.code == "no_items"
        and refused.value.localized("zh-CN") == "题库里还没有英文题目：请换另一种语言。"
    )


def test_short_answers_are_graded_and_fall_back_to_the_seeds_score(engine: Engine) -> None:
    calls: list[ShortAnswer] = []

    async def failing(request: ShortAnswer) -> Scored:
        calls.append(request)
        raise RuntimeError("model away")

    from consulta.apps.quiz._cat_sessions import FALLBACK, model_short_answers

    def model() -> Any:
        raise RuntimeError("no model here")

    grade = model_short_answers(model)
    scored = asyncio.run(grade(short_answer()))
    assert scored == FALLBACK and (scored.score, scored.is_correct) == (50.0, False)
    # In a test: short answers reach the grader with the item's keywords; without one, the seed's fallback.
    tests = TestSessions(engine, rules=CatRules(min_items=30, max_items=30, randomesque=1), short_answers=None)
    view = tests.start("alice", PROFILE, lang="en")
    while view.status == "in_progress":
        result = answer(tests, "alice", view)
        if view.item.item_type == "short_answer":
            assert (
                result.feedback.graded_by == "fallback"
                and result.feedback.score == 50
                and not result.feedback.is_correct
            )
            # not graded: no evidence either way, so the estimate does not move, and no response is kept to calibrate
            assert (result.session.theta, result.session.se) == (view.theta, view.se)
        view = result.session
    assert view.stop_reason == "bank_exhausted" and view.answered == len(bank_items("en"))
    with engine.connect() as conn:
        kept = conn.execute(select(func.count()).select_from(_db.responses)).scalar()
    assert kept == len([i for i in bank_items("en") if i["item_type"] != "short_answer"])


def test_a_test_of_calibrated_items_says_so_and_keeps_the_seeds_target(tests: TestSessions, engine: Engine) -> None:
    with engine.begin() as conn:
        ids = conn.execute(select(_db.questions.c.id)).scalars().all()
        conn.execute(
            _db.item_params.insert(),
            [
                {"question_id": q, "a": 1.7, "b": 0.1 * i % 2, "provisional": 0, "n_responses": 40, "updated_at": "x"}
                for i, q in enumerate(ids)
            ],
        )
    view = tests.start("carol", PROFILE, lang="en")
    view = answer(tests, "carol", view).session
    assert view.calibrated_items == 2 and view.level_derived_items == 0 and view.se_target == 0.3  # answered + shown


def test_recalibration_runs_after_a_test_ends(engine: Engine) -> None:
    ran: list[int] = []

    def recalibrate(e: Engine) -> None:
        with e.connect() as conn:
            ran.append(conn.execute(select(func.count()).select_from(_db.responses)).scalar())

    async def scenario() -> None:
        tests = TestSessions(
            engine, rules=CatRules(min_items=2, max_items=2), short_answers=keyword_grader, recalibrate=recalibrate
        )
        view = tests.start("alice", PROFILE, lang="en")
        while view.status == "in_progress":
            item = view.item
            view = (
                await tests.answer(
                    "alice",
                    view.id,
                    position=item.position,
                    question_id=item.question_id,
                    answer=right_answer(engine, item.question_id),
                )
            ).session
        assert await tests.settle(timeout_s=10)

    asyncio.run(scenario())
    assert ran == [2]


# ---- killed mid-test ------------------------------------------------------------------------------------------------

_CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from sqlalchemy import create_engine, select
    from consulta.apps.quiz import _db
    from consulta.apps.quiz._cat import CatRules
    from consulta.apps.quiz._cat_sessions import TestSessions

    url, principal, stop_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
    engine = create_engine(url)
    tests = TestSessions(engine, rules=CatRules(min_items=30, max_items=30, randomesque=1))

    def key(qid):
        with engine.connect() as conn:
            row = conn.execute(select(_db.questions).where(_db.questions.c.id == qid)).mappings().one()
        return row["correct_key"] or json.loads(row["correct_keywords"])[0]

    view = tests.open_test(principal) or tests.start(principal, json.loads(sys.argv[4]), lang="en")
    done = 0
    while view.status == "in_progress":
        item = view.item
        view = asyncio.run(tests.answer(principal, view.id, position=item.position, question_id=item.question_id, answer=key(item.question_id))).session
        done += 1
        print(item.position, flush=True)
        if done == stop_after:
            os.kill(os.getpid(), 9)  # killed between two answers, with no chance to clean up
    print("finished", view.answered, flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses killed and run again: still run in CI (scripts/test runs slow or not slow)
def test_killed_mid_test_continues_where_it_was(engine: Engine, tmp_path: Path) -> None:
    url = str(engine.url)
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    def child(stop_after: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _CHILD, url, "alice", str(stop_after), json.dumps(PROFILE)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    first = child(4)
    assert first.returncode == -signal.SIGKILL, first.stderr
    assert first.stdout.split() == ["1", "2", "3", "4"]
    second = child(3)  # the same person comes back: the test continues at item 5
    assert second.returncode == -signal.SIGKILL, second.stderr
    assert second.stdout.split() == ["5", "6", "7"]
    last = child(0)
    total = len(bank_items("en"))
    assert last.returncode == 0, last.stderr
    assert last.stdout.split()[-2:] == ["finished", str(total)]
    answered, responses, sessions = counts(engine)
    assert (answered, responses, sessions) == (total, total, 1)  # no answer lost or counted twice
    with engine.connect() as conn:
        positions = [r.position for r in conn.execute(select(test_items.c.position).order_by(test_items.c.position))]
    assert positions == list(range(1, total + 1))


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses killed and run again: still run in CI (scripts/test runs slow or not slow)
def test_killed_at_any_instant_no_answer_is_lost_or_counted_twice(engine: Engine) -> None:
    """The process is killed from outside at moments that fall inside answers' transactions as well as between them;
    after each kill the test continues where the store says, and at the end every item is answered exactly once."""
    import random
    import time

    url = str(engine.url)
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    total = len(bank_items("en"))
    rng = random.Random(7)
    for _ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, url, "alice", "0", json.dumps(PROFILE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip().isdigit()  # it is answering
        time.sleep(rng.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
        answered, responses, sessions = counts(engine)
        assert answered == responses and sessions == 1  # an answer and its response row: both or neither
        with engine.connect() as conn:
            session = conn.execute(select(test_sessions)).mappings().one()
            shown = conn.execute(
                select(func.count()).select_from(test_items).where(test_items.c.answer.is_(None))
            ).scalar()
        if session["status"] != "in_progress":
            break  # it finished before the kill came
        assert session["position"] == answered + 1 and shown == 1  # exactly the next item is shown
    else:
        last = subprocess.run(
            [sys.executable, "-c", _CHILD, url, "alice", "0", json.dumps(PROFILE)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert last.returncode == 0, last.stderr
    assert counts(engine) == (total, total, 1)


@pytest.mark.both_backends
def test_a_test_on_the_store_both_databases(store_url: str) -> None:
    """The same session logic on the store's SQLite and PostgreSQL: a whole test, an answer sent twice counted once,
    an answer to an item not shown refused."""
    from consulta.runtime import Store

    store = Store(store_url)
    try:
        add_items(store.engine, "en")
        tests = TestSessions(store.engine, rules=CatRules(min_items=4, max_items=4), short_answers=keyword_grader)
        view = tests.start("alice", PROFILE, lang="en")
        with pytest.raises(TestSessionError):
            answer(tests, "alice", view, position=3)
        first = answer(tests, "alice", view)
        assert answer(tests, "alice", view).repeated
        view = first.session
        while view.status == "in_progress":
            view = answer(tests, "alice", view).session
        assert view.status == "finished" and view.answered == 4 and counts(store.engine)[:2] == (4, 4)
    finally:
        store.close()
