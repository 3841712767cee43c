"""2PL item calibration from the recorded responses, by marginal maximum likelihood (Bock & Aitkin EM).

Library: PyPI `mirt` 1.2.0 (Rust backend), chosen over `girth` 0.8.0 after checking both here:
- Published estimates: on LSAT-6 (Bock & Lieberman 1970, 1,000 examinees × 5 items), R's `ltm(LSAT ~ z1)` reports
  b = −3.360, −1.370, −0.280, −1.866, −3.124 and a = 0.825, 0.723, 0.890, 0.689, 0.658. mirt (tol 1e-6) gives
  every a and b within 0.002 of them, girth within 0.0015: both reproduce them (tests/apps/quiz/test_calibration.py
  checks ours against these values; mirt's own `load_dataset("LSAT6")` ships wrong pattern counts — 569 people — so
  the table is rebuilt there from ltm's published pattern counts).
- Speed, same machine and data: 20 items × 5,000 people complete, mirt ≈ 5× faster than girth; 300 items × 5,000
  people answering 20 each (the sparse shape of adaptive tests), girth takes ~30 s against mirt's ~0.2-2 s, with the
  same accuracy (`bench/bench_quiz_calibration.py` measures it).
- Missing responses: mirt takes NaN as "not answered" directly; girth needs its own sentinel value.

Scale: abilities of the calibration sample are N(0, 1), the scale provisional parameters assume (see `_irt`).
"""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import version

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Engine

from . import _db
from ._irt import provisional_params

__all__ = ["A_RANGE", "B_RANGE", "CalibrationReport", "calibrate_2pl", "recalibrate"]

A_RANGE = (0.2, 4.0)  # estimates outside are clipped: beyond them an item's data cannot tell values apart
B_RANGE = (-5.0, 5.0)
_MIN_ITEMS = 3  # fewer items do not identify a and b of each on an N(0, 1) ability scale


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """What `recalibrate` did.

    calibrated: ids whose (a, b) were estimated now (provisional=0); provisional: ids left with their earlier
    parameters (too few responses, or all right / all wrong); created: ids that had no parameters and got provisional
    ones from their level; clipped: calibrated ids whose estimate hit `A_RANGE` or `B_RANGE`; reason: why nothing
    was calibrated, else None.
    """

    library: str
    n_people: int
    n_responses: int
    calibrated: tuple[str, ...]
    provisional: tuple[str, ...]
    created: tuple[str, ...]
    clipped: tuple[str, ...]
    seconds: float
    reason: str | None = None


def calibrate_2pl(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Estimate each item's 2PL (a, b) from a people × items matrix of 1 (right), 0 (wrong) and NaN (not answered).

    Marginal maximum likelihood with mirt (EM, 21 quadrature points, tolerance 1e-6). People with no answer are
    left out; estimates are clipped to `A_RANGE` / `B_RANGE`. Raises ValueError for a matrix that is not 2-D, holds
    other values, has fewer than 3 items, or has an item nobody answered.
    """
    import mirt  # heavy (Rust backend): loaded when a calibration runs, not when the app starts

    m = np.array(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"the response matrix must be people × items (2-D), got {m.ndim}-D")
    answered = ~np.isnan(m)
    if not np.all((m[answered] == 0) | (m[answered] == 1)):
        raise ValueError("responses must be 1 (right), 0 (wrong) or NaN (not answered)")
    if m.shape[1] < _MIN_ITEMS:
        raise ValueError(f"calibration needs at least {_MIN_ITEMS} items, got {m.shape[1]}")
    empty = np.flatnonzero(~answered.any(axis=0))
    if empty.size:
        raise ValueError(f"items at columns {empty.tolist()} have no response; leave them out")
    m = m[answered.any(axis=1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence notes on degenerate items: the clipping below handles them
        fit = mirt.fit_mirt(m, "2PL", compute_standard_errors=False, tol=1e-6, max_iter=2000)
    a = np.clip(np.asarray(fit.model.discrimination, dtype=float).ravel(), *A_RANGE)
    b = np.clip(np.asarray(fit.model.difficulty, dtype=float).ravel(), *B_RANGE)
    return a, b


def recalibrate(engine: Engine, *, min_responses: int = 30) -> CalibrationReport:
    """Recalibrate the bank from `quiz_responses` and store the result in `quiz_item_params`, in one transaction.

    Every question gets a parameter row (a new one is provisional, from its 1-10 level). Items with at least
    `min_responses` responses, some right and some wrong, are estimated together (each test session is one
    examinee) and marked calibrated; the others keep their parameters. Every row's `n_responses` is brought up to
    date. Responses to questions not in the bank are ignored.
    """
    if isinstance(min_responses, bool) or not isinstance(min_responses, int) or min_responses < 1:
        raise ValueError(f"min_responses must be an int >= 1, got {min_responses!r}")
    started = time.perf_counter()
    _db.create_tables(engine)
    with engine.connect() as conn:
        levels = {r.id: r.difficulty for r in conn.execute(select(_db.questions.c.id, _db.questions.c.difficulty))}
        rows = conn.execute(
            select(_db.responses.c.session_id, _db.responses.c.question_id, _db.responses.c.is_correct).order_by(
                _db.responses.c.created_at
            )
        ).all()
    answers: dict[tuple[str, str], int] = {}  # (session, question) → 0/1, the latest if recorded twice
    for r in rows:
        if r.question_id in levels:
            answers[(r.session_id, r.question_id)] = 1 if r.is_correct else 0
    counts: dict[str, list[int]] = {}  # question → [responses, right]
    for (_, qid), right in answers.items():
        c = counts.setdefault(qid, [0, 0])
        c[0] += 1
        c[1] += right
    eligible = sorted(q for q, (n, right) in counts.items() if n >= min_responses and 0 < right < n)
    reason = None
    estimates: Mapping[str, tuple[float, float]] = {}
    clipped: list[str] = []
    people: set[str] = set()
    if len(eligible) < _MIN_ITEMS:
        reason = f"{len(eligible)} items have >= {min_responses} responses with some right and some wrong; at least {_MIN_ITEMS} are needed"
    else:
        column = {q: j for j, q in enumerate(eligible)}
        sessions = sorted({s for (s, q) in answers if q in column})
        row_of = {s: i for i, s in enumerate(sessions)}
        matrix = np.full((len(sessions), len(eligible)), np.nan)
        for (s, q), right in answers.items():
            if q in column:
                matrix[row_of[s], column[q]] = right
        a, b = calibrate_2pl(matrix)
        estimates = {q: (float(a[j]), float(b[j])) for q, j in column.items()}
        clipped = [q for q, (aq, bq) in estimates.items() if aq in A_RANGE or bq in B_RANGE]
        people = set(sessions)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    created: list[str] = []
    with engine.begin() as conn:
        # read here, not earlier: a row another process added meanwhile is updated, not inserted twice
        params = {r.question_id: r for r in conn.execute(select(_db.item_params))}
        for qid, level in levels.items():
            n = counts.get(qid, [0, 0])[0]
            if qid not in params:
                start = provisional_params(int(min(max(level, 1), 10)))
                conn.execute(
                    _db.item_params.insert().values(
                        question_id=qid, a=start.a, b=start.b, provisional=1, n_responses=n, updated_at=now
                    )
                )
                created.append(qid)
            if qid in estimates:
                aq, bq = estimates[qid]
                values = {"a": aq, "b": bq, "provisional": 0, "n_responses": n, "updated_at": now}
            elif qid in params and params[qid].n_responses != n:
                values = {"n_responses": n, "updated_at": now}
            else:
                continue
            conn.execute(_db.item_params.update().where(_db.item_params.c.question_id == qid).values(**values))
    return CalibrationReport(
        library=f"mirt {version('mirt')}",
        n_people=len(people),
        n_responses=sum(c[0] for c in counts.values()),
        calibrated=tuple(sorted(estimates)),
        provisional=tuple(sorted(set(levels) - set(estimates))),
        created=tuple(sorted(created)),
        clipped=tuple(sorted(clipped)),
        seconds=time.perf_counter() - started,
        reason=reason,
    )
