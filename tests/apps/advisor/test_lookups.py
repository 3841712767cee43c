"""The site's look-ups, the seed's tools: the ranking filtered by school and major and sorted by the overall rating or
each dimension (bad names, sorts, limits refused with their codes), recommendations that say why from the data (zh
and en preferences), an advisor's detail and reviews (unknown id refused), a store that cannot be read refused as
`data_unavailable`; and fast enough (a ranking far under 50 ms)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from consulta.apps.advisor._lookups import (
    SORT_KEYS,
    LookupFailed,
    get_advisor_detail,
    get_advisor_reviews,
    known_advisors,
    recommend_advisors,
    research_directions,
    update_ranking,
)
from consulta.runtime import ToolError

PKU_CS = {"school": "北京大学", "major": "计算机科学与技术"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return create_engine(f"sqlite:///{tmp_path_factory.mktemp('advisor')}/store.db")


def failure(code: str, call: object, **kwargs: object) -> LookupFailed:
    with pytest.raises(LookupFailed) as raised:
        call(**kwargs)  # type: ignore[operator]
    assert raised.value.error_code == code and str(raised.value)
    assert isinstance(raised.value, ToolError)  # the runtime reports it to the model in the seeds' shape
    return raised.value


def test_the_ranking_is_the_school_s_major_best_first(engine: Engine) -> None:
    ranking = update_ranking(engine, **PKU_CS)
    assert ranking.total == len(ranking.advisors) >= 4 and ranking.sort_by == "overall"
    assert all(a.school == "北京大学" for a in ranking.advisors)
    assert [a.rank for a in ranking.advisors] == list(range(1, ranking.total + 1))
    ratings = [a.rating for a in ranking.advisors]
    assert ratings == sorted(ratings, reverse=True)
    first = ranking.advisors[0]
    assert set(first.ratings) == {"学术水平", "科研经费", "师生关系", "学生前途"}
    assert first.title in {"教授", "副教授", "讲师", "研究员"} and first.research_directions and first.review_count >= 3
    assert len(first.research_directions_en) == len(first.research_directions) and len(first.tags_en) == len(first.tags)
    other = update_ranking(engine, school="清华大学", major="计算机科学与技术")
    assert not {a.id for a in other.advisors} & {a.id for a in ranking.advisors}


@pytest.mark.parametrize("sort_by", list(SORT_KEYS))
def test_every_sort_key_sorts_by_its_dimension(engine: Engine, sort_by: str) -> None:
    ranking = update_ranking(engine, **PKU_CS, sort_by=sort_by)
    dimension = SORT_KEYS[sort_by]
    values = [a.rating if dimension == "overall" else a.ratings[dimension] for a in ranking.advisors]
    assert values == sorted(values, reverse=True) and ranking.sort_by == dimension


def test_limits_and_majors_a_school_does_not_list(engine: Engine) -> None:
    assert len(update_ranking(engine, **PKU_CS, limit=2).advisors) == 2
    assert update_ranking(engine, **PKU_CS, limit=2).total > 2
    offered = {a.major for a in update_ranking(engine, **PKU_CS, limit=1).advisors}
    assert offered == {"计算机科学与技术"}
    empty = [
        m
        for m in ("哲学", "法学", "数学", "化学", "临床医学", "土木工程")
        if update_ranking(engine, school="北京大学", major=m).total == 0
    ]
    assert empty, "北京大学 lists every major: no empty ranking to check"
    assert update_ranking(engine, school="北京大学", major=empty[0]).advisors == []


def test_bad_look_ups_are_refused_with_their_codes(engine: Engine) -> None:
    assert (
        failure("unknown_school", update_ranking, engine=engine, school="北大", major="计算机科学与技术").field
        == "school"
    )
    assert failure("unknown_major", update_ranking, engine=engine, school="北京大学", major="计算机").field == "major"
    failure("invalid_sort_by", update_ranking, engine=engine, **PKU_CS, sort_by="颜值")
    for limit in (0, 101, -1, True):
        failure("invalid_limit", update_ranking, engine=engine, **PKU_CS, limit=limit)
    failure("unknown_advisor", get_advisor_detail, engine=engine, advisor_id="nobody")
    failure("unknown_advisor", get_advisor_reviews, engine=engine, advisor_id="99999")
    failure("invalid_preference", recommend_advisors, engine=engine, **PKU_CS, preferences={"颜值": "高"})
    failure("unknown_school", recommend_advisors, engine=engine, school="哈佛大学", major="数学", preferences={})


def test_recommendations_meet_preferences_and_say_why(engine: Engine) -> None:
    found = recommend_advisors(engine, **PKU_CS, preferences={"research_direction": "机器学习", "personality": "温和"})
    assert 1 <= len(found.advisors) <= 3 and found.preferences == {
        "research_direction": "机器学习",
        "personality": "温和",
    }
    scores = [a.score for a in found.advisors]
    assert scores == sorted(scores, reverse=True)
    best = found.advisors[0]
    assert best.matched and best.reason and best.reason_en
    detail = get_advisor_detail(engine, advisor_id=best.id)
    if "personality" in best.matched:
        assert detail.personality == "温和" and "温和" in best.reason and "gentle" in best.reason_en
    if "research_direction" in best.matched:
        assert "机器学习" in detail.research_directions and "机器学习" in best.reason
    # said in English, the same traits are met
    english = recommend_advisors(
        engine, **PKU_CS, preferences={"research_direction": "machine learning", "personality": "a gentle advisor"}
    )
    assert [a.id for a in english.advisors] == [a.id for a in found.advisors]
    # every gentle advisor of the major outranks every advisor that meets nothing
    everyone = recommend_advisors(engine, **PKU_CS, preferences={"personality": "温和"}, limit=20)
    met = [a.score for a in everyone.advisors if a.matched]
    unmet = [a.score for a in everyone.advisors if not a.matched]
    assert not met or not unmet or min(met) > max(unmet)
    assert all(
        get_advisor_detail(engine, advisor_id=a.id).personality == "温和" for a in everyone.advisors if a.matched
    )
    # no preference at all: the best rated, and that is the reason
    plain = recommend_advisors(engine, **PKU_CS, preferences={"funding": None, "personality": "  "})
    assert plain.preferences == {} and plain.advisors[0].id == update_ranking(engine, **PKU_CS).advisors[0].id
    assert "综合评分" in plain.advisors[0].reason


def test_an_advisor_s_detail_and_reviews(engine: Engine) -> None:
    first = update_ranking(engine, **PKU_CS).advisors[0]
    detail = get_advisor_detail(engine, advisor_id=first.id)
    assert (detail.name, detail.rating, detail.ratings) == (first.name, first.rating, first.ratings)
    assert detail.personality in {"温和", "严格", "放养", "负责"} and detail.personality_en
    assert detail.bio and detail.bio_en and "计算机科学与技术" in detail.majors
    assert 1 <= len(detail.reviews) <= 5
    reviews = get_advisor_reviews(engine, advisor_id=first.id, limit=100)
    assert reviews.total == len(reviews.reviews) == first.review_count
    dates = [r.date for r in reviews.reviews]
    assert dates == sorted(dates, reverse=True) and [r.id for r in detail.reviews] == [
        r.id for r in reviews.reviews[:5]
    ]
    assert reviews.rating == first.rating
    assert known_advisors(engine, [first.id, "nobody"]) == {first.id: {"name": first.name, "title": first.title}}


def test_a_store_that_cannot_be_read_is_data_unavailable(tmp_path: Path) -> None:
    broken = create_engine(f"sqlite:///{tmp_path}/no/such/folder/store.db")
    error = failure("data_unavailable", update_ranking, engine=broken, **PKU_CS)
    assert "could not be read" in str(error)


def test_a_ranking_takes_far_under_50_ms(engine: Engine) -> None:
    update_ranking(engine, **PKU_CS)
    times = []
    for _ in range(30):
        start = time.perf_counter()
        update_ranking(engine, **PKU_CS, sort_by="师生关系")
        times.append(time.perf_counter() - start)
    assert statistics.median(times) < 0.015, f"median {statistics.median(times) * 1000:.1f} ms"


def test_the_research_directions_the_data_knows(engine: Engine) -> None:
    every = research_directions(engine)
    assert "机器学习" in every and "量子信息" in every and len(every) == len(set(every)) >= 29 * 6
    assert research_directions(engine, major="计算机科学与技术")[:3] == ["机器学习", "深度学习", "计算机视觉"]
    advisors_cs = update_ranking(engine, **PKU_CS).advisors
    assert all(set(a.research_directions) <= set(research_directions(major="计算机科学与技术")) for a in advisors_cs)
    failure("unknown_major", research_directions, engine=engine, major="炼金术")
