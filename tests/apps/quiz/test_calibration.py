"""Calibration: published LSAT-6 estimates reproduced, sparse data, and `recalibrate` over the quiz tables."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import create_engine, insert, select
from sqlalchemy.engine import Engine

from consulta.apps.quiz import _db
from consulta.apps.quiz._calibration import (
    LSAT6_LTM_A,
    LSAT6_LTM_B,
    calibrate_2pl,
    ensure_item_params,
    link_to_anchors,
    lsat6_matrix,
    recalibrate,
)
from consulta.apps.quiz._irt import prob, provisional_params


def test_reproduces_the_published_lsat6_estimates() -> None:
    data = lsat6_matrix()
    assert data.shape == (1000, 5)
    a, b = calibrate_2pl(data)
    np.testing.assert_allclose(a, LSAT6_LTM_A, atol=0.002)
    np.testing.assert_allclose(b, LSAT6_LTM_B, atol=0.002)


def test_sparse_matrix_recovers_the_truth() -> None:
    rng = np.random.default_rng(11)
    n_items, n_people = 60, 3000
    a_true = rng.lognormal(0, 0.25, n_items)
    b_true = rng.normal(0, 1, n_items)
    theta = rng.normal(0, 1, n_people)
    u = (rng.random((n_people, n_items)) < prob(theta[:, None], a_true, b_true)).astype(float)
    keep = np.zeros_like(u, dtype=bool)
    for i in range(n_people):
        keep[i, rng.choice(n_items, 20, replace=False)] = True
    u[~keep] = np.nan  # each person answers 20 of 60
    a, b = calibrate_2pl(u)
    assert np.sqrt(np.mean((b - b_true) ** 2)) < 0.2
    assert np.sqrt(np.mean((a - a_true) ** 2)) < 0.2
    assert np.corrcoef(b, b_true)[0, 1] > 0.97


def test_calibrate_refuses_bad_matrices() -> None:
    with pytest.raises(ValueError, match="2-D"):
        calibrate_2pl(np.zeros(5))
    with pytest.raises(ValueError, match="1 \\(right\\), 0 \\(wrong\\) or NaN"):
        calibrate_2pl(np.full((4, 3), 2.0))
    with pytest.raises(ValueError, match="at least 3 items"):
        calibrate_2pl(np.zeros((4, 2)))
    m = np.zeros((4, 3))
    m[:, 1] = np.nan
    with pytest.raises(ValueError, match="columns \\[1\\]"):
        calibrate_2pl(m)


def _engine(tmp_path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{tmp_path / 'quiz.db'}")
    _db.create_tables(engine)
    return engine


def _add_questions(engine: Engine, levels: list[int]) -> list[str]:
    ids = [str(uuid.uuid4()) for _ in levels]
    with engine.begin() as conn:
        conn.execute(
            insert(_db.questions),
            [
                {
                    "id": qid,
                    "item_type": "true_false",
                    "stem": f"statement {i}",
                    "correct_key": "true",
                    "difficulty": level,
                    "categories": json.dumps(["general"]),
                    "lang": "en",
                    "source": "bank",
                    "content_hash": qid,
                    "created_at": "2026-01-01T00:00:00+00:00",
                }  # fmt: skip
                for i, (qid, level) in enumerate(zip(ids, levels, strict=True))
            ],
        )
    return ids


def test_recalibrate_updates_items_with_enough_responses_and_keeps_the_rest(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    rng = np.random.default_rng(3)
    ids = _add_questions(engine, [2, 4, 5, 6, 8, 3, 7])
    b_true = np.array([-1.5, -0.5, 0.0, 0.5, 1.5, -1.0, 1.0])
    answered, few = ids[:5], ids[5]  # ids[6] gets no response at all
    responses = []
    for person in range(800):
        theta = rng.normal()
        session = f"s{person}"
        for j, qid in enumerate(answered):
            right = bool(rng.random() < prob(theta, 1.0, b_true[j]))
            responses.append({"id": f"{session}:{qid}", "user_id": f"u{person}", "session_id": session, "question_id": qid,
                              "user_answer": "x", "score": 100.0 * right, "is_correct": int(right), "created_at": "2026-01-02"})  # fmt: skip
        if person < 10:
            responses.append({"id": f"{session}:{few}", "user_id": f"u{person}", "session_id": session, "question_id": few,
                              "user_answer": "x", "score": 0.0, "is_correct": person % 2, "created_at": "2026-01-02"})  # fmt: skip
    responses.append({"id": "ghost", "user_id": "u", "session_id": "s", "question_id": "not-a-question",
                      "user_answer": "x", "score": 0.0, "is_correct": 0, "created_at": "2026-01-02"})  # fmt: skip
    with engine.begin() as conn:
        conn.execute(insert(_db.responses), responses)

    report = recalibrate(engine, min_responses=30)

    assert report.reason is None and report.library.startswith("mirt ")
    assert set(report.calibrated) == set(answered)
    assert set(report.provisional) == {few, ids[6]}
    assert set(report.created) == set(ids)  # none had parameters before
    assert report.n_people == 800 and report.n_responses == 800 * 5 + 10
    with engine.connect() as conn:
        rows = {r.question_id: r for r in conn.execute(select(_db.item_params))}
    assert set(rows) == set(ids)
    for j, qid in enumerate(answered):
        assert rows[qid].provisional == 0 and rows[qid].n_responses == 800
        assert rows[qid].b == pytest.approx(b_true[j], abs=0.35)
    assert rows[few].provisional == 1 and rows[few].n_responses == 10
    assert (rows[few].a, rows[few].b) == (provisional_params(3).a, provisional_params(3).b)
    assert rows[ids[6]].provisional == 1 and rows[ids[6]].n_responses == 0

    # a second run with nothing new changes nothing it need not, and keeps calibrated values: they are its anchors
    again = recalibrate(engine, min_responses=30)
    assert again.created == () and set(again.calibrated) == set(answered) and set(again.anchors) == set(answered)
    with engine.connect() as conn:
        kept = {r.question_id: (r.a, r.b) for r in conn.execute(select(_db.item_params))}
    assert all(kept[q] == (rows[q].a, rows[q].b) for q in answered)


def test_link_to_anchors_puts_new_estimates_on_the_old_scale() -> None:
    b_true = np.array([-1.0, 0.0, 1.0, 2.0])
    a_true = np.array([1.0, 1.5, 0.8, 1.2])
    # the same items estimated on a scale stretched by 2 and shifted by 0.5: b' = 2 b + 0.5, a' = a / 2
    a, b = link_to_anchors(a_true / 2, 2 * b_true + 0.5, [0, 1], b_true[:2])
    assert b == pytest.approx(b_true) and a == pytest.approx(a_true)
    one_a, one_b = link_to_anchors(a_true, b_true + 0.3, [2], b_true[2:3])  # one anchor: a shift only
    assert one_b == pytest.approx(b_true) and one_a == pytest.approx(a_true)
    assert link_to_anchors(a_true, b_true, [], np.array([]))[1] is b_true


def test_recalibrate_with_too_little_data_changes_no_parameter(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    ids = _add_questions(engine, [1, 10])
    report = recalibrate(engine)
    assert report.calibrated == () and report.reason is not None and "at least 3" in report.reason
    with engine.connect() as conn:
        rows = {r.question_id: (r.a, r.b, r.provisional) for r in conn.execute(select(_db.item_params))}
    assert rows == {ids[0]: (1.0, -2.25, 1), ids[1]: (1.0, 2.25, 1)}
    with pytest.raises(ValueError, match="min_responses"):
        recalibrate(engine, min_responses=0)


def test_ensure_item_params_gives_new_questions_provisional_parameters_once(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    first = _add_questions(engine, [7])
    assert ensure_item_params(engine) == (first[0],)
    second = _add_questions(engine, [1, 10])
    assert set(ensure_item_params(engine)) == set(second)
    assert ensure_item_params(engine) == ()
    with engine.connect() as conn:
        rows = {r.question_id: (r.a, r.b, r.provisional, r.n_responses) for r in conn.execute(select(_db.item_params))}
    assert rows == {first[0]: (1.0, 0.75, 1, 0), second[0]: (1.0, -2.25, 1, 0), second[1]: (1.0, 2.25, 1, 0)}
