"""A tool's arguments as the engine sees them: the JSON schema generated from the function's type hints, and the
validator the engine applies. Shared by agent definitions (`tool_schemas`), the engine and front ends that run
tools without it (an MCP client's calls)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import Tool

from ._tools import ToolDef

__all__ = ["argument_validator", "json_schema_for"]


def json_schema_for(tool: ToolDef) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, generated from the function's type hints and docstring."""
    return Tool(tool.function, name=tool.name, description=tool.description).tool_def.parameters_json_schema


def argument_validator(tool: ToolDef) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The validator the engine applies to `tool`'s arguments (raises pydantic's ValidationError), for callers
    that run tools without the engine (an MCP client's calls)."""
    return Tool(tool.function, name=tool.name, takes_ctx=False).function_schema.validator.validate_python
