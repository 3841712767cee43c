"""What a route gets from the app: the AppHost, the event broker, and the caller's principal (or a 401). All are
coroutines, so FastAPI calls them on the event loop rather than on a worker thread."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from .._host import AppHost
from ._errors import ApiError
from ._sessions import COOKIE, principal_of, valid_token
from ._stream import EventBroker

__all__ = ["Broker", "Host", "Principal"]

_bearer = HTTPBearer(auto_error=False, description="The token from POST /api/sessions.")
_cookie = APIKeyCookie(name=COOKIE, auto_error=False, description="The page's session cookie (set when / is loaded).")


async def _host(request: Request) -> AppHost:
    return request.app.state.host


async def _broker(request: Request) -> EventBroker:
    return request.app.state.broker


async def _principal(
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    cookie: Annotated[str | None, Depends(_cookie)],
) -> str:
    token = bearer.credentials if bearer is not None else cookie
    if not valid_token(token):
        raise ApiError(
            401,
            "no_session",
            "This request has no session: runs and asks belong to the session that made them.",
            hint="Open the page (it sets a session cookie), or POST /api/sessions and send "
            "`Authorization: Bearer <token>` with every request.",
        )
    return principal_of(token)


Host = Annotated[AppHost, Depends(_host)]
Broker = Annotated[EventBroker, Depends(_broker)]
Principal = Annotated[str, Depends(_principal)]
