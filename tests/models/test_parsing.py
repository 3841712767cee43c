"""The local model's output read back: the JSON of one step as a tool call or text, never a crash."""

from __future__ import annotations

import json

from pydantic_ai.messages import TextPart, ToolCallPart

from consulta.models._parsing import parse_step

# ---- parsing the generated JSON -------------------------------------------------------------------------------------


def test_parse_tool_call_and_replies() -> None:
    [call] = parse_step('{"name": "q", "arguments": {"a": 1}}', tool_names=["q"], structured_reply=False)
    assert isinstance(call, ToolCallPart) and call.tool_name == "q" and call.args == {"a": 1}

    [text] = parse_step('{"reply": "line one\nline two"}', tool_names=["q"], structured_reply=False)
    assert text == TextPart("line one\nline two")

    [obj] = parse_step('{"reply": {"box": 3}}', tool_names=["q"], structured_reply=True)
    assert json.loads(obj.content) == {"box": 3}  # type: ignore[union-attr]


def test_parse_never_crashes_on_bad_output() -> None:
    assert parse_step('{"name": "nope", "arguments": {}}', tool_names=["q"], structured_reply=False) == [
        TextPart('{"name": "nope", "arguments": {}}')
    ]
    assert parse_step('{"name": "q", "argu', tool_names=["q"], structured_reply=False) == [
        TextPart('{"name": "q", "argu')
    ]
    # A reply cut off by max_tokens keeps the text written so far.
    assert parse_step('{"reply": "K562 is in box 3 \\u00', tool_names=["q"], structured_reply=False) == [
        TextPart("K562 is in box 3 ")
    ]
