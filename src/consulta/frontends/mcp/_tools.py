"""Consulta tools as MCP tools: the agent's own definitions (name, description, JSON schema), its own argument
validation, and results in the seeds' JSON shape (`"ok": false` marks an MCP error result the model reads)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastmcp.tools.base import InputRequiredToolResult, Tool, ToolResult
from mcp_types import InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from pydantic.json_schema import SkipJsonSchema
from pydantic_ai import Tool as EngineTool
from pydantic_core import to_jsonable_python

from ...i18n import catalog
from ...runtime import ToolDef
from ...runtime._engine import _invalid_arguments

__all__ = ["Served", "ServedTool", "argument_check", "invalid_arguments", "served_tool", "tool_exception_result", "tool_title"]

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


def argument_check(tool: ToolDef) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The validator the agent's engine uses for `tool`'s arguments (raises pydantic's ValidationError)."""
    return EngineTool(tool.function, name=tool.name, takes_ctx=False).function_schema.validator.validate_python


def invalid_arguments(tool_name: str, error: ValidationError) -> dict[str, Any]:
    """The `invalid_arguments` result the agent gets for the same mistake."""
    return _invalid_arguments(tool_name, error)


def tool_exception_result(tool_name: str, error: Exception) -> dict[str, Any]:
    """A tool's bug, reported like the agent's engine reports it (the server goes on)."""
    return {
        "ok": False,
        "error_code": "tool_exception",
        "message": f"{tool_name} failed: {type(error).__name__}: {error}",
        "_hint": "Check the arguments; if they are right, tell the user the tool failed.",
    }
