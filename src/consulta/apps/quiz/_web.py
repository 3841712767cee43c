"""quiz's part of the web API: a person's adaptive test, one item at a time (`_cat_sessions`). A test belongs to the
web session that started it: another session's test is a 404, exactly like an unknown one. Errors are the front
end's structured body (`error_code`, `message` in the reader's language: `?lang=` or `Accept-Language`), and change
nothing.

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
from collections.abc import Callable
from importlib import resources
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ...i18n import normalize_lang
from .._def import AppView, WebKit, WebPart
from ._cat_sessions import AnswerResult, ProfileForm, SessionView, TestSessions, ability_svg, app_sessions

__all__ = ["StartTest", "TestAnswer", "default_sessions", "make_router", "router", "web_part"]

_LINKS = {
    name: {"operationId": operation, "parameters": {"test_id": "$response.body#/id"}, "description": words}
    for name, operation, words in (
        ("view", "quiz_test", "The test: the item shown, or its results."),
        ("answer", "quiz_answer", "Answer the item shown."),
        ("plot", "quiz_plot", "The estimate after each item, as an SVG image."),
        ("abandon", "quiz_abandon", "Give the test up."),
    )
}
"""Where a test's id leads (OpenAPI links: clients and stateful API tests follow them)."""
_PROFILE_SCHEMA = ("properties", "required", "additionalProperties")
"""What the API's docs say of the profile (validated by `parse_profile`, so a refusal is in the reader's words)."""
TestId = Annotated[str, Path(min_length=1, max_length=64, description="The test's id (from POST /api/quiz/tests)")]


class StartTest(BaseModel):
    """A new test: the person's profile (its fields as `ProfileForm` says: a field out of bounds is a 422
    `invalid_profile` naming it), the language of its items, and whether a test in progress is given up for it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    profile: dict[str, Any] = Field(
        json_schema_extra={k: v for k, v in ProfileForm.model_json_schema().items() if k in _PROFILE_SCHEMA}
    )
    lang: str = Field("en", max_length=10, description="en or zh-CN: the items' language")
    replace_open: bool = Field(False, description="Give up the test in progress (its answers are kept) and start anew")


class TestAnswer(BaseModel):
    """An answer to the item shown: its position and question id (as the test gave them), and the answer (a choice's
    text for multiple choice, true or false, or free text for a short answer)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    position: int = Field(ge=1, le=1000)
    question_id: str = Field(min_length=1, max_length=64)
    answer: str = Field(max_length=4000)


class SavedProfile(BaseModel):
    """The profile this session saved last (null before its first test)."""

    profile: ProfileForm | None


def default_sessions(host: AppView) -> TestSessions:
    """Tests over the host's store, from the shipped bank; short answers graded by the host's model (seed tool 6, with
    its fallback)."""
    env = host.env
    return app_sessions(env.store.engine, model=lambda: env.resolve_model(env.model))


def make_router(*, sessions: Callable[[AppView], TestSessions] = default_sessions) -> Callable[[WebKit], APIRouter]:
    """The router factory of quiz's web part, its tests made by `sessions(host)` (once per server)."""

    def router(kit: WebKit) -> APIRouter:
        """The routes under /api/quiz, with the web front end's host, principal and errors."""
        Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
        Principal: Any = kit.principal  # noqa: N806
        router = kit.api_router("quiz")
        made: dict[int, TestSessions] = {}

        def tests(host: AppView) -> TestSessions:
            key = id(host)
            if key not in made:
                made.clear()  # one host per server; a new one (a restarted lifespan) gets its own
                made[key] = sessions(host)
            return made[key]

        @router.get("/profile", summary="The profile this session saved last")
        async def profile(host: Host, principal: Principal) -> SavedProfile:
            """The seed's profile fields (self_level, years_experience, job_role, duty, interests) as given for this
            session's last test, to fill the form with; null before the first."""
            return SavedProfile(profile=await asyncio.to_thread(tests(host).saved_profile, principal))

        @router.get("/tests/current", summary="The test this session has in progress, if any")
        async def current(host: Host, principal: Principal) -> SessionView | None:
            """Where a person comes back to after a reload or a restart: the item shown, the answers so far (null when
            no test is in progress)."""
            return await asyncio.to_thread(tests(host).open_test, principal)

        @router.post(
            "/tests",
            status_code=201,
            summary="Start a test: the profile, then the first item",
            responses={201: {"links": _LINKS}},
        )
        async def start(body: StartTest, host: Host, principal: Principal) -> SessionView:
            """The profile is checked (422 `invalid_profile`, naming the field) and saved as this session's; the
            test's first item is chosen near the level the person gave. 409 `test_in_progress` when a test of this
            session is in progress (unless `replace_open`); 409 `no_items` when the bank has no items in `lang`."""
            lang = normalize_lang(body.lang)
            return await asyncio.to_thread(
                tests(host).start, principal, body.profile, lang=lang, replace_open=body.replace_open
            )

        @router.get(
            "/tests/{test_id}",
            summary="One test of this session: the item shown, or the results",
            operation_id="quiz_test",
        )
        async def one(test_id: TestId, host: Host, principal: Principal) -> SessionView:
            """In progress: the item to answer now. Finished: θ with its SE, the stop reason, the estimate after each
            item (`trajectory`) and every item reviewed with its answer, the right answer and the explanation."""
            return await asyncio.to_thread(tests(host).view, principal, test_id)

        @router.post("/tests/{test_id}/answers", summary="Answer the item shown", operation_id="quiz_answer")
        async def answer(test_id: TestId, body: TestAnswer, host: Host, principal: Principal) -> AnswerResult:
            """Scored (multiple choice and true/false in code; short answers by the model, seed tool 6, its fallback
            score 50 when the model fails), recorded with the next item chosen, in one transaction. The same answer
            sent again gives the recorded result back (`repeated`: counted once). 409 `not_current_item` (not the
            item shown), `already_answered` (a different answer to an answered item), `test_finished`; 422
            `empty_answer`, `not_a_choice`, `answer_too_long`. Nothing changes on an error."""
            return await tests(host).answer(
                principal, test_id, position=body.position, question_id=body.question_id, answer=body.answer
            )

        @router.post(
            "/tests/{test_id}/abandon", summary="Give a test up (its answers are kept)", operation_id="quiz_abandon"
        )
        async def abandon(test_id: TestId, host: Host, principal: Principal) -> SessionView:
            return await asyncio.to_thread(tests(host).abandon, principal, test_id)

        @router.get(
            "/tests/{test_id}/plot.svg",
            summary="The ability estimate after each item, with its uncertainty (SVG)",
            operation_id="quiz_plot",
            response_class=Response,
            responses={200: {"content": {"image/svg+xml": {}}, "description": "An SVG image."}},
        )
        async def plot(
            test_id: TestId,
            host: Host,
            principal: Principal,
            lang: Annotated[
                str | None, Query(max_length=10, description="The words' language (else the test's)")
            ] = None,
        ) -> Response:
            """θ after each answer (0: the prior), a band of ± one standard error, each answer's point green
            (correct) or red."""
            view = await asyncio.to_thread(tests(host).view, principal, test_id)
            svg = ability_svg(view.trajectory, lang=normalize_lang(lang or view.lang))
            return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})

        return router

    return router


router = make_router()
"""quiz's web routes (`WebPart.router`)."""


def web_part(*, sessions: Callable[[AppView], TestSessions] = default_sessions) -> WebPart:
    """quiz's part of the web page (`AppDef.web`): the test's panel, its script and styles, and its routes."""
    static = FilePath(str(resources.files(__package__).joinpath("static")))
    return WebPart(static=static, styles=("app.css",), router=make_router(sessions=sessions))
