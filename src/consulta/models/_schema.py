"""The JSON schema a local model's step is generated under: tool schemas bounded, then joined into one `anyOf`.

The step protocol: the model writes one JSON object, either `{"name": <tool>, "arguments": <its parameters>}` to call
a tool or `{"reply": ...}` to answer (`build_step_schema` makes the schema, `_parsing.parse_step` reads the result,
`_rendering.format_instruction` tells the model). The `name`/`arguments` keys are the JSON Qwen2.5 was trained to put
inside `<tool_call>`, so what the model writes matches the calls its history shows.

Every string, array and mapping is bounded, because a small model in an unbounded string can run until `max_tokens`;
`_grammar.schema_to_gbnf` turns the bounded schema into the grammar llama.cpp samples under.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.tools import ToolDefinition

__all__ = ["BOUNDED_FORMATS", "DEFAULT_BOUNDS", "SchemaBounds", "bound_schema", "build_step_schema", "schema_defs"]


@dataclass(frozen=True, kw_only=True)
class SchemaBounds:
    """Limits written into a grammar schema.

    Every string gets a `maxLength` of `string_chars`, every array a `maxItems` of `array_items`; a mapping
    (`dict[str, X]`) gets keys of at most `string_chars` and at most `array_items` entries. A bound the schema already
    sets is kept (raised to its `minLength` / `minItems` if that is larger). `reply_chars` bounds the plain-text
    `reply` branch.
    """

    string_chars: int = 256
    array_items: int = 16
    reply_chars: int = 1500


DEFAULT_BOUNDS = SchemaBounds()

# Keywords llama-cpp-python's json-schema-to-grammar converter understands; everything else is dropped (titles,
# descriptions and defaults mean nothing to a grammar, and `pattern`/`not`/`if` can fail to convert or be unbounded).
_KEPT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "anyOf",
        "oneOf",
        "allOf",
        "const",
        "enum",
        "$ref",
        "format",
    }
)
BOUNDED_FORMATS = frozenset({"date", "time", "date-time", "uuid"})
"""String formats the converter turns into bounded rules; other formats would make it ignore `maxLength`."""
_SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")


def schema_defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The named sub-schemas of `schema`: its `definitions` and `$defs` merged (`$defs` wins on a clash)."""
    return {**schema.get("definitions", {}), **schema.get("$defs", {})}


def bound_schema(schema: Mapping[str, Any], bounds: SchemaBounds = DEFAULT_BOUNDS) -> dict[str, Any]:
    """A copy of `schema` that `schema_to_gbnf` turns into a grammar with no unbounded string, array or mapping.

    Only the keywords a grammar can use are kept. Objects with declared properties admit no other keys; a mapping
    gets `propertyNames` and `maxProperties`; a type list becomes an `anyOf`; untyped values (`{}`) become a bounded
    scalar. `$defs` (or `definitions`) stay at the root, bounded too, with `$ref`s pointing at `#/$defs/...`. The
    input is not changed.
    """
    defs = schema_defs(schema)
    result = _bound(schema, bounds)
    if defs:
        result["$defs"] = {name: _bound(sub, bounds) for name, sub in defs.items()}
    return result


def _bound(node: Any, bounds: SchemaBounds) -> dict[str, Any]:
    if node is True or not isinstance(node, Mapping) or not node:
        return _any_bounded(bounds)
    if "$ref" in node:
        # A ref with siblings (pydantic puts `description`/`default` next to it) is just the ref for a grammar.
        return {"$ref": _normalise_ref(node["$ref"])}
    types = node.get("type")
    if isinstance(types, list):
        # The converter turns a type list into bare `{"type": t}` alternatives, losing maxLength; split it ourselves.
        return {"anyOf": [_bound({**node, "type": t}, bounds) for t in types]}
    out: dict[str, Any] = {k: v for k, v in node.items() if k in _KEPT_KEYWORDS}
    if "const" in out or "enum" in out:
        return {k: out[k] for k in ("const", "enum") if k in out}
    for key in ("anyOf", "oneOf"):
        if key in out:
            return {"anyOf": [_bound(alt, bounds) for alt in out[key]]}
    if "allOf" in out:
        parts = out.pop("allOf")
        if len(parts) == 1 and not out.get("properties"):
            return _bound(parts[0], bounds)
        out["allOf"] = [_bound(p, bounds) for p in parts]
        return out
    kind = out.get("type")
    if kind == "string" or (kind is None and ("minLength" in out or "maxLength" in out)):
        out["type"] = "string"
        if out.get("format") in BOUNDED_FORMATS:
            return {"type": "string", "format": out["format"]}
        out.pop("format", None)
        out.setdefault("maxLength", max(bounds.string_chars, out.get("minLength", 0)))
        return out
    out.pop("format", None)
    if kind == "array" or "items" in out or "prefixItems" in out:
        out["type"] = "array"
        if "prefixItems" in out:
            out["prefixItems"] = [_bound(item, bounds) for item in out["prefixItems"]]
            out.pop("items", None)
        else:
            out["items"] = _bound(out.get("items", {}), bounds)
            out.setdefault("maxItems", max(bounds.array_items, out.get("minItems", 0)))
        return out
    if kind == "object" or "properties" in out or "additionalProperties" in out:
        properties = {name: _bound(sub, bounds) for name, sub in out.get("properties", {}).items()}
        if properties:
            # Extra keys next to declared ones would be an unbounded `( "," kv )*`; a call never needs them.
            result: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
            if "required" in out:
                result["required"] = list(out["required"])
            return result
        extra = out.get("additionalProperties", True)
        if extra is False:
            return {"type": "object", "additionalProperties": False}
        # A mapping (`dict[str, X]`): bound its keys, values and size (`schema_to_gbnf` reads the last two).
        return {
            "type": "object",
            "additionalProperties": _bound(extra, bounds),
            "propertyNames": {"type": "string", "maxLength": bounds.string_chars},
            "maxProperties": bounds.array_items,
        }
    if kind in _SCALAR_TYPES:
        return {"type": kind}
    return _any_bounded(bounds)


def _any_bounded(bounds: SchemaBounds) -> dict[str, Any]:
    return {
        "anyOf": [
            {"type": "string", "maxLength": bounds.string_chars},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "null"},
        ]
    }


def _normalise_ref(ref: str) -> str:
    return "#/$defs/" + ref[len("#/definitions/") :] if ref.startswith("#/definitions/") else ref


def _rename_refs(node: Any, prefix: str) -> Any:
    """A copy of `node` whose `#/$defs/X` refs point at `#/$defs/<prefix>X` (and `#` at `<prefix>root`)."""
    if isinstance(node, list):
        return [_rename_refs(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: _rename_refs(value, prefix) for key, value in node.items()}
    ref = result.get("$ref")
    if ref == "#":
        result["$ref"] = f"#/$defs/{prefix}root"
    elif isinstance(ref, str) and ref.startswith("#/$defs/"):
        result["$ref"] = f"#/$defs/{prefix}{ref[len('#/$defs/') :]}"
    return result


def _hoist(schema: dict[str, Any], prefix: str, defs: dict[str, Any]) -> dict[str, Any]:
    """Move `schema`'s `$defs` into the shared `defs` under unique names and return the schema without them.

    Needed because each tool's parameters have their own `$defs`, and the grammar converter names rules after the
    last segment of a ref: two tools with a `$defs/Item` each would otherwise share one rule.
    """
    own = schema.pop("$defs", {})
    renamed = _rename_refs(schema, prefix)
    if _has_root_ref(schema):
        defs[f"{prefix}root"] = renamed
    for name, sub in own.items():
        defs[f"{prefix}{name}"] = _rename_refs(sub, prefix)
    return renamed


def _has_root_ref(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_root_ref(item) for item in node)
    if isinstance(node, dict):
        return node.get("$ref") == "#" or any(_has_root_ref(v) for v in node.values())
    return False


def build_step_schema(
    tools: Sequence[ToolDefinition],
    *,
    reply: Literal["text"] | Mapping[str, Any] | None,
    bounds: SchemaBounds = DEFAULT_BOUNDS,
) -> dict[str, Any]:
    """The grammar schema for one step: `anyOf` one `{"name": const, "arguments": params}` branch per tool.

    `reply="text"` adds a `{"reply": string}` branch for a plain answer, a schema adds `{"reply": <that schema>}` for
    a structured final answer, `None` adds none (a tool call is required). Strings and arrays are bounded; each
    tool's `$defs` are renamed apart and gathered at the root. Raises `ValueError` when there is neither a tool nor a
    reply branch.
    """
    branches: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for index, tool in enumerate(tools):
        params = _hoist(bound_schema(tool.parameters_json_schema, bounds), f"t{index}_", defs)
        branches.append(_object({"name": {"const": tool.name}, "arguments": params}))
    if reply == "text":
        branches.append(_object({"reply": {"type": "string", "maxLength": bounds.reply_chars}}))
    elif reply is not None:
        branches.append(_object({"reply": _hoist(bound_schema(reply, bounds), "reply_", defs)}))
    if not branches:
        raise ValueError("a step schema needs at least one tool or a reply branch")
    schema: dict[str, Any] = {"anyOf": branches} if len(branches) > 1 else branches[0]
    if defs:
        schema["$defs"] = defs
    return schema


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
