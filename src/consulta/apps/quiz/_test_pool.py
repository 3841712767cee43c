"""The bank as a test sees it: the items of one language with their 2PL parameters (`_Pool`, what `next_item`
chooses among), and whether the parameters a test used were level-derived (`_level_derived`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Connection

from . import _db
from ._cat import Bank
from ._irt import provisional_params

__all__: list[str] = []

# ---- the bank as the test sees it -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    id: str
    item_type: str
    stem: str
    choices: list[str] | None
    key: str | None
    keywords: list[str] | None
    difficulty: int
    category: str
    topic: str
    explanation: str | None


def _item(row: Mapping[str, Any]) -> _Item:
    categories = json.loads(row["categories"] or "[]") or ["general"]
    return _Item(
        id=row["id"],
        item_type=row["item_type"],
        stem=row["stem"],
        choices=json.loads(row["choices"]) if row["choices"] else None,
        key=row["correct_key"],
        keywords=json.loads(row["correct_keywords"]) if row["correct_keywords"] else None,
        difficulty=int(row["difficulty"]),
        category=str(categories[0]),
        topic=row["topic"] or "",
        explanation=row["explanation"],
    )


@dataclass(frozen=True)
class _Pool:
    """The items of one language, in a fixed order, with their parameters: what `next_item` chooses among."""

    items: list[_Item]
    bank: Bank
    index: dict[str, int]

    @classmethod
    def read(cls, conn: Connection, lang: str, *, started_at: str | None = None) -> _Pool:
        """The pool of a test in `lang`; of one that started at `started_at`, without the items generated since (a
        person who has questions generated during their test has read those items' keys)."""
        q, p = _db.questions, _db.item_params
        known = q.c.lang == lang
        if started_at is not None:
            known = known & ((q.c.source == "bank") | (q.c.created_at <= started_at))
        rows = (
            conn.execute(
                select(q, p.c.a, p.c.b)
                .select_from(q.outerjoin(p, p.c.question_id == q.c.id))
                .where(known)
                .order_by(q.c.id)
            )
            .mappings()
            .all()
        )
        items, a, b = [], [], []
        for row in rows:
            items.append(_item(row))
            params = provisional_params(int(row["difficulty"])) if row["a"] is None else None
            a.append(params.a if params else float(row["a"]))
            b.append(params.b if params else float(row["b"]))
        bank = Bank(
            ids=tuple(i.id for i in items),
            a=np.asarray(a, dtype=float),
            b=np.asarray(b, dtype=float),
            categories=tuple(i.category for i in items),
        )
        return cls(items=items, bank=bank, index={i.id: n for n, i in enumerate(items)})


def _questions(conn: Connection, ids: Sequence[str]) -> dict[str, _Item]:
    if not ids:
        return {}
    rows = conn.execute(select(_db.questions).where(_db.questions.c.id.in_(list(ids)))).mappings()
    return {row["id"]: _item(row) for row in rows}


def _level_derived(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> dict[int, bool]:
    """For each item a test gave (by position): whether the parameters it used were its level's (a = 1.0, b from
    the 1-10 level) rather than estimated from responses."""
    levels = dict(
        conn.execute(
            select(_db.questions.c.id, _db.questions.c.difficulty).where(
                _db.questions.c.id.in_([r["question_id"] for r in rows])
            )
        ).all()
    )
    derived = {}
    for r in rows:
        level = levels.get(r["question_id"])
        start = provisional_params(int(min(max(level, 1), 10))) if level is not None else None
        derived[r["position"]] = start is not None and math.isclose(r["a"], start.a) and math.isclose(r["b"], start.b)
    return derived
