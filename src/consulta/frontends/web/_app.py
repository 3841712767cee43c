"""The web front end: a FastAPI app serving one app's page, its JSON API and its runs' event streams."""

from __future__ import annotations

import copy
import gc
import html
import logging
import resource
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from ...apps import AppDef, AppOptions, WebKit, WebPart, resolve_app
from ...config import Settings
from ...runtime import AskPolicy
from .._host import AppHost
from . import _api
from ._access_log import AccessLog
from ._deps import FORBIDDEN_RESPONSE, Host, Principal, shared_principal
from ._errors import ERROR_RESPONSES, ApiError, install_error_handlers
from ._guard import HostGuard, allowed_hosts
from ._sessions import COOKIE, SessionKeeper, set_session_cookie
from ._stream import EventBroker

__all__ = ["WebServer", "create_app", "serve"]

STATIC = Path(__file__).parent / "static"
_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def create_app(
    *,
    app: str | AppDef,
    settings: Settings,
    options: Mapping[str, Any] | AppOptions | None = None,
    ask_policy: AskPolicy = "wait",
    heartbeat_s: float = 15.0,
    client_queue: int = 256,
    hosts: Iterable[str] | None = None,
) -> FastAPI:
    """The web app serving app `app` (a name or its `AppDef`): the page (the chat, with the app's own panels, routes
    and assets if it has a web part), the JSON API and the event streams. Its AppHost is made in the lifespan, on the
    server's event loop, and closed at shutdown. `heartbeat_s`: seconds between keep-alive comments on idle event
    streams; `client_queue`: events a stream client may fall behind before it is dropped (it reconnects and catches
    up). `hosts`: the host names it answers for (`allowed_hosts`; None: the loopback names and
    `CONSULTA_ALLOWED_HOSTS`); any other `Host` is a 400, and a browser's write from another origin a 403 (see
    `_guard`)."""
    app_def = resolve_app(app)  # an unknown app or bad options fail here, not at the first request
    app_options = app_def.parse_options(options)
    part = app_def.web() if app_def.web is not None else None
    broker = EventBroker(client_queue=client_queue)

    @asynccontextmanager
    async def lifespan(api: FastAPI) -> AsyncIterator[None]:
        host = AppHost(app=app_def, settings=settings, options=app_options, ask_policy=ask_policy)
        api.state.host = host
        api.state.sessions = SessionKeeper(host.store)
        host.keep_adopting()  # runs of a server that died continue here
        broker.open(host)
        try:
            yield
        finally:
            broker.close()
            await host.aclose()

    api = FastAPIOffline(  # /docs and /redoc with their assets served here, not from a CDN
        title=f"Consulta · {app_def.name}",
        summary=app_def.description,
        description="Runs of the agent, their events (server-sent events), the asks they pause on, and the app's "
        "own views. Every /api route but /api/sessions, /api/app and /api/i18n needs a session: the page's cookie, "
        "or `Authorization: Bearer <token>` from POST /api/sessions.",
        lifespan=lifespan,
    )
    api.state.broker = broker
    api.state.heartbeat_s = heartbeat_s
    install_error_handlers(api)
    api.include_router(_api.router)
    html_page = _page(app_def.name, part)
    if part is not None:
        if part.router is not None:
            kit = WebKit(
                host=Host,
                principal=Principal,
                shared=shared_principal(part.shared_data),
                error=ApiError,
                responses=ERROR_RESPONSES | FORBIDDEN_RESPONSE,
            )
            api.include_router(part.router(kit))
        api.mount(f"/apps/{app_def.name}/static", StaticFiles(directory=part.static), name=f"{app_def.name}-static")

    @api.get("/", include_in_schema=False)
    async def index(request: Request) -> Response:
        response = Response(html_page, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)
        sessions: SessionKeeper = request.app.state.sessions
        if await sessions.principal(request.cookies.get(COOKIE)) is None:
            set_session_cookie(response, await sessions.mint(), secure=request.url.scheme == "https")
        return response

    api.mount("/static", StaticFiles(directory=STATIC), name="static")
    api.add_middleware(HostGuard, hosts=frozenset(hosts) if hosts is not None else allowed_hosts())
    api.add_middleware(AccessLog)
    return api


def _page(name: str, part: WebPart | None) -> bytes:
    """The page shell (static/page.html) with the app's panels, styles and script in it; the chat alone without."""
    shell = (STATIC / "page.html").read_text(encoding="utf-8")
    quoted = html.escape(name, quote=True)
    base = f"/apps/{quoted}/static"
    if part is None:
        panels, styles, script = "", "", ""
        shell = shell.replace('<main class="layout">', '<main class="layout chat-only">')
    else:
        panels = (part.static / part.panels).read_text(encoding="utf-8") if part.panels else ""
        styles = "\n  ".join(f'<link rel="stylesheet" href="{base}/{html.escape(s, quote=True)}">' for s in part.styles)
        script = f"{base}/{html.escape(part.script, quote=True)}" if part.script else ""
    page = (
        shell.replace("<!--app-panels-->", panels)
        .replace("<!--app-styles-->", styles)
        .replace('data-app=""', f'data-app="{quoted}"')
        .replace('data-app-script=""', f'data-app-script="{script}"')
    )
    return page.encode()


class WebServer(uvicorn.Server):
    """uvicorn's server, ending the app's event streams first when it shuts down (they would hold it open)."""

    async def shutdown(self, sockets: Any = None) -> None:
        broker = getattr(getattr(self.config.app, "state", None), "broker", None)
        if isinstance(broker, EventBroker):
            broker.close()
        await super().shutdown(sockets)


def serve(
    *,
    app: str | AppDef,
    settings: Settings,
    options: Mapping[str, Any] | AppOptions | None,
    host: str,
    port: int,
    access_log: bool = False,
) -> None:
    """Serve app `app` on http://host:port until interrupted (blocking). The server says only what goes wrong,
    unless `access_log`: then its start and one line per request too."""
    _raise_open_files_limit()
    config = uvicorn.Config(
        create_app(app=app, settings=settings, options=options, hosts=allowed_hosts(bind=host)),
        host=host,
        port=port,
        log_config=_log_config(access_log=access_log),
        access_log=False,  # ours logs one line per request, without the query string
        timeout_graceful_shutdown=5,
    )
    # What is loaded by now (modules, the model) lives as long as the server: keep it out of the collector's full
    # passes, which otherwise stall a busy server for 100+ ms (measured by bench/bench_web_answer_latency.py).
    gc.collect()
    gc.freeze()
    WebServer(config).run()


def _log_config(*, access_log: bool) -> dict[str, Any]:
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    level = "INFO" if access_log else "WARNING"
    config["loggers"]["consulta.web"] = {"handlers": ["default"], "level": level, "propagate": False}
    config["loggers"]["uvicorn.error"]["level"] = level  # "Started server process", "Uvicorn running on" …
    return config


def _raise_open_files_limit(wanted: int = 65536) -> None:
    """Each event-stream client holds a socket: allow as many open files as the system lets this process have."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(wanted, hard) if hard != resource.RLIM_INFINITY else wanted
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            logging.getLogger("consulta.web").warning("Could not raise the open files limit from %d.", soft)
