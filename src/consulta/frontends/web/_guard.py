"""The server answers only its own hosts, and a browser changes something only from the server's own page.

A page on another site can reach a server on 127.0.0.1 by pointing its own name at it (DNS rebinding: the browser
then sends that name as `Host`) or by posting to it across sites. So, before any route: a `Host` that is not one of
the server's names (the loopback names, the address it is bound to, `CONSULTA_ALLOWED_HOSTS`) is a 400; a request
that changes something (any method but GET, HEAD, OPTIONS) and carries another site's `Origin` is a 403 (a browser
names the page a write comes from). The page's session cookie is SameSite=Strict, so another site's page never
sends it at all. An API client (no `Origin`, a bearer token) is not a browser and is let through, sessions minted
included.

Starlette's `TrustedHostMiddleware` checks the host alone and answers in plain English text; this answers with the
API's error body in the request's language, and checks the origin too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ._errors import ApiError, error_response, said

__all__ = ["ALLOWED_HOSTS_ENV", "LOOPBACK_HOSTS", "HostGuard", "allowed_hosts"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ALLOWED_HOSTS_ENV = "CONSULTA_ALLOWED_HOSTS"
"""More host names the server answers for, comma-separated (e.g. the name of the machine it serves a LAN from)."""
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_ANY_ADDRESS = ("", "0.0.0.0", "::")


def allowed_hosts(*, bind: str | None = None, extra: Iterable[str] | None = None) -> frozenset[str]:
    """The host names served: the loopback ones, `bind` (the address the server listens on, unless it is every
    address) and `extra` (None: `CONSULTA_ALLOWED_HOSTS`)."""
    named = os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if extra is None else list(extra)
    hosts = {*LOOPBACK_HOSTS, *(h.strip().lower() for h in named if h.strip())}
    if bind is not None and bind not in _ANY_ADDRESS:
        hosts.add(f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind.lower())
    return frozenset(hosts)


def host_name(header: str | None) -> str | None:
    """The name of a `Host` header, without its port (`[::1]:8000` → `[::1]`), lower-case; None if it has none."""
    if not header:
        return None
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[: end + 1] if end > 0 else None
    return header.rsplit(":", 1)[0] if ":" in header else header


class HostGuard:
    """ASGI middleware: the host and origin checks above (`hosts`: from `allowed_hosts`)."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str]) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        sent = request.headers.get("host")
        origin = request.headers.get("origin")
        if host_name(sent) not in self.hosts:
            refusal = ApiError(
                400,
                "invalid_host",
                said("api.invalid_host", host=(sent or "")[:100]),
                hint=said("api.invalid_host.hint"),
            )
        elif (
            request.method not in _SAFE
            and origin is not None
            and origin.lower() != f"{request.url.scheme}://{sent}".lower()
        ):
            refusal = ApiError(
                403,
                "cross_origin",
                said("api.cross_origin", origin=(origin or "?")[:100]),
                hint=said("api.cross_origin.hint"),
            )
        else:
            await self.app(scope, receive, send)
            return
        await error_response(request, refusal)(scope, receive, send)
