"""Consulta tools as MCP tools: the agent's own definitions (name, description, JSON schema), its own argument
validation, and results in the seeds' JSON shape (`"ok": false` marks an MCP error result the model reads)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastmcp.tools.base import InputRequiredToolResult, Tool, ToolResult
from mcp_types import InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import to_jsonable_python

from ...i18n import catalog

__all__ = ["Served", "ServedTool", "served_tool", "tool_title"]

Served = dict[str, Any] | InputRequiredResult
Serve = Callable[[dict[str, Any]], Awaitable[Served]]


class ServedTool(Tool):
    """One tool as the MCP client sees it; `serve` does the work and returns the seeds' JSON result."""

    serve: Annotated[SkipJsonSchema[Serve], Field(exclude=True)]

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        result = await self.serve(arguments)
        if isinstance(result, InputRequiredResult):  # 2026-07-28: the client asks its user, then calls again
            return InputRequiredToolResult(result)
        data = to_jsonable_python(result, fallback=str)
        structured = data if isinstance(data, dict) else {"result": data}
        return ToolResult(
            content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structured_content=structured,
            is_error=structured.get("ok") is False,
        )


def tool_title(name: str, lang: str) -> str:
    """The tool's display title in `lang` (`mcp.tool.<name>`), or its name for a tool the catalogs do not know."""
    return catalog(lang).get(f"mcp.tool.{name}", name)


def served_tool(
    *, name: str, description: str, parameters: dict[str, Any], lang: str, serve: Serve, read_only: bool = False
) -> ServedTool:
    return ServedTool(
        name=name,
        title=tool_title(name, lang),
        description=description,
        parameters=parameters,
        annotations=ToolAnnotations(read_only_hint=read_only),
        serve=serve,
    )
