"""Web sessions: issued here, never guessed. A random token per browser or API client; the principal its runs and asks
belong to.

A token is minted here (`secrets.token_urlsafe(32)`), its sha256 recorded in the store (`Store.add_session`: the
token itself is never stored, logged or put in a URL), and handed to the client once (an HttpOnly, SameSite=Strict
cookie for the page; the response body for API clients, who send `Authorization: Bearer <token>`). A request is in a
session only if its token's sha256 is in the store: a made-up token, however well formed, is no session (401). So a
session survives a server restart, and a server sharing the store accepts it too. Its principal is `web:` + 24 hex
digits of the sha256.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets

from starlette.responses import Response

from ...runtime import Store

__all__ = ["COOKIE", "SessionKeeper", "set_session_cookie"]

COOKIE = "consulta_session"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32,128}")
_ONE_YEAR = 365 * 24 * 3600
_REMEMBERED = 65536
"""Issued tokens a server remembers having seen (the store has them all; a token is never withdrawn)."""


class SessionKeeper:
    """The sessions of a server over `store`: mints tokens, and names the principal of a token that was minted."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._known: set[str] = set()  # digests found in the store: no second look-up for them

    async def mint(self) -> str:
        """A new session's token, recorded (by its sha256) before it is handed out."""
        token = secrets.token_urlsafe(32)
        digest = _digest(token)
        await asyncio.to_thread(self._store.add_session, digest)
        self._remember(digest)
        return token

    async def principal(self, token: str | None) -> str | None:
        """The principal of `token` if it was minted (here or by a server on the same store), else None."""
        if token is None or _TOKEN.fullmatch(token) is None:
            return None
        digest = _digest(token)
        if digest not in self._known:
            if not await asyncio.to_thread(self._store.has_session, digest):
                return None
            self._remember(digest)
        return "web:" + digest[:24]

    def _remember(self, digest: str) -> None:
        if len(self._known) >= _REMEMBERED:
            self._known.clear()
        self._known.add(digest)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def set_session_cookie(response: Response, token: str, *, secure: bool) -> None:
    response.set_cookie(COOKIE, token, max_age=_ONE_YEAR, path="/", httponly=True, samesite="strict", secure=secure)
