"""2PL item calibration from the recorded responses, by marginal maximum likelihood (Bock & Aitkin EM).

Library: PyPI `mirt` 1.2.0 (Rust backend), chosen over `girth` 0.8.0 after checking both here:
- Published estimates: on LSAT-6 (Bock & Lieberman 1970, 1,000 examinees × 5 items), R's `ltm(LSAT ~ z1)` reports
  b = −3.360, −1.370, −0.280, −1.866, −3.124 and a = 0.825, 0.723, 0.890, 0.689, 0.658. mirt (tolerance 1e-6, as
  used here) gives every a within 0.0005 and every b within 0.0007 of them; girth's `twopl_mml` every a within
  0.0006, but b only within 0.0023. tests/apps/quiz/test_calibration.py checks ours against these values (mirt's own
  `load_dataset("LSAT6")` has wrong pattern counts — 569 people — so the data is rebuilt from ltm's printed table).
- Speed, same machine and data (`bench/bench_quiz_calibration.py`; two runs on the shared 2-core machine): 20 items ×
  5,000 people, mirt 0.16-0.23 s against girth 1.5-2.8 s per fit (9-12× faster), the same RMSE of a and b against
  the truth; 300 items × 5,000 people answering 20 each (the sparse shape adaptive tests leave), mirt 1-2 s against
  girth 60-118 s (59-62×).
- Missing responses: mirt takes NaN as "not answered" directly; girth needs its own sentinel value.

Scale: abilities of the calibration sample are N(0, 1), the scale provisional parameters assume (see `_irt`).
"""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from importlib.metadata import version

import numpy as np
from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection, Engine

from . import _db
from ._irt import provisional_params

__all__ = [
    "A_RANGE",
    "B_RANGE",
    "LSAT6_COUNTS",
    "LSAT6_LTM_A",
    "LSAT6_LTM_B",
    "CalibrationReport",
    "calibrate_2pl",
    "ensure_item_params",
    "link_to_anchors",
    "lsat6_matrix",
    "recalibrate",
]

# LSAT-6 (Bock & Lieberman 1970): the 1,000 examinees' response patterns to 5 items and their counts as R's ltm prints
# them, and ltm's published 2PL estimates, ltm(LSAT ~ z1, IRT.param = TRUE): the check the library was chosen by.
LSAT6_COUNTS = {
    "00000": 3, "00001": 6, "00010": 2, "00011": 11, "00100": 1, "00101": 1, "00110": 3, "00111": 4,
    "01000": 1, "01001": 8, "01011": 16, "01101": 3, "01110": 2, "01111": 15, "10000": 10, "10001": 29,
    "10010": 14, "10011": 81, "10100": 3, "10101": 28, "10110": 15, "10111": 80, "11000": 16, "11001": 56,
    "11010": 21, "11011": 173, "11100": 11, "11101": 61, "11110": 28, "11111": 298,
}  # fmt: skip
LSAT6_LTM_A = (0.8254, 0.7229, 0.8905, 0.6886, 0.6575)
LSAT6_LTM_B = (-3.3597, -1.3696, -0.2799, -1.8659, -3.1236)

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
    anchors: tuple[str, ...] = ()


def link_to_anchors(
    a: np.ndarray, b: np.ndarray, anchor_columns: list[int], old_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """New estimates (a, b) put on the scale of earlier ones by mean-sigma linking on the anchor items (their new b at
    `anchor_columns`, their earlier b `old_b`): b* = A b + B, a* = a / A, with A = sd(old b) / sd(new b) (1 with fewer
    than two anchors or no spread) and B = mean(old b) − A mean(new b). Without anchors nothing changes."""
    if not anchor_columns:
        return a, b
    new = b[anchor_columns]
    spread_new, spread_old = float(np.std(new)), float(np.std(old_b))
    scale = spread_old / spread_new if len(anchor_columns) >= 2 and spread_new > 1e-9 and spread_old > 1e-9 else 1.0
    shift = float(np.mean(old_b)) - scale * float(np.mean(new))
    return np.clip(a / scale, *A_RANGE), np.clip(scale * b + shift, *B_RANGE)


def lsat6_matrix() -> np.ndarray:
    """LSAT-6 as a 1,000 × 5 matrix of 0/1 responses (from `LSAT6_COUNTS`)."""
    return np.array([[int(c) for c in pattern] for pattern, n in LSAT6_COUNTS.items() for _ in range(n)], dtype=float)


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


def ensure_item_params(engine: Engine) -> tuple[str, ...]:
    """Give every question without IRT parameters provisional ones from its 1-10 level; returns their ids.

    Cheap and idempotent (one transaction): call it after saving questions so a test can select them at once.
    """
    _db.create_tables(engine)
    with engine.begin() as conn:
        levels = {r.id: r.difficulty for r in conn.execute(select(_db.questions.c.id, _db.questions.c.difficulty))}
        have = {r.question_id for r in conn.execute(select(_db.item_params.c.question_id))}
        if set(levels) <= have:
            return ()
        counts = dict(
            conn.execute(
                select(_db.responses.c.question_id, func.count(func.distinct(_db.responses.c.session_id))).group_by(
                    _db.responses.c.question_id
                )
            ).all()
        )
        return tuple(sorted(_add_provisional(conn, levels, have, counts, _now())))


def _add_provisional(
    conn: Connection, levels: Mapping[str, int], have: Collection[str], counts: Mapping[str, int], now: str
) -> list[str]:
    missing = [qid for qid in levels if qid not in have]
    if missing:
        rows = []
        for qid in missing:
            start = provisional_params(int(min(max(levels[qid], 1), 10)))
            rows.append(
                {
                    "question_id": qid,
                    "a": start.a,
                    "b": start.b,
                    "provisional": 1,
                    "n_responses": counts.get(qid, 0),
                    "updated_at": now,
                }
            )
        conn.execute(insert(_db.item_params), rows)
    return missing


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def recalibrate(engine: Engine, *, min_responses: int = 30) -> CalibrationReport:
    """Recalibrate the bank from `quiz_responses` and store the result in `quiz_item_params`, in one transaction.

    Every question gets a parameter row (a new one is provisional, from its 1-10 level). Items with at least
    `min_responses` responses, some right and some wrong, are estimated together (each test session is one
    examinee) and marked calibrated; the others keep their parameters. Anchored: items that were calibrated before
    keep their parameters, and the new items' estimates are linked to their scale (`link_to_anchors`), so a θ
    measured yesterday means the same today. Every row's `n_responses` is brought up to date. Responses to
    questions not in the bank are ignored.
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
        before = {
            r.question_id: (float(r.a), float(r.b))
            for r in conn.execute(select(_db.item_params).where(_db.item_params.c.provisional == 0))
        }
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
    anchors: list[str] = []
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
        anchors = [q for q in eligible if q in before]
        a, b = link_to_anchors(
            a, b, [column[q] for q in anchors], np.array([before[q][1] for q in anchors], dtype=float)
        )
        estimates = {q: before.get(q, (float(a[j]), float(b[j]))) for q, j in column.items()}
        clipped = [q for q, (aq, bq) in estimates.items() if q not in before and (aq in A_RANGE or bq in B_RANGE)]
        people = set(sessions)
    now = _now()
    with engine.begin() as conn:
        # read here, not earlier: a row another process added meanwhile is updated, not inserted twice
        params = {r.question_id: r for r in conn.execute(select(_db.item_params))}
        created = _add_provisional(conn, levels, params, {q: c[0] for q, c in counts.items()}, now)
        for qid in levels:
            n = counts.get(qid, [0, 0])[0]
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
        anchors=tuple(sorted(anchors)),
    )
