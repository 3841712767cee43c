"""One log line per request: method, path, status, duration. Never headers, cookies or the query string, so no
token can end up in a log (tokens travel only in headers and cookies anyway)."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AccessLog", "logger"]

logger = logging.getLogger("consulta.web")


class AccessLog:
    """ASGI middleware (not Starlette's BaseHTTPMiddleware, which would buffer the event streams)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            logger.info("%s %s %d %.1fms", scope["method"], scope["path"], status or 500, elapsed)
