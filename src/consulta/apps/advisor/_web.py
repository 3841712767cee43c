"""The advisor site's part of the web front end: its page (static/: home, ranking, advisor detail, next to the chat)
and its routes under /api/advisor — the catalog for the filters, the ranking, an advisor's detail and reviews,
recommendations, the page context each session sends before every message (seed §3.1, read by the agent through
`page_context_for`), and speech (a reply as WAV, synthesised here).

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import Path as PathPart
from fastapi import Query, Response
from pydantic import BaseModel, ConfigDict, Field

from ...runtime import ToolError
from .._def import WebKit, WebPart
from ._catalog import (
    ADVISOR_ID,
    SORTS,
    PageContext,
    RankingFilters,
    SelectedAdvisor,
    VisibleAdvisor,
    names_enum,
    page_context_for,
    save_page_context,
)
from ._lookups import (
    MAX_LIMIT,
    SORT_KEYS,
    AdvisorDetail,
    Catalog,
    LookupFailed,
    Ranking,
    Recommendations,
    Reviews,
    catalog_summary,
    get_advisor_detail,
    get_advisor_reviews,
    known_advisors,
    recommend_advisors,
    update_ranking,
)
from ._voice import MAX_SPEECH_CHARS, synthesize

__all__ = ["STATIC", "router", "web_part"]

STATIC = Path(__file__).with_name("static")
_STATUS = {"unknown_advisor": 404, "data_unavailable": 503, "speech_unavailable": 503}
_SCHOOL = names_enum("school")
_MAJOR = names_enum("major")
_SPOKEN = r"^\s*\S[\s\S]*$"
"""Text with something to say (not only spaces)."""
_ID = Annotated[str, PathPart(max_length=12, pattern=ADVISOR_ID)]


def web_part() -> WebPart:
    """The advisor's web part: the site's panels, script and styles, and its routes."""
    return WebPart(static=STATIC, styles=("app.css",), router=router, shared_data="sessions")


class Preferences(BaseModel):
    """A person's preferences, as they say them (zh or en)."""

    model_config = ConfigDict(extra="forbid")

    research_direction: str | None = Field(None, max_length=40)
    personality: str | None = Field(None, max_length=40)
    research_style: str | None = Field(None, max_length=40)
    funding: str | None = Field(None, max_length=40)


class RecommendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    school: str = Field(min_length=1, max_length=40, json_schema_extra=_SCHOOL)
    major: str = Field(min_length=1, max_length=40, json_schema_extra=_MAJOR)
    preferences: Preferences = Field(default_factory=Preferences)
    limit: int = Field(3, ge=1, le=20)


class SpeechRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_SPEECH_CHARS, pattern=_SPOKEN)
    lang: str = Field("zh-CN", max_length=10)


def router(kit: WebKit) -> Any:
    """The routes under /api/advisor, with the web front end's host, principal and errors."""
    Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
    Principal: Any = kit.principal  # noqa: N806
    ApiError = kit.error  # noqa: N806
    router = kit.api_router("advisor")
    wav = {200: {"content": {"audio/wav": {}}, "description": "The text spoken, 16-bit mono WAV."}}

    def refused(error: ToolError, status: dict[str, int]) -> Exception:
        return ApiError(
            status.get(error.error_code, 422), error.error_code, str(error), hint=error.hint, field=error.field
        )

    async def call(work: Any, /, *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(work, *args, **kwargs)
        except ToolError as error:
            raise refused(error, _STATUS) from None

    school_query = Annotated[str, Query(min_length=1, max_length=40, json_schema_extra=_SCHOOL)]
    major_query = Annotated[str, Query(min_length=1, max_length=40, json_schema_extra=_MAJOR)]

    @router.get("/catalog", summary="The schools and majors the site holds")
    async def catalog(host: Host, _: Principal) -> Catalog:
        """Each school with the majors it lists advisors under, the majors, the four rating dimensions, and how many
        advisors and reviews there are (synthetic people)."""
        return await call(catalog_summary, host.env.store.engine)

    @router.get("/ranking", summary="A school's advisors in a major, ranked")
    async def ranking(
        host: Host, _: Principal, school: school_query, major: major_query,
        sort_by: Annotated[str, Query(max_length=12, json_schema_extra={"enum": list(SORTS)})] = "overall",
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    ) -> Ranking:  # fmt: skip
        """422 `unknown_school`, `unknown_major`, `invalid_sort_by`; a school listing nobody in the major: empty."""
        return await call(
            update_ranking, host.env.store.engine, school=school, major=major, sort_by=sort_by, limit=limit
        )

    @router.get("/advisors/{advisor_id}", summary="An advisor's detail and newest reviews")
    async def detail(host: Host, _: Principal, advisor_id: _ID) -> AdvisorDetail:
        """404 `unknown_advisor`."""
        return await call(get_advisor_detail, host.env.store.engine, advisor_id=advisor_id)

    @router.get("/advisors/{advisor_id}/reviews", summary="An advisor's reviews, newest first")
    async def advisor_reviews(
        host: Host, _: Principal, advisor_id: _ID, limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 5
    ) -> Reviews:
        """404 `unknown_advisor`."""
        return await call(get_advisor_reviews, host.env.store.engine, advisor_id=advisor_id, limit=limit)

    @router.post("/recommendations", summary="The advisors that best meet a person's preferences")
    async def recommendations(host: Host, _: Principal, body: RecommendRequest) -> Recommendations:
        """Preferences: research_direction, personality, research_style, funding (as people say them). 422
        `unknown_school`, `unknown_major`, `invalid_preference`."""
        preferences = body.preferences.model_dump()
        return await call(
            recommend_advisors,
            host.env.store.engine,
            school=body.school,
            major=body.major,
            preferences=preferences,
            limit=body.limit,
        )

    @router.get("/page", summary="This session's page context (seed §3.1)")
    async def page(host: Host, principal: Principal) -> PageContext | None:
        """What the page last said it shows; null before it said anything."""
        return await call(page_context_for, host.env.store.engine, principal)

    @router.post("/page", summary="Keep this session's page context (the page sends it before every message)")
    async def keep_page(host: Host, principal: Principal, body: PageContext) -> PageContext:
        """The context as kept: each advisor's name and title are the data's (the page's words are not trusted for
        them). 404 `unknown_advisor` (an id the data does not have); 422 `unknown_school`, `unknown_major`,
        `invalid_sort_by`; nothing is kept on an error."""
        return await call(_keep, host.env.store.engine, principal, body)

    @router.delete("/page", status_code=204, summary="Forget this session's page context")
    async def forget_page(host: Host, principal: Principal) -> Response:
        await call(save_page_context, host.env.store.engine, principal, None)
        return Response(status_code=204)

    @router.get("/speech", summary="Text spoken as WAV (offline synthesis)", response_class=Response, responses=wav)
    async def speech(
        _: Principal,
        text: Annotated[str, Query(min_length=1, max_length=MAX_SPEECH_CHARS, pattern=_SPOKEN)],
        lang: Annotated[str, Query(max_length=10)] = "zh-CN",
    ) -> Response:
        """Mandarin for `zh-CN`, English otherwise. 422 `speech_text_empty`, `speech_text_too_long`; 503
        `speech_unavailable`. Cached by the server and by the browser."""
        return await _spoken(text, lang)

    @router.post("/speech", summary="Text spoken as WAV (offline synthesis)", response_class=Response, responses=wav)
    async def speech_post(_: Principal, body: SpeechRequest) -> Response:
        return await _spoken(body.text, body.lang)

    async def _spoken(text: str, lang: str) -> Response:
        result = await call(synthesize, text, lang=lang)
        return Response(result.wav, media_type="audio/wav", headers={"Cache-Control": "private, max-age=86400"})

    return router


def _keep(engine: Any, principal: str, context: PageContext) -> PageContext:
    filters = context.ranking_filters
    if filters.school and filters.major:
        update_ranking(
            engine, school=filters.school, major=filters.major, sort_by=filters.sort_by, limit=1
        )  # checks the names
    elif filters.sort_by not in SORT_KEYS:
        raise LookupFailed("invalid_sort_by", f"Cannot sort by {filters.sort_by!r}.", field="ranking_filters.sort_by")
    ids = {a.id for a in context.visible_advisors} | set(context.recommended)
    if context.selected_advisor is not None:
        ids.add(context.selected_advisor.id)
    known = known_advisors(engine, ids)
    missing = sorted(ids - set(known))
    if missing:
        raise LookupFailed(
            "unknown_advisor",
            f"No advisor with id {', '.join(missing)}.",
            hint="Send ids from the ranking.",
            field="page_context",
        )
    kept = context.model_copy(update={
        "visible_advisors": [VisibleAdvisor(**{**a.model_dump(), **known[a.id]}) for a in context.visible_advisors],
        "selected_advisor": None if context.selected_advisor is None else SelectedAdvisor(id=context.selected_advisor.id, **known[context.selected_advisor.id]),
        "ranking_filters": RankingFilters(school=filters.school, major=filters.major, sort_by=SORT_KEYS.get(filters.sort_by, "overall")),
    })  # fmt: skip
    save_page_context(engine, principal, kept)
    return kept
