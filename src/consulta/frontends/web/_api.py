"""The JSON API of any app: sessions, runs and their event streams, asks, and the page's messages."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Path, Query, Request
from pydantic import WithJsonSchema

from ...i18n import LANGUAGES, catalog, normalize_lang
from ...runtime import PLAN_ASK, AskStatus, ConflictError, RunStatus
from ._deps import Broker, Host, Principal, Sessions
from ._errors import ERROR_RESPONSES, JSON_BODY_RESPONSES, STREAM_ERROR_RESPONSES, ApiError, LocalizedError, said
from ._schemas import AnswerBody, AppInfo, AskOut, Messages, RunOut, SessionOut, StartRun, StreamFrame
from ._stream import EventStream

# Every route is a coroutine: the event broker and the runtime live on the event loop, and a thread hop per request
# would cost more than the store's quick reads it saves.

__all__ = ["router"]

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)

_ID = {"max_length": 64, "pattern": r"^[A-Za-z0-9_.-]+$"}
Id = Annotated[str, Path(**_ID)]
_SEQ = r"^[0-9]{1,18}$"
"""An event's number as the stream's `id:` lines send it."""
_TERMINAL = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)
_PAGE_KEYS = ("web.", "ai.")
"""The page's own messages; the app's page adds its `<app>.web.*` and the words for its steps, `<app>.step.*`."""


# ---- sessions and the page's set-up ----------------------------------------------------------------------------


@router.post("/sessions", status_code=201, tags=["sessions"], summary="Mint a session token for an API client")
async def create_session(sessions: Sessions) -> SessionOut:
    """A new session. Send the token as `Authorization: Bearer <token>`; it is shown only here (the page gets its
    own session as an HttpOnly cookie when it loads). Only tokens minted here are sessions."""
    return SessionOut(token=await sessions.mint())


@router.get("/app", tags=["app"], summary="The app served and its languages")
async def app_info(host: Host) -> AppInfo:
    return AppInfo(
        app=host.app.name,
        main_agent=host.app.main_agent,
        default_lang=normalize_lang(host.settings.lang),
        languages=list(LANGUAGES),
        question_timeout_s=host.options.question_timeout,
    )


@router.get("/i18n/{lang}", tags=["app"], summary="The page's messages in one language")
async def messages(lang: Annotated[str, Path(max_length=16)], host: Host) -> Messages:
    lang_ = lang.replace("_", "-").lower()
    if lang_ != "en" and not lang_.startswith("zh"):
        raise ApiError(
            404,
            "unknown_language",
            said("api.unknown_language", name=lang),
            hint=said("api.unknown_language.hint", languages=", ".join(LANGUAGES)),
        )
    code = normalize_lang(lang_)
    return Messages(
        lang=code,
        messages={
            k: v
            for k, v in catalog(code).items()
            if k.startswith((*_PAGE_KEYS, f"{host.app.name}.web.", f"{host.app.name}.step."))
        },
    )


# ---- runs -------------------------------------------------------------------------------------------------------


@router.post("/runs", status_code=201, tags=["runs"], summary="Start a run of the agent", responses=JSON_BODY_RESPONSES)
async def start_run(body: StartRun, host: Host, principal: Principal) -> RunOut:
    """The run starts at once; follow it with GET /api/runs/{id}/events. `continue_from` (a run of this session
    that has ended) carries its conversation on."""
    if body.continue_from is not None:
        previous = host.run(body.continue_from, principal=principal)
        if previous.status not in _TERMINAL:
            raise LocalizedError(
                ConflictError,
                said("api.conflict.still_running", id=previous.id, status=previous.status.value),
            )
    run = await host.start(body.prompt, principal=principal, lang=body.lang, continue_from=body.continue_from)
    return RunOut.of(run)


@router.get("/runs", tags=["runs"], summary="This session's runs, newest first")
async def list_runs(host: Host, principal: Principal, limit: Annotated[int, Query(ge=1, le=200)] = 50) -> list[RunOut]:
    return [RunOut.of(r) for r in host.runs(principal=principal, limit=limit)]


@router.get("/runs/{run_id}", tags=["runs"], summary="One run")
async def get_run(run_id: Id, host: Host, principal: Principal) -> RunOut:
    return RunOut.of(host.run(run_id, principal=principal))


@router.get(
    "/runs/{run_id}/events",
    tags=["runs"],
    summary="The run's events as server-sent events",
    response_class=EventStream,
    status_code=200,
    # `schema` is the whole stream, `itemSchema` one frame (as FastAPI documents its own event streams).
    responses={
        200: {"model": list[StreamFrame], "description": "The event stream (see below)."},
        **STREAM_ERROR_RESPONSES,
    },
    openapi_extra={
        "responses": {
            "200": {"content": {"text/event-stream": {"itemSchema": {"$ref": "#/components/schemas/StreamFrame"}}}}
        }
    },
)
async def run_events(
    run_id: Id,
    request: Request,
    host: Host,
    broker: Broker,
    principal: Principal,
    after: Annotated[int, Query(ge=0, description="Send the events after this sequence number.")] = 0,
    follow: Annotated[bool, Query(description="Keep the stream open for live events until the run ends.")] = True,
    last_event_id: Annotated[
        str | None,
        WithJsonSchema({"type": "string", "pattern": _SEQ}),  # when sent, an event's `id:` (never "null")
        Header(
            pattern=_SEQ,
            description="Set by EventSource when it reconnects (the last `id` it read); wins over `after`.",
        ),
    ] = None,
) -> EventStream:
    """Each event is `id: <seq>` (1, 2, … per run) and `data: {"seq", "run_id", "type", …fields}`, where `type` is
    run_started, step_started (the model is thinking), model_text, tool_called, tool_returned, ask_opened,
    ask_closed, plan_staged, plan_decided, run_ended or handed_over (after run_ended: the app's next agent goes on in
    run `next_run_id`). The stream replays the events after `Last-Event-ID` (or
    `after`), sends `event: live`, then new events as they happen, with `: ping` comments in between; after
    run_ended (or right after the replay with `follow=false`) it sends `event: end` and closes. `event: reset` first means the client's sequence number
    was unknown here (a server restart lost a step in progress): everything follows from event 1."""
    run = host.run(run_id, principal=principal)
    subscription = broker.subscribe(
        run, after=int(last_event_id) if last_event_id is not None else after, follow=follow
    )
    return EventStream(broker, subscription, heartbeat_s=request.app.state.heartbeat_s)


@router.post("/runs/{run_id}/stop", tags=["runs"], summary="Stop a run")
async def stop_run(run_id: Id, host: Host, principal: Principal) -> RunOut:
    """Cooperative: its pending asks close as cancelled and it ends `cancelled` (a run that has ended is returned as
    it is)."""
    return RunOut.of(await host.stop(run_id, principal=principal))


# ---- asks -------------------------------------------------------------------------------------------------------


@router.get("/asks", tags=["asks"], summary="This session's asks (pending ones by default)")
async def list_asks(
    host: Host,
    principal: Principal,
    run_id: Annotated[str | None, Query(**_ID)] = None,
    status: Annotated[AskStatus | Literal["all"], Query()] = AskStatus.pending,
) -> list[AskOut]:
    asks = host.asks(principal=principal, run_id=run_id, status=None if status == "all" else status)
    return [AskOut.of(a) for a in asks]


@router.get("/asks/{ask_id}", tags=["asks"], summary="One ask")
async def get_ask(ask_id: Id, host: Host, principal: Principal) -> AskOut:
    return AskOut.of(host.ask(ask_id, principal=principal))


@router.post("/asks/{ask_id}/answer", tags=["asks"], summary="Answer an ask", responses=JSON_BODY_RESPONSES)
async def answer_ask(ask_id: Id, body: AnswerBody, host: Host, principal: Principal) -> AskOut:
    """A question takes `{"answers": [...]}`, one per question: an offered option or free text, or for a `multiple`
    question a list of offered options. A plan takes `{"decision": "approve"}` or `{"decision": "reject"}`.
    The run continues at once. 409 if the ask is already closed; 422 if the answer does not fit (nothing changes)."""
    ask = host.ask(ask_id, principal=principal)
    if ask.status != AskStatus.pending:
        raise LocalizedError(ConflictError, said("api.conflict.answer", kind=ask.kind, status=ask.status.value))
    if ask.kind == PLAN_ASK:
        if body.decision is None or body.answers is not None:
            raise ApiError(422, "invalid_answer", said("api.invalid_answer.plan"), field="decision")
        value: object = body.decision
    else:
        if body.answers is None or body.decision is not None:
            raise ApiError(422, "invalid_answer", said("api.invalid_answer.question"), field="answers")
        value = body.answers
    return AskOut.of(await host.answer(ask, value, principal=principal))  # the ask as read above: one read


@router.post("/asks/{ask_id}/cancel", tags=["asks"], summary="Cancel an ask")
async def cancel_ask(ask_id: Id, host: Host, principal: Principal) -> AskOut:
    """The model is told the person cancelled (`question_cancelled` for a question; a plan is not applied)."""
    ask = host.ask(ask_id, principal=principal)
    if ask.status != AskStatus.pending:
        raise LocalizedError(ConflictError, said("api.conflict.cancel", kind=ask.kind, status=ask.status.value))
    return AskOut.of(await host.cancel(ask, principal=principal))
