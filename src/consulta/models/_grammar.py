"""The GBNF grammar llama.cpp samples a step under, from a schema `bound_schema` / `build_step_schema` made.

Built on llama-cpp-python's own json-schema-to-grammar converter (imported on use, so the rest of the package works
without llama-cpp-python), with two changes: bounded strings, arrays and mappings become counted repetitions, and
the JSON is laid out exactly as `json.dumps` lays it out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["schema_to_gbnf"]


def schema_to_gbnf(schema: Mapping[str, Any]) -> str:
    """GBNF for `schema`: JSON laid out as `json.dumps` lays it out; bounded strings, arrays, mappings as `x{m,n}`.

    The root rule is `root`. Give it a schema from `bound_schema` / `build_step_schema`: a node without its bound
    falls back to the converter's generic rules, which repeat without limit. Needs llama-cpp-python.

    llama-cpp-python's converter spells `maxLength: 256` as 256 nested optional groups, which llama.cpp's grammar
    parser rejects (and llama-cpp-python then segfaults on); the counted repetition is the same language in a form
    it parses and samples quickly. The layout is fixed to `json.dumps`'s (`{"a": 1, "b": [2, 3]}`), the way the chat
    template writes a call back into the history (`tojson`), so the model never spends tokens on whitespace.
    """
    from llama_cpp.llama_grammar import PRIMITIVE_RULES, SchemaConverter

    class _Converter(SchemaConverter):
        def visit(self, schema: dict[str, Any], name: str) -> str:  # type: ignore[override]
            kind = schema.get("type")
            rule_name = name or "root"
            if kind == "string" and "maxLength" in schema and not {"pattern", "format", "enum", "const"} & set(schema):
                char = self._add_primitive("char", PRIMITIVE_RULES["char"])
                lo, hi = schema.get("minLength", 0), schema["maxLength"]
                return self._add_rule(rule_name, f'"\\"" {char}{{{lo},{hi}}} "\\"" space')
            if kind == "array" and isinstance(schema.get("items"), dict) and "maxItems" in schema:
                item = self.visit(schema["items"], f"{name}{'-' if name else ''}item")
                lo, hi = schema.get("minItems", 0), schema["maxItems"]
                if hi == 0:
                    body = ""
                elif lo == 0:
                    body = f'({item} ("," space {item}){{0,{hi - 1}}})?'
                else:
                    body = f'{item} ("," space {item}){{{lo - 1},{hi - 1}}}'
                return self._add_rule(rule_name, f'"[" space {body} "]" space')
            if kind == "object" and "maxProperties" in schema and isinstance(schema.get("additionalProperties"), dict):
                key = self.visit(schema.get("propertyNames", {"type": "string"}), f"{name}{'-' if name else ''}key")
                value = self.visit(schema["additionalProperties"], f"{name}{'-' if name else ''}value")
                pair = self._add_rule(f"{name}{'-' if name else ''}kv", f'{key} ":" space {value}')
                hi = schema["maxProperties"]
                body = f'({pair} ("," space {pair}){{0,{hi - 1}}})?' if hi > 0 else ""
                return self._add_rule(rule_name, f'"{{" space {body} "}}" space')
            return super().visit(schema, name)

    converter = _Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    resolved = converter.resolve_refs(json.loads(json.dumps(schema)), "input")
    converter.visit(resolved, "")
    # The converter puts an optional space (`space`) after every token; json.dumps puts exactly one after `:` and
    # `,` and none elsewhere.
    rules = {name: _json_dumps_spacing(body) for name, body in converter._rules.items()}
    rules["space"] = '""'
    if "char" in rules:
        # No raw control characters in strings: json.dumps escapes them, so the history would not match.
        rules["char"] = r'[^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
    return "\n".join(f"{name} ::= {body}" for name, body in sorted(rules.items()))


def _json_dumps_spacing(body: str) -> str:
    return body.replace('":" space', '": "').replace('"," space', '", "')
