"""The advisor site's tables, in the store's own database (`Store.engine`), created on first use, and each web
session's page context (seed §3.1) kept per principal.

Tables: `advisor_schools`, `advisor_majors` (public names, from data/names.yaml), `advisor_advisors` (synthetic
people: traits and their reviews' averages), `advisor_advisor_majors` (which advisors a school's major lists, the
ranking's index), `advisor_reviews` (synthetic reviews: date, four dimension scores, text), `advisor_catalog_meta`
(which generator version is loaded) and `advisor_page_contexts`. The data is loaded by `_generate.ensure_catalog`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text, select
from sqlalchemy.engine import Engine

from ...runtime import AppTables, migrate_app_tables, state_table, upsert
from ._public_names import names

__all__ = [
    "ADVISOR_ID",
    "ADVISOR_TABLES",
    "DIMENSIONS",
    "SORTS",
    "PageContext",
    "RankingFilters",
    "SelectedAdvisor",
    "VisibleAdvisor",
    "advisor_majors",
    "advisors",
    "catalog_meta",
    "create_tables",
    "majors",
    "metadata",
    "names_enum",
    "page_context_for",
    "page_contexts",
    "reviews",
    "save_page_context",
    "schools",
    "sessions_table",
]

DIMENSIONS: dict[str, str] = {
    "学术水平": "academic",
    "科研经费": "funding",
    "师生关系": "relationship",
    "学生前途": "future",
}
"""The four rating dimensions (the seed's names) → their column names."""

metadata = MetaData()

schools = Table(
    "advisor_schools",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("en", String(100), nullable=False),
    Column("city", String(20), nullable=False),
    Column("position", Integer, nullable=False),  # order in names.yaml
)

majors = Table(
    "advisor_majors",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("code", String(8), nullable=False),
    Column("en", String(100), nullable=False),
)

advisors = Table(
    "advisor_advisors",
    metadata,
    Column("id", String(12), primary_key=True),
    Column("name", String(12), nullable=False),
    Column("name_en", String(40), nullable=False),  # pinyin
    Column("gender", String(1), nullable=False),  # m | f
    Column("school", String(40), ForeignKey("advisor_schools.name"), nullable=False),
    Column(
        "major", String(40), ForeignKey("advisor_majors.name"), nullable=False
    ),  # the major the advisor is listed under first
    Column("title", String(10), nullable=False),  # 教授 | 副教授 | 讲师 | 研究员
    Column("research_directions", Text, nullable=False),  # JSON list of str (zh)
    Column("personality", String(8), nullable=False),  # 温和 | 严格 | 放养 | 负责
    Column("research_style", String(8), nullable=False),  # 理论型 | 工程型 | 产业型
    Column("funding", String(8), nullable=False),  # 充足 | 一般 | 紧张
    Column("papers", Integer, nullable=False),
    Column("students", Integer, nullable=False),
    Column("since", Integer, nullable=False),  # year joined the school
    Column("bio", Text, nullable=False),
    Column("bio_en", Text, nullable=False),
    Column("tags", Text, nullable=False),  # JSON list of str (zh)
    Column("overall", Float, nullable=False),
    Column("academic", Float, nullable=False),
    Column("funding_score", Float, nullable=False),
    Column("relationship", Float, nullable=False),
    Column("future", Float, nullable=False),
    Column("review_count", Integer, nullable=False),
)

advisor_majors = Table(
    "advisor_advisor_majors",
    metadata,
    Column("advisor_id", String(12), ForeignKey("advisor_advisors.id"), primary_key=True),
    Column("school", String(40), primary_key=True),
    Column("major", String(40), primary_key=True),
    Column("overall", Float, nullable=False),  # copied from the advisor: the ranking is read from this index alone
    Index("ix_advisor_majors_ranking", "school", "major", "overall"),
)

reviews = Table(
    "advisor_reviews",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("advisor_id", String(12), ForeignKey("advisor_advisors.id"), nullable=False),
    Column("date", String(10), nullable=False),  # YYYY-MM-DD
    Column("academic", Integer, nullable=False),  # 1-5
    Column("funding", Integer, nullable=False),
    Column("relationship", Integer, nullable=False),
    Column("future", Integer, nullable=False),
    Column("overall", Float, nullable=False),
    Column("text", Text, nullable=False),  # zh
    Column("text_en", Text, nullable=False),  # English gloss
    Column("author", String(20), nullable=False),  # e.g. 2021级硕士
    Column("author_en", String(40), nullable=False),
    Index("ix_advisor_reviews_advisor", "advisor_id", "date"),
)

catalog_meta = Table(
    "advisor_catalog_meta",
    metadata,
    Column("key", String(40), primary_key=True),
    Column("value", Text, nullable=False),
)

page_contexts = Table(
    "advisor_page_contexts",
    metadata,
    Column("principal", String(128), primary_key=True),
    Column("context", Text, nullable=False),  # PageContext as JSON
    Column("updated_at", String(32), nullable=False),
)


sessions_table = state_table("advisor_sessions", metadata, Column("session_id", String(64), nullable=False))
"""Each principal's `Session` (`_sessions.SessionBook`)."""

ADVISOR_TABLES = AppTables(app="advisor", metadata=metadata, migrations=Path(__file__).with_name("migrations"))
"""The advisor site's tables, declared on its `AppDef`: created and migrated with the store."""


def create_tables(engine: Engine) -> None:
    """Bring the advisor site's tables up to date in `engine`'s database (checked once per engine and process)."""
    migrate_app_tables(engine, ADVISOR_TABLES)


# ---- the page context (seed §3.1) ----------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


ADVISOR_ID = r"^[0-9]{1,12}$"
"""What an advisor's id looks like (the data's ids are numbers, e.g. "10001")."""


def names_enum(kind: str) -> Callable[[dict[str, Any]], None]:
    """The field's schema lists the names the data has (read when the schema is made, not at import)."""

    def extra(schema: dict[str, Any]) -> None:
        listed = names().schools if kind == "school" else names().majors
        schema["enum"] = [n.name for n in listed] + ([None] if "anyOf" in schema else [])

    return extra


class VisibleAdvisor(_Strict):
    """An advisor the page shows, in the seed's shape."""

    id: str = Field(min_length=1, max_length=12, pattern=ADVISOR_ID)
    name: str = Field(min_length=1, max_length=12)
    title: str = Field("", max_length=10)
    rating: float = Field(0.0, ge=0, le=5)
    rank: int = Field(ge=1, le=10_000)


class SelectedAdvisor(_Strict):
    """The advisor whose detail page is open (or who is otherwise selected)."""

    id: str = Field(min_length=1, max_length=12, pattern=ADVISOR_ID)
    name: str = Field(min_length=1, max_length=12)
    title: str = Field("", max_length=10)


SORTS = ("overall", *DIMENSIONS, *DIMENSIONS.values())
"""What a ranking may be sorted by: the overall rating or a dimension (the seed's name or its column's)."""


class RankingFilters(_Strict):
    school: str | None = Field(None, max_length=40, json_schema_extra=names_enum("school"))
    major: str | None = Field(None, max_length=40, json_schema_extra=names_enum("major"))
    sort_by: str = Field("overall", max_length=12, json_schema_extra={"enum": list(SORTS)})


class PageContext(_Strict):
    """The seed's `page_context`: what the page shows, sent by the page with every message (and whenever it changes).
    `recommended` (beyond the seed): the ids the page highlights as recommended."""

    current_page: Literal["home", "ranking", "detail"] = "home"
    visible_advisors: list[VisibleAdvisor] = Field(default_factory=list, max_length=50)
    selected_advisor: SelectedAdvisor | None = None
    ranking_filters: RankingFilters = Field(default_factory=RankingFilters)
    recommended: list[Annotated[str, Field(pattern=ADVISOR_ID)]] = Field(default_factory=list, max_length=20)


def page_context_for(engine: Engine, principal: str) -> PageContext | None:
    """The page context the web session `principal` last sent, or None (it sent none yet, or the session was cleared)."""
    create_tables(engine)
    with engine.connect() as conn:
        row = conn.execute(select(page_contexts.c.context).where(page_contexts.c.principal == principal)).first()
    return None if row is None else PageContext.model_validate_json(row.context)


def save_page_context(engine: Engine, principal: str, context: PageContext | None) -> None:
    """Keep `context` as the session's page context (None clears it), in one statement."""
    create_tables(engine)
    with engine.begin() as conn:
        if context is None:
            conn.execute(page_contexts.delete().where(page_contexts.c.principal == principal))
            return
        values = {"principal": principal, "context": json.dumps(context.model_dump(mode="json"), ensure_ascii=False),
                  "updated_at": datetime.now(UTC).isoformat()}  # fmt: skip
        conn.execute(upsert(conn, page_contexts, key=["principal"], set_=["context", "updated_at"]).values(**values))
