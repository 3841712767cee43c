"""Web sessions: a random token per browser or API client; the principal its runs and asks belong to.

The token is minted here (`secrets.token_urlsafe(32)`), handed to the client once (an HttpOnly, SameSite=Strict
cookie for the page; the response body for API clients, who send `Authorization: Bearer <token>`), and never
stored, logged or put in a URL: the server keeps nothing but what it derives from it, `web:` + 24 hex digits of its
sha256. So a session survives a server restart, and any token, minted here or not, sees only the runs made with it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import TypeGuard

from starlette.responses import Response

__all__ = ["COOKIE", "mint_token", "principal_of", "set_session_cookie", "valid_token"]

COOKIE = "consulta_session"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
_ONE_YEAR = 365 * 24 * 3600


def mint_token() -> str:
    return secrets.token_urlsafe(32)


def principal_of(token: str) -> str:
    return "web:" + hashlib.sha256(token.encode("ascii")).hexdigest()[:24]


def valid_token(token: str | None) -> TypeGuard[str]:
    """Whether `token` has the form of a minted token (anything else is no session at all)."""
    return token is not None and _TOKEN.fullmatch(token) is not None


def set_session_cookie(response: Response, token: str, *, secure: bool) -> None:
    response.set_cookie(COOKIE, token, max_age=_ONE_YEAR, path="/", httponly=True, samesite="strict", secure=secure)
