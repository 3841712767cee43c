"""The local model's step schema: tool schemas bounded and joined into one `anyOf`, and the grammar made from it."""

from __future__ import annotations

import copy
import json
import re

from pydantic_ai.tools import ToolDefinition

from consulta.models._grammar import schema_to_gbnf
from consulta.models._schema import SchemaBounds, bound_schema, build_step_schema

from ._support import walk

# ---- bounding -------------------------------------------------------------------------------------------------------


def test_every_string_and_array_is_bounded_and_the_input_untouched(tool_defs: list[ToolDefinition]) -> None:
    for tool in tool_defs:
        original = copy.deepcopy(tool.parameters_json_schema)
        bounded = bound_schema(tool.parameters_json_schema, SchemaBounds(string_chars=40, array_items=5))
        assert tool.parameters_json_schema == original
        for node in walk(bounded):
            if node.get("type") == "string" and "format" not in node:
                assert node["maxLength"] <= 40, node
            if node.get("type") == "array":
                assert node["maxItems"] == 5 and "items" in node
            if node.get("type") == "object" and "properties" not in node and node.get("additionalProperties"):
                assert node["maxProperties"] == 5
            assert not {"title", "description", "default", "pattern"} & set(node), node


def test_bounds_the_schema_already_has_are_kept() -> None:
    bounded = bound_schema(
        {
            "type": "object",
            "properties": {"s": {"type": "string", "maxLength": 3}, "a": {"type": "array", "maxItems": 2}},
        }
    )
    assert bounded["properties"]["s"]["maxLength"] == 3
    assert bounded["properties"]["a"]["maxItems"] == 2


def test_type_lists_untyped_values_and_refs() -> None:
    bounded = bound_schema(
        {
            "type": "object",
            "properties": {
                "x": {"type": ["string", "null"]},
                "any": {},
                "p": {"$ref": "#/definitions/P", "description": "where"},
            },
            "definitions": {"P": {"type": "object", "properties": {"n": {"type": "string"}}}},
        }
    )
    props = bounded["properties"]
    assert props["x"] == {"anyOf": [{"type": "string", "maxLength": 256}, {"type": "null"}]}
    assert {"type": "string", "maxLength": 256} in props["any"]["anyOf"]
    assert props["p"] == {"$ref": "#/$defs/P"}
    assert bounded["$defs"]["P"]["properties"]["n"]["maxLength"] == 256


def test_step_schema_has_one_branch_per_tool_and_a_reply(tool_defs: list[ToolDefinition]) -> None:
    schema = build_step_schema(tool_defs, reply="text", bounds=SchemaBounds(reply_chars=99))

    branches = schema["anyOf"]
    names = [b["properties"]["name"]["const"] for b in branches[:-1]]
    assert names == ["query_inventory", "move_vials", "tag"]
    assert all(b["required"] == ["name", "arguments"] for b in branches[:-1])
    assert branches[-1]["properties"] == {"reply": {"type": "string", "maxLength": 99}}


def test_step_schema_without_reply_requires_a_call(tool_defs: list[ToolDefinition]) -> None:
    schema = build_step_schema(tool_defs[:1], reply=None)
    assert schema["properties"]["name"] == {"const": "query_inventory"}
    assert "reply" not in json.dumps(schema)


def test_defs_of_different_tools_do_not_collide() -> None:
    def tool(name: str, field_type: str) -> ToolDefinition:
        return ToolDefinition(
            name=name,
            parameters_json_schema={
                "type": "object",
                "properties": {"item": {"$ref": "#/$defs/Item"}},
                "$defs": {"Item": {"type": "object", "properties": {"v": {"type": field_type}}}},
            },
        )

    schema = build_step_schema([tool("a", "string"), tool("b", "integer")], reply=None)

    assert set(schema["$defs"]) == {"t0_Item", "t1_Item"}
    refs = [n["$ref"] for n in walk(schema) if "$ref" in n]
    assert refs == ["#/$defs/t0_Item", "#/$defs/t1_Item"]
    gbnf = schema_to_gbnf(schema)
    assert re.search(r'"\\"v\\"" space ": " integer', gbnf)  # t1's Item kept its own integer field


def test_grammar_has_no_unbounded_repetition(tool_defs: list[ToolDefinition]) -> None:
    gbnf = schema_to_gbnf(build_step_schema(tool_defs, reply="text"))

    assert "char{0,256}" in gbnf and "char{0,1500}" in gbnf
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines())
    # Laid out like json.dumps, the way the template writes calls back: one space after ':' and ',', none elsewhere.
    assert rules["space"] == '""'
    assert '": "' in gbnf and '", "' in gbnf and '":" space' not in gbnf
    # The converter's generic JSON rules (unbounded strings, arrays, objects) must not be reachable.
    assert not {"value", "array", "object", "string"} & set(rules)
    for name, body in rules.items():
        bare = re.sub(r'\[[^\]]*\]|"(?:[^"\\]|\\.)*"', "", body)  # character classes and literals aside
        assert not re.search(r"[*+]", bare), (name, body)
