"""What the local model wrote, read back: the JSON of one step (see `_schema`) as pydantic-ai response parts."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic_ai.messages import ModelResponsePart, TextPart, ToolCallPart

__all__ = ["parse_step"]


def parse_step(text: str, *, tool_names: Sequence[str], structured_reply: bool) -> list[ModelResponsePart]:
    """Turn the JSON the grammar produced into exactly one response part; never raises.

    `{"name", "arguments"}` for one of `tool_names` (the tools this step may call) -> `ToolCallPart`;
    `{"reply": ...}` -> `TextPart` (a structured reply as its JSON text). Anything else - truncated by `max_tokens`,
    say - comes back as a `TextPart` of the raw text, so pydantic-ai can validate it and ask again instead of the run
    crashing. A plain reply cut short keeps what was written of it; with `structured_reply` the raw text is kept
    instead, since only complete JSON can be validated.
    """
    try:
        data = json.loads(text, strict=False)  # lenient: a raw control character in a string is read, not refused
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
