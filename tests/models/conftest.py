from __future__ import annotations

import pytest
from pydantic_ai.tools import ToolDefinition

from . import _support


@pytest.fixture(scope="module")
def tool_defs() -> list[ToolDefinition]:
    """Tool definitions pydantic-ai generates for a spread of argument types (see `_support.tool_defs`)."""
    return _support.tool_defs()
