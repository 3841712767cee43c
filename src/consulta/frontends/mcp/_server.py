"""The FastMCP server of one app, and running it over stdio or streamable HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastmcp import FastMCP

from ...apps import AppDef, AppOptions, resolve_app
from ...config import Settings
from .._host import AppHost
from ._frontend import McpFrontEnd

__all__ = ["build_server", "run_mcp"]


def build_server(
    *, app: str | AppDef, settings: Settings, options: Mapping[str, Any] | AppOptions | None = None
) -> FastMCP:
    """A FastMCP server exposing app `app`'s tools (see the package docstring). Sessions end when it stops."""
    app = resolve_app(app)
    front = McpFrontEnd(AppHost(app=app, settings=settings, options=options))

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await front.aclose()

    server = FastMCP(name=f"consulta-{app.name}", instructions=front.instructions, lifespan=lifespan)
    for tool in front.tools():
        server.add_tool(tool)
    return server


def run_mcp(
    *,
    app: str | AppDef,
    settings: Settings,
    options: Mapping[str, Any] | AppOptions | None,
    transport: Literal["stdio", "http"],
    host: str,
    port: int,
) -> None:
    """Serve app `app` until stopped: over stdio (a client started this process; stdout carries only the protocol,
    logs go to stderr) or streamable HTTP on `host`:`port` (path `/mcp`)."""
    server = build_server(app=app, settings=settings, options=options)
    if transport == "stdio":
        server.run("stdio", show_banner=False)
    else:
        server.run("http", show_banner=False, host=host, port=port)
