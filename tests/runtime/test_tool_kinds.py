"""Every tool kind has its chain of wrappers (a kind added without one failed every call of its tools)."""

from typing import get_args

from consulta.runtime._tool_wrappers import chain_for
from consulta.runtime._tools import ToolDef, ToolKind


def test_every_tool_kind_has_a_chain_of_wrappers() -> None:
    for kind in get_args(ToolKind):
        tool = ToolDef(name=f"a_{kind}_tool", description="", function=lambda: None, kind=kind)
        assert chain_for(tool), kind
