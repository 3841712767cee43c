"""The advisor site's look-ups over the store's database, the seed's tools (§2.3, §3.2) as functions: the ranking of
a school's major, recommendations for a person's preferences (each with its reason, composed here from the data),
an advisor's detail and reviews. Every one returns a pydantic model; every failure is `LookupFailed` (a ToolError:
the agent says §6.2's line, the web answers 4xx/503 with its code). The catalog is loaded on first use.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import SQLAlchemyError

from ...runtime import ToolError
from ._catalog import DIMENSIONS, advisor_majors, advisors, majors, reviews, schools
from ._generate import DIRECTIONS, FUNDING, PERSONALITIES, RESEARCH_STYLES, TITLES, ensure_catalog

__all__ = [
    "MAX_LIMIT",
    "PREFERENCE_KEYS",
    "SORT_KEYS",
    "AdvisorDetail",
    "AdvisorSummary",
    "Catalog",
    "LookupFailed",
    "RankedAdvisor",
    "Ranking",
    "Recommendation",
    "Recommendations",
    "Review",
    "Reviews",
    "catalog_summary",
    "get_advisor_detail",
    "get_advisor_reviews",
    "known_advisors",
    "recommend_advisors",
    "research_directions",
    "update_ranking",
]

SORT_KEYS: dict[str, str] = {
    "overall": "overall",
    **{zh: zh for zh in DIMENSIONS},
    **{en: zh for zh, en in DIMENSIONS.items()},
}
"""What `sort_by` accepts → the dimension it sorts by ("overall" or one of the seed's four names; the English column
names are accepted too)."""
PREFERENCE_KEYS = ("research_direction", "personality", "research_style", "funding")
MAX_LIMIT = 100

_COLUMN = {"overall": advisors.c.overall, "学术水平": advisors.c.academic, "科研经费": advisors.c.funding_score,
           "师生关系": advisors.c.relationship, "学生前途": advisors.c.future}  # fmt: skip

# A preference as people say it (zh or en) → the trait the data knows. Matched as a substring of the preference.
_SYNONYMS: dict[str, dict[str, tuple[str, ...]]] = {
    "personality": {
        "温和": (
            "温和",
            "温柔",
            "和蔼",
            "脾气好",
            "好说话",
            "nice",
            "gentle",
            "kind",
            "easygoing",
            "easy-going",
            "mild",
            "patient",
        ),
        "严格": ("严格", "严厉", "要求高", "strict", "demanding", "tough"),
        "放养": ("放养", "自由", "不管", "hands-off", "hands off", "freedom", "laissez", "independent"),
        "负责": ("负责", "认真", "上心", "responsible", "caring", "attentive", "supportive", "involved"),
    },
    "research_style": {
        "理论型": ("理论", "theor"),
        "工程型": ("工程", "实践", "项目", "engineer", "practical", "applied", "hands-on"),
        "产业型": ("产业", "企业", "工业", "横向", "industr", "company", "companies"),
    },
    "funding": {
        "紧张": ("紧张", "少", "tight", "low", "poor", "little"),
        "一般": ("一般", "中等", "够用", "moderate", "average", "enough"),
        "充足": (
            "充足",
            "多",
            "有钱",
            "充裕",
            "ample",
            "plenty",
            "rich",
            "well funded",
            "well-funded",
            "good",
            "high",
            "lots",
        ),
    },
}
_TRAIT_EN = {"personality": PERSONALITIES, "research_style": RESEARCH_STYLES, "funding": FUNDING}


class LookupFailed(ToolError):
    """A look-up that could not be done: `error_code` is one of unknown_school, unknown_major, unknown_advisor,
    invalid_sort_by, invalid_limit, invalid_preference, data_unavailable. Nothing was changed."""


class AdvisorSummary(BaseModel):
    """An advisor as a list shows them. `rating`: overall (1-5, the mean of the four dimensions over their reviews);
    `ratings`: by the seed's four dimensions. zh fields, with `*_en` glosses."""

    id: str
    name: str
    name_en: str
    gender: Literal["m", "f"]
    title: str
    title_en: str
    school: str
    major: str
    research_directions: list[str]
    research_directions_en: list[str]
    rating: float
    ratings: dict[str, float]
    review_count: int
    tags: list[str]
    tags_en: list[str]


class RankedAdvisor(AdvisorSummary):
    rank: int
    """1 for the first of the ranking as sorted."""


class Ranking(BaseModel):
    school: str
    major: str
    sort_by: str
    total: int
    """How many advisors the school lists under the major (the ranking holds the first `limit`)."""
    advisors: list[RankedAdvisor]


class Recommendation(RankedAdvisor):
    """`rank` is the advisor's place in the school's ranking by overall rating; `matched` names the preferences the
    advisor's data meets (`research_direction_related`: a narrower field of the direction asked, 深度学习 for 机器学习); `reason` (zh) / `reason_en`: why, from the data."""

    score: float
    matched: list[str]
    reason: str
    reason_en: str


class Recommendations(BaseModel):
    school: str
    major: str
    preferences: dict[str, str]
    """The preferences given (empty ones dropped)."""
    advisors: list[Recommendation]
    """Best match first."""


class Review(BaseModel):
    id: str
    date: str
    ratings: dict[str, int]
    overall: float
    text: str
    text_en: str
    author: str
    author_en: str


class Reviews(BaseModel):
    advisor_id: str
    advisor_name: str
    total: int
    rating: float
    ratings: dict[str, float]
    reviews: list[Review]
    """Newest first."""


class AdvisorDetail(AdvisorSummary):
    personality: str
    personality_en: str
    research_style: str
    research_style_en: str
    funding: str
    funding_en: str
    papers: int
    students: int
    since: int
    bio: str
    bio_en: str
    majors: list[str]
    """Every major the school lists the advisor under."""
    reviews: list[Review]
    """The newest five."""


class Catalog(BaseModel):
    """What the site holds: the schools (with the majors each lists advisors under) and the majors, in order."""

    schools: list[dict[str, Any]]
    majors: list[dict[str, Any]]
    dimensions: list[str]
    """The seed's four dimensions, as `ratings` names them."""
    dimension_keys: dict[str, str]
    """Each dimension → its column's name (academic, funding, relationship, future)."""
    advisors: int
    reviews: int


# ---- the look-ups --------------------------------------------------------------------------------------------------


def update_ranking(engine: Engine, *, school: str, major: str, sort_by: str = "overall", limit: int = 20) -> Ranking:
    """The advisors `school` lists under `major` (their canonical names), best first by `sort_by` (see SORT_KEYS;
    ties by review count, then id), at most `limit` (1-100). A school that lists no advisor under the major is an
    empty ranking, not an error."""
    dimension = SORT_KEYS.get(sort_by)
    if dimension is None:
        raise LookupFailed(
            "invalid_sort_by",
            f"Cannot sort by {sort_by!r}.",
            hint=f"Sort by one of {', '.join(SORT_KEYS)}.",
            field="sort_by",
        )
    _check_limit(limit)
    with _connect(engine) as conn:
        _check_names(conn, school=school, major=major)
        column = _COLUMN[dimension]
        query = (
            select(advisors)
            .join(advisor_majors, advisor_majors.c.advisor_id == advisors.c.id)
            .where(advisor_majors.c.school == school, advisor_majors.c.major == major)
            .order_by(column.desc(), advisors.c.review_count.desc(), advisors.c.id)
        )
        rows = conn.execute(query).all()
    ranked = [RankedAdvisor(**_summary(row), rank=i) for i, row in enumerate(rows, 1)]
    return Ranking(school=school, major=major, sort_by=dimension, total=len(ranked), advisors=ranked[:limit])


def recommend_advisors(
    engine: Engine, *, school: str, major: str, preferences: Mapping[str, str | None], limit: int = 3
) -> Recommendations:
    """The advisors of `school`'s `major` that best meet `preferences` (keys: research_direction, personality,
    research_style, funding; values as people say them, zh or en), at most `limit`, best first: a research direction
    met counts most, then personality, style and funding; the overall rating breaks ties. Each has the preferences
    it meets and a reason composed from its data."""
    unknown = sorted(set(preferences) - set(PREFERENCE_KEYS))
    if unknown:
        raise LookupFailed(
            "invalid_preference",
            f"Unknown preference {', '.join(unknown)}.",
            hint=f"Preferences are {', '.join(PREFERENCE_KEYS)}.",
            field="preferences",
        )
    _check_limit(limit)
    wanted = {k: v.strip() for k, v in preferences.items() if isinstance(v, str) and v.strip()}
    ranking = update_ranking(engine, school=school, major=major, limit=MAX_LIMIT)
    with _connect(engine) as conn:
        traits = {
            row.id: row
            for row in conn.execute(
                select(advisors.c.id, advisors.c.personality, advisors.c.research_style, advisors.c.funding).where(
                    advisors.c.id.in_([a.id for a in ranking.advisors])
                )
            )
        }
    scored = []
    for advisor in ranking.advisors:
        matched, score = _match(advisor, traits[advisor.id], wanted)
        scored.append((score + advisor.rating / 5, matched, advisor, traits[advisor.id]))
    scored.sort(key=lambda item: (-item[0], item[2].rank))
    chosen = [
        Recommendation(
            **advisor.model_dump(), score=round(score, 3), matched=matched, **_reason(advisor, row, matched, wanted)
        )
        for score, matched, advisor, row in scored[:limit]
    ]
    return Recommendations(school=school, major=major, preferences=wanted, advisors=chosen)


def get_advisor_detail(engine: Engine, *, advisor_id: str) -> AdvisorDetail:
    """Advisor `advisor_id`: research, traits, ratings, and their newest five reviews."""
    with _connect(engine) as conn:
        row = _advisor_row(conn, advisor_id)
        listed = (
            conn.execute(select(advisor_majors.c.major).where(advisor_majors.c.advisor_id == advisor_id))
            .scalars()
            .all()
        )
        newest = conn.execute(_reviews_query(advisor_id).limit(5)).all()
    return AdvisorDetail(
        **_summary(row),
        **{
            k: row._mapping[k]
            for k in ("personality", "research_style", "funding", "papers", "students", "since", "bio", "bio_en")
        },
        personality_en=PERSONALITIES[row.personality],
        research_style_en=RESEARCH_STYLES[row.research_style],
        funding_en=FUNDING[row.funding],
        majors=list(listed),
        reviews=[_review(r) for r in newest],
    )


def get_advisor_reviews(engine: Engine, *, advisor_id: str, limit: int = 5) -> Reviews:
    """Advisor `advisor_id`'s reviews, newest first (at most `limit`), with their count and average ratings."""
    _check_limit(limit)
    with _connect(engine) as conn:
        row = _advisor_row(conn, advisor_id)
        found = conn.execute(_reviews_query(advisor_id).limit(limit)).all()
    summary = _summary(row)
    return Reviews(advisor_id=advisor_id, advisor_name=row.name, total=row.review_count, rating=summary["rating"],
                   ratings=summary["ratings"], reviews=[_review(r) for r in found])  # fmt: skip


def known_advisors(engine: Engine, ids: Iterable[str]) -> dict[str, dict[str, str]]:
    """The name and title of each advisor of `ids` the data has (ids it does not have are left out)."""
    wanted = sorted({str(i) for i in ids})
    if not wanted:
        return {}
    with _connect(engine) as conn:
        rows = conn.execute(
            select(advisors.c.id, advisors.c.name, advisors.c.title).where(advisors.c.id.in_(wanted))
        ).all()
    return {row.id: {"name": row.name, "title": row.title} for row in rows}


def research_directions(engine: Engine | None = None, *, major: str | None = None) -> list[str]:
    """The research directions the data knows (zh), of `major` or of every major, in a fixed order. (The engine is
    accepted for the look-ups' common shape: the directions are the generator's, the same in every store.)"""
    if major is not None:
        if major not in DIRECTIONS:
            raise LookupFailed("unknown_major", f"No major named {major!r} here.", field="major")
        return list(DIRECTIONS[major])
    return list(dict.fromkeys(d for directions in DIRECTIONS.values() for d in directions))


def catalog_summary(engine: Engine) -> Catalog:
    """The schools and majors the site holds, for its filters, and how many advisors and reviews."""
    with _connect(engine) as conn:
        offered: dict[str, list[str]] = {}
        for school, major in conn.execute(select(advisor_majors.c.school, advisor_majors.c.major).distinct()):
            offered.setdefault(school, []).append(major)
        major_rows = conn.execute(select(majors).order_by(majors.c.code)).all()
        order = {m.name: i for i, m in enumerate(major_rows)}
        school_rows = conn.execute(select(schools).order_by(schools.c.position)).all()
        n_advisors = conn.execute(select(func.count()).select_from(advisors)).scalar_one()
        n_reviews = conn.execute(select(func.count()).select_from(reviews)).scalar_one()
    return Catalog(
        schools=[
            {
                "name": s.name,
                "en": s.en,
                "city": s.city,
                "majors": sorted(offered.get(s.name, []), key=order.__getitem__),
            }
            for s in school_rows
        ],
        majors=[{"name": m.name, "en": m.en, "code": m.code} for m in major_rows],
        dimensions=list(DIMENSIONS),
        dimension_keys=dict(DIMENSIONS),
        advisors=n_advisors,
        reviews=n_reviews,
    )


# ---- helpers -------------------------------------------------------------------------------------------------------

_ready: weakref.WeakSet[Engine] = weakref.WeakSet()


@contextmanager
def _connect(engine: Engine) -> Iterator[Connection]:
    """A read connection to a loaded catalog; a database error becomes LookupFailed("data_unavailable")."""
    try:
        if engine not in _ready:
            ensure_catalog(engine)
            _ready.add(engine)
        with engine.connect() as conn:
            yield conn
    except SQLAlchemyError as error:
        raise _unavailable(error) from error


def _unavailable(error: SQLAlchemyError) -> LookupFailed:
    return LookupFailed(
        "data_unavailable", f"The advisor data could not be read ({type(error).__name__}).", hint="Try again later."
    )


def _check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise LookupFailed(
            "invalid_limit", f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}.", field="limit"
        )


def _check_names(conn: Any, *, school: str, major: str) -> None:
    if conn.execute(select(schools.c.name).where(schools.c.name == school)).first() is None:
        raise LookupFailed(
            "unknown_school",
            f"No school named {school!r} here.",
            hint="Give the school's full name, e.g. 北京大学.",
            field="school",
        )
    if conn.execute(select(majors.c.name).where(majors.c.name == major)).first() is None:
        raise LookupFailed(
            "unknown_major",
            f"No major named {major!r} here.",
            hint="Give the major's full name, e.g. 计算机科学与技术.",
            field="major",
        )


def _advisor_row(conn: Any, advisor_id: str) -> Row[Any]:
    row = conn.execute(select(advisors).where(advisors.c.id == str(advisor_id))).first()
    if row is None:
        raise LookupFailed(
            "unknown_advisor",
            f"No advisor with id {advisor_id!r}.",
            hint="Use an id from the ranking.",
            field="advisor_id",
        )
    return row


def _reviews_query(advisor_id: str) -> Any:
    return select(reviews).where(reviews.c.advisor_id == advisor_id).order_by(reviews.c.date.desc(), reviews.c.id)


def _summary(row: Row[Any]) -> dict[str, Any]:
    directions = json.loads(row.research_directions)
    tags = json.loads(row.tags)
    return {
        "id": row.id,
        "name": row.name,
        "name_en": row.name_en,
        "gender": row.gender,
        "title": row.title,
        "title_en": TITLES[row.title],
        "school": row.school,
        "major": row.major,
        "research_directions": directions,
        "research_directions_en": [DIRECTIONS[row.major].get(d, d) for d in directions],
        "rating": round(row.overall, 1),
        "ratings": {
            zh: round(getattr(row, "funding_score" if en == "funding" else en), 1) for zh, en in DIMENSIONS.items()
        },
        "review_count": row.review_count,
        "tags": tags,
        "tags_en": [_TAG_EN.get(tag, tag) for tag in tags],
    }


_TAG_EN = {"脾气好": "even-tempered", "要求严格": "demanding", "自由度高": "lots of freedom", "认真负责": "conscientious",
           "理论扎实": "strong theory", "项目多": "many projects", "横向项目多": "industry projects", "经费充足": "well funded",
           "经费紧张": "tight funding", "学术大牛": "top scholar", "出路好": "great prospects"}  # fmt: skip


def _review(row: Row[Any]) -> Review:
    return Review(
        id=row.id, date=row.date, overall=round(row.overall, 2), text=row.text, text_en=row.text_en, author=row.author, author_en=row.author_en,
        ratings={zh: getattr(row, en) for zh, en in DIMENSIONS.items()},
    )  # fmt: skip


def _trait(kind: str, said: str) -> str | None:
    """The trait of `kind` a preference names (`温和` for "希望导师温和一点", "gentle"), or None."""
    text = said.lower()
    for trait, words in _SYNONYMS[kind].items():
        if any(word in text for word in words):
            return trait
    return None


_RELATED = {
    "机器学习": ("深度学习", "计算机视觉", "自然语言处理", "统计学习", "模式识别"),
    "人工智能": ("机器学习", "深度学习", "计算机视觉", "自然语言处理", "模式识别", "人工智能安全"),
}
"""A field people name → narrower fields of it the data has (an advisor working on one is a near match)."""


def _direction(advisor: RankedAdvisor, said: str) -> str | None:
    """The advisor's research direction a preference names (zh or en, either containing the other), or None."""
    text = said.lower().strip()
    for zh, en in zip(advisor.research_directions, advisor.research_directions_en, strict=True):
        if zh in said or said in zh or en.lower() in text or (len(text) >= 4 and text in en.lower()):
            return zh
    return None


def _related(advisor: RankedAdvisor, said: str) -> str | None:
    """The advisor's direction that lies within the field a preference names (深度学习 for 机器学习), or None."""
    for broad, narrower in _RELATED.items():
        if broad in said or _DIRECTION_EN.get(broad, "\0") in said.lower():
            return next((d for d in advisor.research_directions if d in narrower), None)
    return None


_DIRECTION_EN = {"机器学习": "machine learning", "人工智能": "artificial intelligence"}


_WEIGHTS = {
    "research_direction": 3.0,
    "research_direction_related": 1.5,
    "personality": 2.0,
    "research_style": 1.5,
    "funding": 1.5,
}


def _match(advisor: RankedAdvisor, traits: Row[Any], wanted: Mapping[str, str]) -> tuple[list[str], float]:
    matched = []
    for key, said in wanted.items():
        if key == "research_direction":
            hit = _direction(advisor, said) is not None
            if not hit and _related(advisor, said) is not None:
                matched.append("research_direction_related")
        else:
            trait = _trait(key, said)
            hit = trait is not None and (
                getattr(traits, key) == trait or (key == "funding" and trait == "一般" and traits.funding == "充足")
            )
        if hit:
            matched.append(key)
    return matched, sum(_WEIGHTS[k] for k in matched)


def _reason(advisor: RankedAdvisor, traits: Row[Any], matched: list[str], wanted: Mapping[str, str]) -> dict[str, str]:
    zh: list[str] = []
    en: list[str] = []
    pronoun, pronoun_en = ("她", "her") if advisor.gender == "f" else ("他", "him")
    if "research_direction" in matched:
        direction = _direction(advisor, wanted["research_direction"]) or ""
        zh.append(f"研究{direction}")
        en.append(f"works on {DIRECTIONS[advisor.major].get(direction, direction).lower()}")
    if "research_direction_related" in matched:
        direction = _related(advisor, wanted["research_direction"]) or ""
        zh.append(f"研究{direction}，与{wanted['research_direction']}相关")
        en.append(
            f"works on {DIRECTIONS[advisor.major].get(direction, direction).lower()}, close to {wanted['research_direction']}"
        )
    if "personality" in matched:
        zh.append(f"学生评价{pronoun}{traits.personality}（师生关系{advisor.ratings['师生关系']}分）")
        en.append(
            f"students find {pronoun_en} {PERSONALITIES[traits.personality]} (relationship {advisor.ratings['师生关系']})"
        )
    if "research_style" in matched:
        zh.append(f"研究风格偏{traits.research_style}")
        en.append(f"{RESEARCH_STYLES[traits.research_style]} research")
    if "funding" in matched:
        zh.append(f"经费{traits.funding}（{advisor.ratings['科研经费']}分）")
        en.append(f"{FUNDING[traits.funding]} funding ({advisor.ratings['科研经费']})")
    if not zh:
        zh.append(f"综合评分{advisor.rating}分，在本专业排第{advisor.rank}")
        en.append(f"overall rating {advisor.rating}, #{advisor.rank} in the major")
    return {"reason": "，".join(zh), "reason_en": "; ".join(en)}
