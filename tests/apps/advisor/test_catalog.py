"""The advisor site's data: generated deterministically over names.yaml (counts, every school and major, traits that
agree with the reviews, ratings that are the reviews' averages, names that look Chinese and are not famous people's),
loaded into the store once (idempotent; another generator version is loaded again), and the page context kept per
principal.

On real people: no test can prove a generated name belongs to nobody. What is checked: every name is a common
family name plus one or two given-name characters from a fixed pool, names are unique within the data, none is on a
list of well-known Chinese academics (`_FAMOUS`), and the site's footer says every advisor is synthetic."""

from __future__ import annotations

import hashlib
import json
import statistics
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select, update
from sqlalchemy.engine import Engine

from consulta.apps.advisor._catalog import (
    PageContext,
    advisors,
    catalog_meta,
    page_context_for,
    reviews,
    save_page_context,
    schools,
)
from consulta.apps.advisor._generate import (
    _FAMILY,
    _FAMOUS,
    _GIVEN_F,
    _GIVEN_M,
    DIRECTIONS,
    ensure_catalog,
    generate,
    names,
)
from consulta.i18n import t


@pytest.fixture(scope="module")
def rows() -> dict[str, list[dict]]:
    return generate()


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return create_engine(f"sqlite:///{tmp_path}/store.db")


def digest(data: dict[str, list[dict]]) -> str:
    return hashlib.sha256(json.dumps(data, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def test_the_same_seed_makes_the_same_data_and_another_seed_other_data(rows: dict[str, list[dict]]) -> None:
    assert digest(generate()) == digest(rows)
    assert digest(generate(seed=7)) != digest(rows)


def test_every_school_and_major_of_names_yaml_with_several_hundred_advisors(rows: dict[str, list[dict]]) -> None:
    public = names()
    assert [s["name"] for s in rows["schools"]] == [s.name for s in public.schools] and len(rows["schools"]) == 34
    assert {m["name"] for m in rows["majors"]} == {m.name for m in public.majors} == set(DIRECTIONS)
    assert 300 <= len(rows["advisors"]) <= 5000
    per_school = {s["name"]: 0 for s in rows["schools"]}
    for advisor in rows["advisors"]:
        per_school[advisor["school"]] += 1
    assert min(per_school.values()) >= 20, per_school
    pku_cs = [a for a in rows["advisors"] if a["school"] == "北京大学" and a["major"] == "计算机科学与技术"]
    assert len(pku_cs) >= 4  # the seed's example ranking is never empty
    ids = [a["id"] for a in rows["advisors"]]
    assert len(set(ids)) == len(ids)
    assert {a["title"] for a in rows["advisors"]} == {"教授", "副教授", "讲师", "研究员"}


def test_names_look_chinese_are_unique_and_are_not_famous_people(rows: dict[str, list[dict]]) -> None:
    seen = [a["name"] for a in rows["advisors"]]
    assert len(set(seen)) == len(seen)
    for advisor in rows["advisors"]:
        name = advisor["name"]
        assert 2 <= len(name) <= 3 and name[0] in _FAMILY and name not in _FAMOUS
        assert all(c in (_GIVEN_F if advisor["gender"] == "f" else _GIVEN_M) for c in name[1:])
        assert advisor["name_en"].replace(" ", "").isascii() and advisor["name_en"][0].isupper()
    assert "synthetic" in t("advisor.web.footer", "en") and "虚构" in t("advisor.web.footer", "zh-CN")


def test_reviews_agree_with_the_advisor_s_traits_and_make_the_ratings(rows: dict[str, list[dict]]) -> None:
    by_advisor: dict[str, list[dict]] = {}
    for review in rows["reviews"]:
        by_advisor.setdefault(review["advisor_id"], []).append(review)
    advisor_rows = {a["id"]: a for a in rows["advisors"]}
    assert set(by_advisor) == set(advisor_rows)
    for advisor_id, its in by_advisor.items():
        advisor = advisor_rows[advisor_id]
        assert advisor["review_count"] == len(its) >= 3
        assert advisor["relationship"] == pytest.approx(statistics.mean(r["relationship"] for r in its), abs=0.01)
        assert advisor["funding_score"] == pytest.approx(statistics.mean(r["funding"] for r in its), abs=0.01)
        assert all(1 <= r[k] <= 5 for r in its for k in ("academic", "funding", "relationship", "future"))
        assert all(r["text"] and r["text_en"] and len(r["date"]) == 10 for r in its)
        assert set(json.loads(advisor["research_directions"])) <= set(DIRECTIONS[advisor["major"]])

    def mean_of(key: str, trait: str, value: str) -> float:
        return statistics.mean(a[key] for a in rows["advisors"] if a[trait] == value)

    assert mean_of("relationship", "personality", "温和") > mean_of("relationship", "personality", "严格") + 0.8
    assert mean_of("funding_score", "funding", "充足") > mean_of("funding_score", "funding", "紧张") + 1.5
    assert mean_of("future", "research_style", "产业型") > mean_of("future", "research_style", "理论型") + 0.3
    gentle = [
        r for r in rows["reviews"] if advisor_rows[r["advisor_id"]]["personality"] == "温和" and "温和" in r["text"]
    ]
    strict = [
        r for r in rows["reviews"] if advisor_rows[r["advisor_id"]]["personality"] == "严格" and "温和" in r["text"]
    ]
    assert gentle and not strict  # what a review says of a person is their trait


def test_the_catalog_is_loaded_once(engine: Engine, tmp_path: Path) -> None:
    assert ensure_catalog(engine) is True
    assert ensure_catalog(engine) is False
    assert ensure_catalog(create_engine(f"sqlite:///{tmp_path}/store.db")) is False  # another process, the same store
    with engine.connect() as conn:
        n_schools = conn.execute(select(func.count()).select_from(schools)).scalar()
        n_advisors = conn.execute(select(func.count()).select_from(advisors)).scalar()
        n_reviews = conn.execute(select(func.count()).select_from(reviews)).scalar()
    data = generate()
    assert (n_schools, n_advisors, n_reviews) == (34, len(data["advisors"]), len(data["reviews"]))
    # a store loaded by another generator version is emptied and loaded again, in one transaction
    with engine.begin() as conn:
        conn.execute(update(catalog_meta).where(catalog_meta.c.key == "generator").values(value="0"))
    assert ensure_catalog(engine) is True
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(advisors)).scalar() == len(data["advisors"])


def test_the_page_context_is_kept_per_principal(engine: Engine) -> None:
    assert page_context_for(engine, "alice") is None
    context = PageContext.model_validate({
        "current_page": "ranking",
        "visible_advisors": [{"id": "10001", "name": "张三", "title": "教授", "rating": 4.5, "rank": 1}],
        "ranking_filters": {"school": "北京大学", "major": "计算机科学与技术"},
    })  # fmt: skip
    save_page_context(engine, "alice", context)
    assert page_context_for(engine, "alice") == context
    assert page_context_for(engine, "bob") is None
    moved = PageContext.model_validate(
        {**context.model_dump(), "current_page": "detail", "selected_advisor": {"id": "10001", "name": "张三"}}
    )
    save_page_context(engine, "alice", moved)
    assert page_context_for(engine, "alice").current_page == "detail"  # type: ignore[union-attr]
    assert page_context_for(engine, "alice").selected_advisor.name == "张三"  # type: ignore[union-attr]
    save_page_context(engine, "alice", None)
    assert page_context_for(engine, "alice") is None


@pytest.mark.both_backends
def test_the_catalog_and_page_contexts_on_either_database(store_url: str) -> None:
    """Loaded once and read alike on SQLite and PostgreSQL (the store's own database); a page context replaced in
    place (an upsert on either)."""
    from consulta.apps.advisor._lookups import update_ranking
    from consulta.runtime import Store

    store = Store(store_url)
    try:
        engine = store.engine
        assert ensure_catalog(engine) is True and ensure_catalog(engine) is False
        ranking = update_ranking(engine, school="北京大学", major="计算机科学与技术", sort_by="学生前途")
        values = [a.ratings["学生前途"] for a in ranking.advisors]
        assert values and values == sorted(values, reverse=True)
        first = PageContext.model_validate(
            {"current_page": "ranking", "ranking_filters": {"school": "北京大学", "major": "计算机科学与技术"}}
        )
        save_page_context(engine, "web:alice", first)
        save_page_context(engine, "web:alice", first.model_copy(update={"current_page": "home"}))
        assert page_context_for(engine, "web:alice").current_page == "home"  # type: ignore[union-attr]
    finally:
        store.close()
