"""Tool definitions as pydantic-ai builds them, for the local model's tests."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.tools import ToolDefinition


class Position(BaseModel):
    box: int
    slot: int
    note: str | None = None


def tool_defs() -> list[ToolDefinition]:
    """Tool definitions pydantic-ai generates for a spread of argument types."""
    agent = Agent("test")

    @agent.tool_plain
    def query_inventory(cell_line: str | None = None, short_name: str | None = None) -> str:
        """Find vials by cell line or short name."""
        return ""

    @agent.tool_plain
    def move_vials(positions: list[Position], reason: str, when: date, mode: Literal["copy", "move"]) -> str:
        """Move vials.

        Args:
            positions: where the vials are now.
            reason: why they move.
            when: the day of the move.
            mode: copy or move.
        """
        return ""

    @agent.tool_plain
    def tag(labels: dict[str, int], extra: Any, other: Position) -> str:
        """Tag things."""
        return ""

    toolset = agent.toolsets[0]
    return [tool.tool_def for tool in toolset.tools.values()]  # type: ignore[attr-defined]


def walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in a JSON schema, the root first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)
