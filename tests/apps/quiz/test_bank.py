"""The shipped bank: at least 150 items, every category and language, difficulties 1-10, answers that fit their
items, no item twice, keywords for every (difficulty, category, language), loaded once however often it is asked."""

from __future__ import annotations

import collections

from sqlalchemy import func, select

from consulta.apps.quiz import CATEGORIES, bank_items, ensure_bank
from consulta.apps.quiz._bank import keyword_rows
from consulta.apps.quiz._db import keywords, questions, templates
from consulta.runtime import Store


def test_the_bank_has_enough_real_items_in_both_languages() -> None:
    items = bank_items()
    assert len(items) >= 150
    per = collections.Counter((i.category, i.lang) for i in items)
    assert all(per[(c, lang)] >= 15 for c in CATEGORIES for lang in ("en", "zh-CN"))
    assert {i.difficulty for i in items} == set(range(1, 11))
    assert {i.type for i in items} == {"multiple_choice", "true_false", "short_answer"}
    assert len({i.hash for i in items}) == len(items) and len({i.id for i in items}) == len(items)
    for item in items:
        if item.type == "multiple_choice":
            assert item.answer in (item.choices or []) and 4 <= len(item.choices or []) <= 5
        elif item.type == "true_false":
            assert item.answer in ("True", "False")
        else:
            assert item.keywords and all(k.strip() for k in item.keywords)
        assert item.explanation.strip() and item.topic.strip()


def test_keywords_cover_every_level_category_and_language() -> None:
    rows = keyword_rows()
    assert {(r["difficulty"], r["category"], r["lang"]) for r in rows} == {
        (d, c, lang) for d in range(1, 11) for c in CATEGORIES for lang in ("en", "zh-CN")
    }
    for row in rows:
        assert 5 <= len(row["keywords"]) <= 20 and row["concepts"]
        assert all(c["definition"] and c["key_points"] for c in row["concepts"])


def test_loading_is_idempotent(tmp_path) -> None:
    store = Store(f"sqlite:///{tmp_path}/bank.db")
    try:
        ensure_bank(store.engine)
        ensure_bank(store.engine)

        def count(table) -> int:
            with store.engine.connect() as conn:
                return conn.execute(select(func.count()).select_from(table)).scalar_one()

        assert count(questions) == len(bank_items()) == count(templates)
        assert count(keywords) == 60
    finally:
        store.engine.dispose()
