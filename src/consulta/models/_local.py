"""The embedded default model: a GGUF run in process by llama.cpp (llama-cpp-python), as a pydantic-ai `Model`.

How a step works:

* The conversation is rendered with the GGUF's own chat template. The system message is the stable prefix of
  every step: system prompts and instructions, then a compact list of the tools, then one line on the reply format.
  Assistant tool calls go back into the history as OpenAI-style `tool_calls` and tool results as role `tool`, which
  the Qwen2.5 template renders as its native `<tool_call>` / `<tool_response>` blocks.
* When tools are offered, generation is constrained by a JSON-schema grammar: an `anyOf` over
  `{"name": <tool>, "arguments": <its parameters>}` for every callable tool, plus `{"reply": ...}` when the agent may
  answer without a tool. Every string and array is bounded (`maxLength` / `maxItems`), because a small model in an
  unbounded string can run until `max_tokens`. The `name`/`arguments` keys are the JSON Qwen2.5 was trained to put
  inside `<tool_call>`, so what the model writes matches the calls its history shows.
* One `llama_cpp.Llama` per `LocalModel`, kept across steps and runs: llama-cpp-python keeps the KV cache of its last
  prompt and only evaluates the tokens after the longest common token prefix, so step 2 of a run pays for the tool
  call (as the template writes it back) and its result, not for the system prompt again. `LocalModel.last_stats`
  reports what each step evaluated.
* llama.cpp blocks and is not thread-safe: calls are serialised by a lock and run on one dedicated thread, so the
  event loop stays free; a cancelled request stops generating at the next token.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelContextWindowExceededError
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models._tool_choice import resolve_tool_choice  # the same resolution every adapter uses
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = [
    "LocalModel",
    "RenderedRequest",
    "DEFAULT_BOUNDS",
    "SchemaBounds",
    "StepStats",
    "bound_schema",
    "build_step_schema",
    "describe_tools",
    "parse_step",
    "render_messages",
    "schema_to_gbnf",
]

ChatMessage = dict[str, Any]


# --------------------------------------------------------------------------------------------------------------------
# JSON schema for one step
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SchemaBounds:
    """Limits written into a grammar schema: every string gets a `maxLength`, every array a `maxItems`.

    A bound the schema already sets is kept. `reply_chars` bounds the plain-text `reply` branch.
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
# Formats the converter turns into bounded rules; other formats would make it ignore maxLength.
_BOUNDED_FORMATS = frozenset({"date", "time", "date-time", "uuid"})
_SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")


def bound_schema(schema: Mapping[str, Any], bounds: SchemaBounds = DEFAULT_BOUNDS) -> dict[str, Any]:
    """A copy of `schema` that llama.cpp's grammar converter turns into a grammar with no unbounded string or array.

    `$defs` (or `definitions`) stay at the root, bounded too, with `$ref`s pointing at `#/$defs/...`. The input is not
    changed. Untyped values (`{}`) become a bounded scalar.
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
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
        if out.get("format") in _BOUNDED_FORMATS:
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
    a structured final answer, `None` adds none (a tool call is required). Strings and arrays are bounded.
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


def schema_to_gbnf(schema: Mapping[str, Any]) -> str:
    """GBNF for `schema`: JSON laid out exactly as `json.dumps` does, bounded strings and arrays as `x{m,n}`.

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


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


# --------------------------------------------------------------------------------------------------------------------
# The system prompt's tool list and reply format
# --------------------------------------------------------------------------------------------------------------------


def describe_tools(tools: Sequence[ToolDefinition]) -> str:
    """A compact tool list for the system prompt: one signature line per tool, its description, its argument notes.

    Much shorter than the tools' JSON schemas (prompt processing is the slow part on a CPU); the grammar enforces
    the exact schema anyway.
    """
    lines = ["# Tools"]
    for tool in tools:
        schema = tool.parameters_json_schema
        defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        required = set(schema.get("required", []))
        props: dict[str, Any] = schema.get("properties", {})
        signature = ", ".join(_param_label(n, s, n in required, defs, 0) for n, s in props.items())
        lines.append(f"{tool.name}({signature})")
        if tool.description:
            lines.append(f"  {_one_paragraph(tool.description)}")
        for name, sub in props.items():
            if isinstance(sub, Mapping) and sub.get("description"):
                lines.append(f"  {name}: {_one_paragraph(sub['description'])}")
    return "\n".join(lines)


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def _param_label(name: str, schema: Any, required: bool, defs: Mapping[str, Any], depth: int) -> str:
    label = _type_label(schema, defs, depth, drop_null=not required)
    return f"{name}{'' if required else '?'}: {label}"


def _type_label(schema: Any, defs: Mapping[str, Any], depth: int, *, drop_null: bool = False) -> str:
    if not isinstance(schema, Mapping) or not schema:
        return "any"
    if ref := schema.get("$ref"):
        name = ref.rsplit("/", 1)[-1]
        target = defs.get(name)
        return _type_label(target, defs, depth + 1) if target is not None and depth < 2 else name
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    kind = schema.get("type")
    if alternatives is None and isinstance(kind, list):
        alternatives = [{**schema, "type": t} for t in kind]
    if alternatives:
        labels = [_type_label(a, defs, depth) for a in alternatives]
        if drop_null and len(labels) > 1:
            labels = [label for label in labels if label != "null"]
        return "|".join(dict.fromkeys(labels))
    if kind == "array":
        return f"list[{_type_label(schema.get('items', {}), defs, depth)}]"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props or depth >= 2:
            return "object"
        required = set(schema.get("required", []))
        inner = ", ".join(_param_label(n, s, n in required, defs, depth + 1) for n, s in props.items())
        return "{" + inner + "}"
    if kind == "string" and schema.get("format") in _BOUNDED_FORMATS:
        return str(schema["format"])
    return str(kind) if kind else "any"


_CALL_FORMAT = '{"name": <tool>, "arguments": {...}}'


def _format_instruction(reply: Literal["text"] | Mapping[str, Any] | None) -> str:
    # Measured on Qwen2.5-Coder-1.5B: this wording with bare JSON calls chose the right tool in 4 of 4 probes;
    # Qwen's own `<tool_call>` tags around the call (forced by the grammar) made it answer without a tool in 3 of 4.
    if reply is None:
        return f"Reply with one JSON object, {_CALL_FORMAT}, to call one tool."
    answer = '{"reply": "<your answer>"}' if reply == "text" else '{"reply": {...}} with the final result'
    return f"Reply with one JSON object: {_CALL_FORMAT} to call one tool, or {answer}."


# --------------------------------------------------------------------------------------------------------------------
# pydantic-ai messages -> chat messages
# --------------------------------------------------------------------------------------------------------------------


def render_messages(messages: Sequence[ModelMessage], *, system: str | None) -> list[ChatMessage]:
    """Render a (prepared) pydantic-ai history as chat-template messages, with `system` appended to the system turn.

    The leading system prompt parts of the first request, then `system`, make the one system message at the top.
    Later system prompt parts stay where they are (role `system`). Assistant tool calls become OpenAI-style
    `tool_calls` with `arguments` as an object (the Qwen template applies `tojson` to them), tool results role `tool`.
    The same history always renders the same, byte for byte, which is what lets the KV cache be reused.
    """
    leading: list[str] = []
    chat: list[ChatMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    if chat:
                        chat.append({"role": "system", "content": part.content})
                    else:
                        leading.append(part.content)
                elif isinstance(part, UserPromptPart):
                    chat.append({"role": "user", "content": _user_text(part.content)})
                elif isinstance(part, ToolReturnPart):
                    chat.append({"role": "tool", "content": part.model_response_str()})
                elif isinstance(part, RetryFeedbackPart):
                    chat.append({"role": "user", "content": part.model_response()})
                elif isinstance(part, RetryPromptPart):  # deprecated, still found in stored histories
                    role = "user" if part.tool_name is None else "tool"
                    chat.append({"role": role, "content": part.model_response()})
                # Other parts (settings and availability deltas) carry no text for the model.
        else:
            _append_response(chat, message)
    header = "\n\n".join(text for text in [*leading, system or ""] if text.strip())
    return ([{"role": "system", "content": header}] if header else []) + chat


def _append_response(chat: list[ChatMessage], response: ModelResponse) -> None:
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    calls = [
        {
            "id": part.tool_call_id,
            "type": "function",
            "function": {"name": part.tool_name, "arguments": part.args_as_dict()},
        }
        for part in response.parts
        if isinstance(part, ToolCallPart)
    ]
    if calls:
        chat.append({"role": "assistant", "content": text or None, "tool_calls": calls})
    elif text:
        chat.append({"role": "assistant", "content": text})


def _user_text(content: str | Sequence[Any]) -> str:
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for item in content:
        if isinstance(item, str):
            pieces.append(item)
        elif isinstance(item, TextContent):
            pieces.append(item.content)
        elif isinstance(item, CachePoint):
            continue
        elif isinstance(item, BinaryContent) and _is_text_media(item.media_type):
            pieces.append(item.data.decode("utf-8", errors="replace"))
        else:
            name = getattr(item, "identifier", None) or type(item).__name__
            pieces.append(f"[{name}: not shown, this model reads text only]")
    return "\n".join(pieces)


def _is_text_media(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in {"application/json", "application/xml", "application/yaml"}


# --------------------------------------------------------------------------------------------------------------------
# Generated text -> response parts
# --------------------------------------------------------------------------------------------------------------------


def parse_step(text: str, *, tool_names: Sequence[str], structured_reply: bool) -> list[ModelResponsePart]:
    """Turn the JSON the grammar produced into response parts.

    `{"name", "arguments"}` for a known tool -> `ToolCallPart`; `{"reply": ...}` -> `TextPart` (a structured reply
    as its JSON text). Anything else - truncated by `max_tokens`, say - comes back as a `TextPart` of the raw text
    (or of the reply recovered from it), so pydantic-ai can validate it and ask again instead of the run crashing.
    """
    try:
        data = json.loads(text, strict=False)  # the grammar lets raw newlines into strings
    except ValueError:
        recovered = None if structured_reply else _recover_reply(text)
        return [TextPart(recovered if recovered is not None else text)]
    if isinstance(data, dict) and data.get("name") in tool_names and isinstance(data.get("arguments"), dict):
        return [ToolCallPart(tool_name=data["name"], args=data["arguments"])]
    if isinstance(data, dict) and "reply" in data:
        reply = data["reply"]
        return [TextPart(reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False))]
    return [TextPart(text)]


def _recover_reply(text: str) -> str | None:
    """The text of a `{"reply": "...` cut short by `max_tokens`, if that is what `text` is."""
    head, sep, rest = text.partition('"reply"')
    if not sep or head.strip() != "{":
        return None
    rest = rest.lstrip().removeprefix(":").lstrip()
    if not rest.startswith('"'):
        return None
    body = rest[1:]
    # Drop characters from the end until what is left is a complete JSON string body (a cut escape, say).
    for end in range(len(body), max(len(body) - 8, -1), -1):
        try:
            return json.loads('"' + body[:end] + '"')
        except ValueError:
            continue
    return None


# --------------------------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StepStats:
    """What one request to the local model cost, as llama.cpp reports it.

    `reused_tokens` of the `prompt_tokens` came from the KV cache of the previous request (the longest common token
    prefix); `prompt_eval_tokens` were evaluated in batches (llama.cpp's perf counter); `generated_tokens` were
    sampled. Times are llama.cpp's own, in seconds.
    """

    prompt_tokens: int
    reused_tokens: int
    prompt_eval_tokens: int
    prompt_seconds: float
    generated_tokens: int
    generation_seconds: float
    finish_reason: str

    @property
    def generation_tokens_per_second(self) -> float:
        return self.generated_tokens / self.generation_seconds if self.generation_seconds else 0.0


@dataclass(frozen=True, kw_only=True)
class RenderedRequest:
    """What one request hands llama.cpp: the chat messages, the templated prompt, and the GBNF grammar (if any)."""

    chat: list[ChatMessage]
    prompt: str
    grammar: str | None


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """Everything one step needs from the pydantic-ai side, computed on the event loop."""

    chat: list[ChatMessage]
    kind: Literal["text", "object", "step"]  # free text, one JSON object, or the tool-call/reply protocol
    schema: dict[str, Any] | None
    tool_names: tuple[str, ...]
    structured_reply: bool
    sampling: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _Generation:
    text: str
    finish_reason: str
    stats: StepStats


class LocalModel(Model):
    """A GGUF chat model run in this process by llama.cpp, with grammar-forced tool calls and KV-cache reuse.

    The weights are loaded on the first request, or earlier by `load()` (blocking; a front end can run it in a thread
    while it shows progress). Temperature defaults to 0, so the same conversation gives the same step.
    `model_settings` honoured: `temperature`, `max_tokens`, `top_p`, `top_k`, `seed`, `stop_sequences`,
    `presence_penalty`, `frequency_penalty`, `logit_bias`, `tool_choice`.
    """

    unsupported_settings = frozenset({"timeout", "max_retries", "extra_headers", "extra_body"})

    def __init__(
        self,
        gguf_path: Path,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_tokens: int = 512,
        seed: int = 0,
        bounds: SchemaBounds = DEFAULT_BOUNDS,
        verbose: bool = False,
        settings: ModelSettings | None = None,
    ) -> None:
        """Describe the model; nothing is loaded yet.

        `n_threads` defaults to every core (llama-cpp-python's own default is half of them). `max_tokens` is the
        default cap on generated tokens per step. `bounds` limits the strings and arrays the grammar allows.
        """
        self.gguf_path = Path(gguf_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.max_tokens = max_tokens
        self.seed = seed
        self.bounds = bounds
        self.verbose = verbose
        self.last_stats: StepStats | None = None
        self._llama: Llama | None = None
        self._formatter: Any = None
        self._lock = threading.Lock()
        # Every generation runs on this one long-lived thread. llama.cpp's CPU backend uses OpenMP, whose thread team
        # belongs to the calling thread: a new caller thread per request (anyio's pool, one per event loop) built a
        # new team each time and generated ~25% slower than raw llama-cpp-python called from one thread.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="consulta-llama")
        self._checked_grammars: set[str] = set()
        profile = ModelProfile(
            supports_tools=True,
            supports_json_schema_output=True,
            supports_json_object_output=True,
            # The Qwen template renders a system message anywhere in the conversation.
            supports_inline_system_prompts=True,
            # The whole prompt is tokenized with special=True, so `<|im_start|>` in content would open a real turn.
            may_tokenize_special_tokens_in_content=True,
            supports_forced_tool_choice=True,
            # The grammar fixes the shape, but only a schema in the prompt tells the model what the fields mean.
            native_output_requires_schema_in_instructions=True,
            context_window=n_ctx,
        )
        super().__init__(settings=settings, profile=profile)

    @property
    def model_name(self) -> str:
        """The GGUF file name without its extension."""
        return self.gguf_path.stem

    @property
    def system(self) -> str:
        return "llama.cpp"

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def load(self) -> None:
        """Load the weights now (blocking, a few seconds; idempotent and thread-safe)."""
        with self._lock:
            self._load_locked()

    def close(self) -> None:
        """Free the weights and the KV cache; the next request loads them again."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
            self._llama = None
            self._formatter = None

    @property
    def llama(self) -> Llama:
        """The loaded `llama_cpp.Llama` (loading it if needed), for benchmarks and diagnostics."""
        self.load()
        assert self._llama is not None
        return self._llama

    def _load_locked(self) -> Llama:
        if self._llama is not None:
            return self._llama
        try:
            import llama_cpp
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as exc:  # pragma: no cover - depends on the install
            from consulta.runtime._errors import ConfigError

            raise ConfigError(
                "The local model needs llama-cpp-python: install it with `uv sync --extra local` "
                "(or pip install 'consulta[local]')."
            ) from exc
        if not self.gguf_path.is_file():
            from consulta.runtime._errors import ConfigError

            raise ConfigError(f"The model file {self.gguf_path} does not exist; check CONSULTA_GGUF or reinstall.")
        llama = llama_cpp.Llama(
            model_path=str(self.gguf_path),
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads,
            seed=self.seed,
            verbose=self.verbose,
        )
        template = llama.metadata.get("tokenizer.chat_template")
        if template is None:
            from consulta.runtime._errors import ConfigError

            llama.close()
            raise ConfigError(
                f"{self.gguf_path.name} has no chat template in its metadata; use an instruct (chat) GGUF."
            )
        eos_id, bos_id = llama.token_eos(), llama.token_bos()
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos_id) if eos_id != -1 else "",
            bos_token=llama._model.token_get_text(bos_id) if bos_id != -1 else "",
            stop_token_ids=[eos_id],
        )
        self._llama = llama
        return llama

    def render(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None = None,
        model_request_parameters: ModelRequestParameters | None = None,
    ) -> RenderedRequest:
        """What `request` would send for these arguments, without generating (loads the model for its template).

        For debugging prompts and for benchmarks that must feed raw llama-cpp-python the very same prompt.
        """
        settings, params = self.prepare_request(model_settings, model_request_parameters or ModelRequestParameters())
        plan = self._plan(messages, settings or {}, params)
        self.load()
        return RenderedRequest(
            chat=plan.chat,
            prompt=self._formatter(messages=plan.chat).prompt,
            grammar=schema_to_gbnf(plan.schema) if plan.schema is not None else None,
        )

    # ---- pydantic-ai entry point -----------------------------------------------------------------------------------

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Run one step: render, generate under the step's grammar, parse into a tool call or a text part."""
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        return await self._complete(messages, model_settings, params)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The whole step, then replayed as a stream (so event-stream handlers work).

        A call is only known once its grammar-constrained JSON is complete, so nothing is streamed token by token.
        """
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        response = await self._complete(messages, model_settings, params)
        yield _CompletedStream(model_request_parameters=params, _response=response)

    async def _complete(
        self, messages: list[ModelMessage], model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        plan = self._plan(messages, model_settings or {}, params)
        cancel = threading.Event()
        try:
            future = self._worker.submit(self._generate, plan, cancel)
            generation = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()  # the worker stops at its next token and releases the lock
            raise
        self.last_stats = generation.stats
        parts: list[ModelResponsePart]
        if plan.kind == "step":
            parts = parse_step(generation.text, tool_names=plan.tool_names, structured_reply=plan.structured_reply)
        else:
            parts = [TextPart(generation.text.strip() if plan.kind == "text" else generation.text)]
        is_call = any(isinstance(p, ToolCallPart) for p in parts)
        return ModelResponse(
            parts=parts,
            usage=RequestUsage(
                input_tokens=generation.stats.prompt_tokens,
                cache_read_tokens=generation.stats.reused_tokens,
                output_tokens=generation.stats.generated_tokens,
            ),
            model_name=self.model_name,
            provider_name=self.system,
            finish_reason="tool_call" if is_call else ("length" if generation.finish_reason == "length" else "stop"),
        )

    def _plan(self, messages: list[ModelMessage], settings: ModelSettings, params: ModelRequestParameters) -> _Plan:
        declared = list(params.declared_tool_defs.values())
        instructions = [p.content for p in (self._get_instruction_parts(messages, params) or [])]
        output_schema = params.output_object.json_schema if params.output_object is not None else None
        text_reply: Literal["text"] | Mapping[str, Any] = output_schema if output_schema is not None else "text"

        schema: dict[str, Any] | None
        kind: Literal["text", "object", "step"]
        callable_tools: list[ToolDefinition] = []
        if declared:
            kind = "step"
            choice = resolve_tool_choice(settings, params)
            mode, names = (choice, None) if isinstance(choice, str) else choice
            if mode == "none":
                allowed: list[ToolDefinition] = []
            else:
                allowed = [t for t in declared if names is None or t.name in names]
            callable_tools = allowed
            reply = text_reply if mode in ("auto", "none") else None
            schema = build_step_schema(allowed, reply=reply, bounds=self.bounds)
            # The tool list and format line describe every declared tool, whatever this step allows, so the system
            # prompt - the cached prefix - stays the same from step to step.
            format_reply = text_reply if params.allow_text_output or output_schema is not None else None
            system_tail = [describe_tools(declared), _format_instruction(format_reply)]
        elif output_schema is not None:
            kind, schema, system_tail = "object", bound_schema(output_schema, self.bounds), []
        else:
            kind, schema, system_tail = "text", None, []
        system = "\n\n".join([*instructions, *system_tail])
        return _Plan(
            chat=render_messages(messages, system=system or None),
            kind=kind,
            schema=schema,
            tool_names=tuple(t.name for t in callable_tools),
            structured_reply=output_schema is not None,
            sampling=self._sampling(settings),
        )

    def _sampling(self, settings: ModelSettings) -> dict[str, Any]:
        sampling: dict[str, Any] = {
            "max_tokens": settings.get("max_tokens", self.max_tokens),
            "temperature": settings.get("temperature", 0.0),
            "seed": settings.get("seed", self.seed),
            # llama-cpp-python's chat default is 1.1, which penalises the quotes and braces JSON repeats.
            "repeat_penalty": 1.0,
            "stop": list(settings.get("stop_sequences", [])),
        }
        for name in ("top_p", "top_k", "presence_penalty", "frequency_penalty"):
            if name in settings:
                sampling[name] = settings[name]  # type: ignore[literal-required]
        if bias := settings.get("logit_bias"):
            sampling["logit_bias"] = {int(token): float(value) for token, value in bias.items()}
        return sampling

    # ---- the blocking part, in a worker thread ---------------------------------------------------------------------

    def _generate(self, plan: _Plan, cancel: threading.Event) -> _Generation:
        import llama_cpp

        with self._lock:
            llama = self._load_locked()
            formatted = self._formatter(messages=plan.chat)
            tokens = llama.tokenize(formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True)
            max_tokens = plan.sampling["max_tokens"]
            if len(tokens) + min(max_tokens, 64) >= llama.n_ctx():
                raise ModelContextWindowExceededError(
                    self.model_name,
                    f"The conversation is {len(tokens)} tokens, too long for the context window of {llama.n_ctx()} "
                    "tokens: start a new conversation, shorten tool results, or raise n_ctx.",
                )
            reused = _reusable_prefix(llama, tokens)
            grammar = self._grammar(llama, plan.schema) if plan.schema is not None else None

            def stop_on_cancel(_ids: Any, _logits: Any) -> bool:
                return cancel.is_set()

            criteria = llama_cpp.StoppingCriteriaList([stop_on_cancel])
            if formatted.stopping_criteria is not None:
                criteria.extend(formatted.stopping_criteria)
            stop = plan.sampling["stop"] + (
                [formatted.stop] if isinstance(formatted.stop, str) else formatted.stop or []
            )
            llama_cpp.llama_perf_context_reset(llama.ctx)
            completion = llama.create_completion(
                prompt=tokens,
                grammar=grammar,
                stopping_criteria=criteria,
                **{**plan.sampling, "stop": stop},
            )
            perf = llama_cpp.llama_perf_context(llama.ctx)
        choice = completion["choices"][0]  # type: ignore[index]
        usage = completion["usage"]  # type: ignore[index]
        stats = StepStats(
            prompt_tokens=usage["prompt_tokens"],
            reused_tokens=reused,
            prompt_eval_tokens=perf.n_p_eval,
            prompt_seconds=perf.t_p_eval_ms / 1000,
            generated_tokens=usage["completion_tokens"],
            generation_seconds=perf.t_eval_ms / 1000,
            finish_reason=choice["finish_reason"] or "stop",
        )
        return _Generation(text=choice["text"], finish_reason=stats.finish_reason, stats=stats)

    def _grammar(self, llama: Llama, schema: dict[str, Any]) -> Any:
        import llama_cpp
        from llama_cpp.llama_grammar import LlamaGrammar

        gbnf = schema_to_gbnf(schema)
        if gbnf not in self._checked_grammars:
            # llama.cpp returns NULL for a grammar it cannot parse, and adding NULL to a sampler chain crashes the
            # process; parse it once on its own first so a bad schema is an exception, not a segfault.
            sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode(), b"root")
            if not sampler:
                raise ValueError(
                    "llama.cpp could not parse the grammar built from the tool schemas; "
                    f"simplify the offending tool's parameters. Grammar starts:\n{gbnf[:2000]}"
                )
            llama_cpp.llama_sampler_free(sampler)
            self._checked_grammars.add(gbnf)
        return LlamaGrammar.from_string(gbnf, verbose=self.verbose)


@dataclass
class _CompletedStream(StreamedResponse):
    """A finished `ModelResponse` as a `StreamedResponse`: one part-start event per part."""

    _response: ModelResponse

    def __post_init__(self) -> None:
        self._usage = self._response.usage
        self.finish_reason = self._response.finish_reason

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        for index, part in enumerate(self._response.parts):
            yield self._parts_manager.handle_part(vendor_part_id=index, part=part)

    async def close_stream(self) -> None:
        pass  # nothing is left open: the response was complete before the stream was made

    @property
    def model_name(self) -> str:
        return self._response.model_name or ""

    @property
    def provider_name(self) -> str | None:
        return self._response.provider_name

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._response.timestamp


def _reusable_prefix(llama: Llama, tokens: Sequence[int]) -> int:
    """How many of `tokens` llama-cpp-python will take from its KV cache (mirrors `Llama.generate`)."""
    cached = llama.input_ids[: llama.n_tokens]
    common = 0
    for a, b in zip(cached, tokens, strict=False):
        if a != b:
            break
        common += 1
    # A fully cached prompt still replays its last token to get fresh logits.
    return common - 1 if common == len(tokens) and common > 0 else common
