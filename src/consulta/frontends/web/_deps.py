"""What a route gets from the app: the AppHost, the event broker, the server's sessions, and the caller's principal
(or a 401: no token, or one this server's store never issued) — for an app's shared data, only if the app lets
sessions touch it (else a 403). All are coroutines, so FastAPI calls them on the event loop rather than on a worker
thread."""

from __future__ import annotations

from typing import Annotated, Any, assert_never

from fastapi import Depends, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from ...apps import SharedData
from .._host import AppHost
from ._errors import ApiError, said
from ._schemas import ErrorBody
from ._sessions import COOKIE, SessionKeeper
from ._stream import EventBroker

__all__ = ["FORBIDDEN_RESPONSE", "Broker", "Host", "Principal", "Sessions", "shared_principal"]

_bearer = HTTPBearer(auto_error=False, description="The token from POST /api/sessions.")
_cookie = APIKeyCookie(name=COOKIE, auto_error=False, description="The page's session cookie (set when / is loaded).")


async def _host(request: Request) -> AppHost:
    return request.app.state.host


async def _broker(request: Request) -> EventBroker:
    return request.app.state.broker


async def _sessions(request: Request) -> SessionKeeper:
    return request.app.state.sessions


async def _principal(
    sessions: Annotated[SessionKeeper, Depends(_sessions)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    cookie: Annotated[str | None, Depends(_cookie)],
) -> str:
    principal = await sessions.principal(bearer.credentials if bearer is not None else cookie)
    if principal is None:
        raise ApiError(401, "no_session", said("api.no_session"), hint=said("api.no_session.hint"))
    return principal


Host = Annotated[AppHost, Depends(_host)]
Broker = Annotated[EventBroker, Depends(_broker)]
Sessions = Annotated[SessionKeeper, Depends(_sessions)]
Principal = Annotated[str, Depends(_principal)]


FORBIDDEN_RESPONSE: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "The app does not let web sessions read or change this shared data."}
}


def shared_principal(shared: SharedData) -> Any:
    """The dependency annotation of a route over an app's shared data (`WebKit.shared`): the caller's principal if the
    app's `shared` declaration lets a session in, else a 403 (and a 401 first for no session, as everywhere)."""
    match shared:
        case "sessions":
            return Principal
        case "none":

            async def refused(_: Principal) -> str:
                raise ApiError(403, "not_allowed", said("api.not_allowed"), hint=said("api.not_allowed.hint"))

            return Annotated[str, Depends(refused)]
        case _:
            assert_never(shared)
